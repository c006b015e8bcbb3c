"""jax.grad and friends as a user calls them: argnums, has_aux, pytrees of
parameters, vjp/jvp/linearize, Jacobians and Hessians, stop_gradient,
custom_jvp/custom_vjp, checkpoint, and JAX's errors for misuse."""

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax


def test_grad_argnums_and_has_aux():
    f = lambda x, y: (x * y ** 2, {'x': x})
    g, aux = jax.grad(f, argnums=1, has_aux=True)(3.0, 2.0)
    assert float(g) == 12.0
    assert float(aux['x']) == 3.0
    (value, aux), (gx, gy) = jax.value_and_grad(f, argnums=(0, 1), has_aux=True)(3.0, 2.0)
    assert (float(value), float(gx), float(gy)) == (12.0, 4.0, 12.0)
    assert float(aux['x']) == 3.0


def test_grad_over_dicts_lists_and_tuples():
    params = {'w': jnp.array([1.0, 2.0]), 'layers': [(jnp.array(3.0), jnp.array([1.0]))]}

    def loss(p):
        (a, b), = p['layers']
        return jnp.sum(p['w'] ** 2) * a + jnp.sum(b)
    g = jax.grad(loss)(params)
    assert g['w'].tolist() == [6.0, 12.0]
    assert float(g['layers'][0][0]) == 5.0
    assert g['layers'][0][1].tolist() == [1.0]


class Linear(NamedTuple):
    w: jnp.ndarray
    b: jnp.ndarray


@jax.tree_util.register_pytree_node_class
@dataclasses.dataclass
class Scale:
    s: jnp.ndarray

    def tree_flatten(self):
        return (self.s,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_grad_over_namedtuple_and_registered_dataclass():
    def loss(p, scale, x):
        return jnp.sum((x @ p.w + p.b) * scale.s)
    x = jnp.array([[1.0, 2.0]])
    g, gs = jax.grad(loss, argnums=(0, 1))(Linear(jnp.ones((2, 3)), jnp.zeros(3)), Scale(jnp.float32(2.0)), x)
    assert isinstance(g, Linear) and isinstance(gs, Scale)
    assert g.w.tolist() == [[2.0] * 3, [4.0] * 3]
    assert g.b.tolist() == [2.0] * 3
    assert float(gs.s) == 9.0


def test_vjp_jvp_linearize():
    f = lambda x: (jnp.sin(x), x ** 2)
    x = jnp.array([0.0, 1.0])
    out, pullback = jax.vjp(f, x)
    (ct,) = pullback((jnp.ones(2), jnp.array([1.0, 0.5])))
    np.testing.assert_allclose(np.asarray(ct), np.cos([0.0, 1.0]) + np.array([0.0, 1.0]), rtol=1e-6)
    out, tangents = jax.jvp(f, (x,), (jnp.ones(2),))
    np.testing.assert_allclose(np.asarray(tangents[1]), [0.0, 2.0])
    y, f_jvp = jax.linearize(lambda v: jnp.exp(v) * 2, x)
    np.testing.assert_allclose(np.asarray(f_jvp(jnp.array([1.0, 2.0]))), 2 * np.exp([0.0, 1.0]) * [1, 2], rtol=1e-6)


def test_jacobians_and_hessian():
    f = lambda x: jnp.array([x[0] * x[1], jnp.sin(x[2])])
    x = jnp.array([1.0, 2.0, 0.0])
    expected = [[2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert jax.jacfwd(f)(x).tolist() == expected
    assert jax.jacrev(f)(x).tolist() == expected
    assert jax.jacobian(f)(x).shape == (2, 3)
    h = jax.hessian(lambda v: v[0] ** 2 * v[1] + v[1] ** 3)(jnp.array([1.0, 2.0]))
    assert h.tolist() == [[4.0, 2.0], [2.0, 12.0]]
    j = jax.jacrev(lambda p: {'a': p['x'] * 2})({'x': jnp.ones(2)})
    assert j['a']['x'].tolist() == [[2.0, 0.0], [0.0, 2.0]]


def test_stop_gradient_and_checkpoint():
    f = lambda x: x * lax.stop_gradient(x) + jax.checkpoint(jnp.sin)(x)
    assert float(jax.grad(f)(0.0)) == 1.0
    assert float(jax.grad(f)(2.0)) == pytest.approx(2.0 + np.cos(2.0), rel=1e-6)


def test_custom_jvp():
    @jax.custom_jvp
    def safe_log1pexp(x):
        return jnp.log1p(jnp.exp(x))

    @safe_log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return safe_log1pexp(x), t * (1 - 1 / (1 + jnp.exp(x)))
    assert float(jax.grad(safe_log1pexp)(0.0)) == 0.5
    assert float(jax.jvp(safe_log1pexp, (0.0,), (2.0,))[1]) == 1.0
    assert float(jax.grad(lambda x: safe_log1pexp(x) * 2)(100.0)) == 2.0  # the rule, not the overflow

    @jax.custom_jvp
    def f(x, y):
        return x * y
    f.defjvps(lambda t, ans, x, y: t * 10.0, lambda t, ans, x, y: t * 100.0)
    assert [float(g) for g in jax.grad(f, (0, 1))(1.0, 1.0)] == [10.0, 100.0]


def test_custom_vjp_with_nondiff_argnums():
    from functools import partial

    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def clip_gradient(limit, x):
        return x

    def fwd(limit, x):
        return x, None

    def bwd(limit, _, g):
        return (jnp.clip(g, -limit, limit),)
    clip_gradient.defvjp(fwd, bwd)
    assert float(jax.grad(lambda x: 5.0 * clip_gradient(2.0, x))(1.0)) == 2.0
    assert float(clip_gradient(2.0, 7.0)) == 7.0
    with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp function"):
        jax.jvp(lambda x: clip_gradient(2.0, x), (1.0,), (1.0,))


def test_custom_vjp_inside_pmap():
    @jax.custom_vjp
    def double_grad(x):
        return x

    double_grad.defvjp(lambda x: (x, None), lambda _, g: (2 * g,))
    g = jax.pmap(jax.grad(lambda x: double_grad(x) * 3.0))(jnp.ones(8))
    assert g.tolist() == [6.0] * 8


def test_relu_gradient_at_zero_is_zero_as_in_jax():
    assert jax.grad(lambda x: jnp.sum(jax.nn.relu(x)))(jnp.array([-1.0, 0.0, 2.0])).tolist() == [0.0, 0.0, 1.0]


def test_misuse_gets_jax_errors():
    with pytest.raises(TypeError, match='grad requires real- or complex-valued inputs .* but got int32'):
        jax.grad(lambda x: x * 2.0)(3)
    with pytest.raises(TypeError, match=r'Output had shape: \(1,\). To get the gradient, extract the scalar with '
                                        r'output.reshape\(\(\)\) or output\[0\]'):
        jax.grad(lambda x: x * 2)(jnp.ones(1))
    with pytest.raises(TypeError, match='grad requires real-valued outputs'):
        jax.grad(lambda x: (x > 0).astype(jnp.int32))(1.0)
    with pytest.raises(TypeError, match='differentiating with respect to argnums=1 requires at least 2 positional '
                                        'arguments to be passed by the caller, but got only 1'):
        jax.grad(lambda x, y=1.0: x * y, argnums=1)(1.0)
    with pytest.raises(TypeError, match='has_aux=True requires the function to return a pair'):
        jax.grad(lambda x: x, has_aux=True)(1.0)
    with pytest.raises(ValueError, match='jvp called with different primal and tangent shapes'):
        jax.jvp(jnp.sin, (jnp.ones(2),), (jnp.ones(3),))
    with pytest.raises(TypeError, match='primal and tangent arguments to jax.jvp do not match'):
        jax.jvp(jnp.sin, (jnp.ones(2),), (jnp.ones(2, jnp.int32),))
    _, pullback = jax.vjp(lambda x: (x, x), 1.0)
    with pytest.raises(ValueError, match='unexpected tree structure of argument to vjp function'):
        pullback(1.0)


def test_every_primitive_has_a_rule_or_no_derivative():
    import _spmd
    from jax._src.autodiff import rules
    # Comparisons, logic, integer results, rounding (derivative zero, as in
    # JAX) and effects need no rule; every other primitive has one.
    no_derivative = {'and', 'argmax', 'argmin', 'axis_index', 'ceil', 'iota', 'debug_breakpoint', 'debug_callback',
                     'debug_print', 'decision', 'eq', 'floor', 'floor_div', 'ge', 'gt', 'is_finite', 'is_inf',
                     'le', 'lt', 'ne', 'not', 'or', 'randint_bits', 'random_unit', 'reduce_and', 'reduce_or', 'round',
                     'sign', 'stop_gradient', 'threefry_bits', 'threefry_fold_in', 'threefry_split', 'xor'}
    assert sorted(set(_spmd.primitive_names()) - set(rules._JVP) - no_derivative) == []
    assert jax.grad(lambda x: jnp.sum(jnp.floor(x) * x))(jnp.array([1.5, -2.5])).tolist() == [1.0, -3.0]


def test_custom_rules_are_recorded_once_per_function_not_per_trace():
    from jax._src.autodiff import custom

    @jax.custom_vjp
    def scaled(x):
        return x

    scaled.defvjp(lambda x: (x, None), lambda _, g: (2.0 * g,))
    before = len(custom._calls)
    for _ in range(20):  # an eager training loop traces the gradient every step
        g = jax.grad(lambda x: jnp.sum(scaled(x) * 3.0))(jnp.arange(3.0))
    assert g.tolist() == [6.0, 6.0, 6.0]
    assert len(custom._calls) == before + 1
