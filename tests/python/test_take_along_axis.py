"""jnp.take_along_axis: numpy's results in bounds, JAX's fill and clip modes
beyond them, broadcasting of the other axes, JAX's errors, and the gradient a
classification loss takes through it."""

import numpy as np
import pytest

import jax
import jax.numpy as jnp

RNG = np.random.default_rng(3)
X = RNG.standard_normal((3, 5, 4)).astype(np.float32)


@pytest.mark.parametrize('axis', [0, 1, 2, -1])
def test_matches_numpy_in_bounds(axis):
    n = X.shape[axis]
    shape = list(X.shape)
    shape[axis] = 6
    idx = RNG.integers(-n, n, size=shape)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(X, idx, axis=axis)),
                                  np.take_along_axis(X, idx, axis=axis))


def test_other_axes_broadcast_and_axis_none():
    idx = np.array([[[0], [3]]])  # (1, 2, 1): broadcast over axes 0 and 2
    out = jnp.take_along_axis(X, idx, axis=1)
    assert out.shape == (3, 2, 4)
    np.testing.assert_array_equal(np.asarray(out), np.take_along_axis(X, np.broadcast_to(idx, (3, 2, 4)), axis=1))
    flat = np.array([0, 59, -1, 7])
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(X, flat, axis=None)),
                                  np.take_along_axis(X, flat, axis=None))


def test_out_of_bounds_fill_and_clip():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    idx = np.array([[3, 0], [-4, 2]])
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(a, idx, axis=1)), [[np.nan, 0], [np.nan, 5]])
    assert jnp.take_along_axis(a, idx, axis=1, mode='clip').tolist() == [[2.0, 0.0], [3.0, 5.0]]
    assert jnp.take_along_axis(a, idx, axis=1, fill_value=-1).tolist() == [[-1.0, 0.0], [-1.0, 5.0]]
    ints = jnp.take_along_axis(np.array([[1, 2]], np.int32), np.array([[5, 1]]), axis=1)
    assert ints.tolist() == [[np.iinfo(np.int32).min, 2]]


def test_errors_are_jax_errors():
    with pytest.raises(TypeError, match='take_along_axis indices must be of integer type, got float32'):
        jnp.take_along_axis(X, np.zeros((3, 1, 4), np.float32), axis=1)
    with pytest.raises(ValueError, match=r'indices and arr must have the same number of dimensions; 2 vs\. 3'):
        jnp.take_along_axis(X, np.zeros((3, 1), np.int32), axis=1)
    with pytest.raises(ValueError, match='when axis=None, `indices` must have a single dimension.'):
        jnp.take_along_axis(X, np.zeros((3, 1), np.int32), axis=None)


def test_cross_entropy_gradient_and_pmap():
    logits = RNG.standard_normal((4, 3)).astype(np.float32)
    labels = np.array([2, 0, 1, 2])

    def loss(z):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(z), labels[:, None], axis=1))
    g = np.asarray(jax.grad(loss)(logits))
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(g, (p - np.eye(3)[labels]) / 4, rtol=1e-5, atol=1e-6)
    n = jax.device_count()
    zs = RNG.standard_normal((n, 4, 3)).astype(np.float32)
    out = jax.pmap(lambda z: jnp.take_along_axis(z, labels[:, None], axis=1))(zs)
    np.testing.assert_array_equal(np.asarray(out), np.take_along_axis(zs, np.broadcast_to(labels[:, None], (n, 4, 1)),
                                                                      axis=2))
