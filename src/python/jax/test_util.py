"""jax.test_util.check_grads: a function's derivatives against finite
differences (forward mode) and against each other (reverse mode), as JAX
checks them; chex.assert_numerical_grads calls it."""

import numpy as np

import jax.numpy as jnp
from jax._src import tree_util
from jax._src.autodiff import jvp, vjp

_DEFAULT_EPS = 1e-4


def _rand_like(rng, x):
    x = np.asarray(x)
    return rng.normal(size=x.shape).astype(x.dtype if x.dtype.kind == 'f' else np.float32)


def _inner(a, b):
    return sum(float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
               for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b)))


def _check_close(what, x, y, atol, rtol):
    for a, b in zip(tree_util.tree_leaves(x), tree_util.tree_leaves(y)):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), atol=atol, rtol=rtol,
                                   err_msg=f'check_grads: {what}')


def _scaled_add(xs, vs, c):
    return tuple(tree_util.tree_map(lambda x, v: x + c * v, x, v) for x, v in zip(xs, vs))


def check_jvp(f, args, atol=None, rtol=None, eps=_DEFAULT_EPS, rng=None):
    rng = rng or np.random.default_rng(0)
    tangents = tuple(tree_util.tree_map(lambda x: jnp.asarray(_rand_like(rng, x)), a) for a in args)
    _, out_tangent = jvp(f, args, tangents)
    plus, minus = f(*_scaled_add(args, tangents, eps)), f(*_scaled_add(args, tangents, -eps))
    numeric = tree_util.tree_map(lambda p, m: (np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps),
                                 plus, minus)
    _check_close('JVP against finite differences', out_tangent, numeric, atol or 1e-2, rtol or 1e-2)


def check_vjp(f, args, atol=None, rtol=None, eps=_DEFAULT_EPS, rng=None):
    rng = rng or np.random.default_rng(1)
    tangents = tuple(tree_util.tree_map(lambda x: jnp.asarray(_rand_like(rng, x)), a) for a in args)
    out, pullback = vjp(f, *args)
    cotangent = tree_util.tree_map(lambda y: jnp.asarray(_rand_like(rng, y)), out)
    _, out_tangent = jvp(f, args, tangents)
    in_cotangents = pullback(cotangent)
    # <u, J v> == <J^T u, v>
    _check_close('VJP against JVP', np.float64(_inner(in_cotangents, tangents)),
                 np.float64(_inner(cotangent, out_tangent)), atol or 1e-2, rtol or 1e-2)


def check_grads(f, args, order, modes=('fwd', 'rev'), atol=None, rtol=None, eps=None):
    """Checks f's derivatives up to `order` at `args` (a tuple) in the given modes."""
    args = tuple(args)
    eps = eps or _DEFAULT_EPS

    def check(f, order):
        if 'fwd' in modes:
            check_jvp(f, args, atol, rtol, eps)
            if order > 1:
                check(lambda *xs: jvp(f, xs, tuple(tree_util.tree_map(jnp.ones_like, x) for x in xs))[1], order - 1)
        if 'rev' in modes:
            check_vjp(f, args, atol, rtol, eps)
            if order > 1:
                def first_derivative(*xs):
                    out, pullback = vjp(f, *xs)
                    return pullback(tree_util.tree_map(jnp.ones_like, out))
                check(first_derivative, order - 1)
    check(f, order)
