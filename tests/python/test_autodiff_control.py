"""Gradients through lax control flow, as JAX defines them: the taken branch
of a cond/switch, fori_loop with static bounds and scan in reverse mode,
while_loop in forward mode only (reverse mode fails with JAX's error)."""

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

from autodiff_check import check_grad

X = np.random.default_rng(7).uniform(-1.5, 1.5, (2, 3))


def tol32(f, x):
    check_grad(f, x, dtype=np.float32, rtol=2e-2, atol=2e-2, h=1e-2)


def test_cond_takes_the_gradient_of_the_taken_branch():
    f = lambda x: lax.cond(x > 0, lambda v: v ** 3, lambda v: jnp.sin(v), x)
    assert float(jax.grad(f)(2.0)) == 12.0
    assert float(jax.grad(f)(-1.0)) == pytest.approx(np.cos(-1.0), rel=1e-6)
    assert float(jax.jvp(f, (2.0,), (0.5,))[1]) == 6.0


def test_cond_branches_that_capture_outer_values():
    def f(x):
        w = x * 2.0
        return lax.cond(jnp.sum(x) > 0, lambda v: jnp.sum(v * w), lambda v: jnp.sum(v) + jnp.sum(w ** 2), x)
    tol32(f, X)
    tol32(f, -np.abs(X))


def test_switch():
    f = lambda x: lax.switch(1, [lambda v: v, lambda v: v * v, lambda v: -v], x)
    assert float(jax.grad(lambda x: jnp.sum(f(x)))(3.0)) == 6.0
    tol32(lambda x: lax.switch(jnp.argmax(x[0]), [jnp.sin, jnp.cos, jnp.tanh], x), X)


def test_fori_loop_with_static_bounds_reverse_and_forward():
    f = lambda p: lax.fori_loop(0, 4, lambda i, c: c * p + i, p)
    # c0 = p, c1 = p^2, c2 = p^3 + 1, c3 = p^4 + p + 2, c4 = p^5 + p^2 + 2p + 3
    assert float(jax.grad(f)(2.0)) == 5 * 16 + 2 * 2 + 2
    assert float(jax.jvp(f, (2.0,), (1.0,))[1]) == 86.0
    tol32(lambda x: lax.fori_loop(1, 3, lambda i, c: jnp.sin(c) * x + i, x), X)


def test_scan_reverse_mode_with_carry_and_outputs():
    def f(x):
        def step(c, row):
            c = c * row + jnp.tanh(c)
            return c, c ** 2
        final, ys = lax.scan(step, x[0], x)
        return jnp.sum(final) + jnp.sum(ys)
    tol32(f, X)
    tol32(lambda x: lax.scan(lambda c, r: (c + r, c * r), x[0], x, reverse=True)[1], X)


def test_while_loop_forward_mode_works():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]
    out, t = jax.jvp(f, (2.0,), (1.0,))
    assert (float(out), float(t)) == (8.0, 12.0)  # x^3, 3x^2
    assert float(jax.jacfwd(f)(2.0)) == 12.0


def test_while_loop_reverse_mode_is_jax_error():
    f = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    with pytest.raises(ValueError, match='Reverse-mode differentiation does not work for lax.while_loop or '
                                         'lax.fori_loop with dynamic start/stop values'):
        jax.grad(f)(1.0)


def test_fori_loop_with_traced_bounds_reverse_mode_is_jax_error():
    f = jax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x))
    with pytest.raises(ValueError, match='Try using lax.scan, or using fori_loop with static start/stop'):
        jax.grad(f)(1.0, 3)


def test_python_control_flow_in_eager_grad_follows_the_values():
    def f(x):
        if x < 3:
            return 3.0 * x ** 2
        return -4.0 * x
    assert float(jax.grad(f)(2.0)) == 12.0
    assert float(jax.grad(f)(4.0)) == -4.0
    n = 0
    x = jnp.float32(1.5)
    while float(x) < 10:  # float() of the primal, as JAX allows under grad
        x = x * 2
        n += 1
    assert n == 3


def test_python_if_inside_jit_under_grad_is_the_tracer_error():
    @jax.jit
    def f(x):
        return x if x > 0 else -x
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.grad(f)(1.0)


def test_grad_of_grad_through_a_loop():
    f = lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0)  # x^3
    assert float(jax.grad(jax.grad(f))(2.0)) == 12.0
