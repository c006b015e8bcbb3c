"""jnp.power with a concrete integer exponent is lax.integer_pow, as in JAX:
floats by binary exponentiation with multiplications (x ** 2 is x * x bit for
bit, not a call to pow), integers exact; gradients n * x ** (n - 1)."""

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

X = np.array([1.1, -2.3, 3.7, 1e-3, 12345.678], np.float32)


def test_square_is_one_multiplication():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(x ** 2), X * X)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v ** 2)(x)), X * X)
    np.testing.assert_array_equal(np.asarray(lax.integer_pow(x, 2)), X * X)


def test_higher_powers_follow_binary_exponentiation():
    x = jnp.asarray(X)
    sq = X * X
    np.testing.assert_array_equal(np.asarray(x ** 3), X * sq)
    np.testing.assert_array_equal(np.asarray(x ** 5), X * (sq * sq))
    np.testing.assert_array_equal(np.asarray(x ** -2), np.float32(1) / sq)
    np.testing.assert_array_equal(np.asarray(x ** 0), np.ones_like(X))
    assert (x ** 3).dtype == jnp.float32


def test_integer_bases_and_float_exponents_keep_their_paths():
    i = jnp.array([2, -3, 7], jnp.int32)
    np.testing.assert_array_equal(np.asarray(i ** 3), [8, -27, 343])
    assert (i ** 3).dtype == jnp.int32
    pos = np.abs(X[:3])
    np.testing.assert_allclose(np.asarray(jnp.power(jnp.asarray(pos), 2.5)), np.power(pos, np.float32(2.5)),
                               rtol=1e-6)


def test_gradient_of_a_cube():
    g = jax.grad(lambda v: jnp.sum(v ** 3))(jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(g), 3 * X.astype(np.float64) ** 2, rtol=1e-6)
