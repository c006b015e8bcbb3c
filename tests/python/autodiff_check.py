"""Finite-difference checks shared by the autodiff tests."""

import numpy as np

import jax
import jax.numpy as jnp


def numeric_grad(f, x, h):
    """Central differences of the scalar function f at x (numpy in, float out)."""
    x = np.asarray(x)
    g = np.zeros(x.shape, dtype=np.float64)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * h)
    return g


def check_grad(f, x, *, dtype, rtol, atol, h):
    """jax.grad and jax.jvp of sum(w * f(x)) against central differences."""
    x = np.asarray(x, dtype=dtype)
    w = np.asarray(np.random.default_rng(0).uniform(0.5, 1.5, np.shape(f(jnp.asarray(x)))), dtype=dtype)

    def scalar(v):
        return jnp.sum(jnp.asarray(w) * f(jnp.asarray(v, dtype=dtype)))
    expected = numeric_grad(scalar, x, h)
    got = np.asarray(jax.grad(scalar)(jnp.asarray(x)))
    assert got.shape == x.shape
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    # forward mode along a random direction: <grad, v>
    v = np.asarray(np.random.default_rng(1).uniform(-1, 1, x.shape), dtype=dtype)
    _, tangent = jax.jvp(scalar, (jnp.asarray(x),), (jnp.asarray(v),))
    np.testing.assert_allclose(float(tangent), float(np.sum(expected * v)), rtol=rtol, atol=atol * max(1, x.size))
