"""matmul's gradients read the transposed operands in place (the matmul
primitive's transpose_a / transpose_b, JAX's dot_general contracting the other
axis) instead of copying a transpose, and equal the products of the explicitly
transposed arrays; second derivatives go through the transposed products' own rules."""

import numpy as np

import jax
import jax.numpy as jnp

_rng = np.random.default_rng(7)
A = _rng.uniform(-1, 1, (5, 3)).astype(np.float32)
B = _rng.uniform(-1, 1, (3, 4)).astype(np.float32)


def test_gradients_are_the_transposed_products():
    ga, gb = jax.grad(lambda a, b: jnp.sum(jnp.tanh(a @ b)), argnums=(0, 1))(A, B)
    g = 1 - np.tanh(A @ B) ** 2
    np.testing.assert_allclose(np.asarray(ga), g @ B.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), A.T @ g, rtol=1e-5, atol=1e-6)


def test_no_transpose_is_materialized():
    text = str(jax.make_jaxpr(jax.grad(lambda a, b: jnp.sum(a @ b), argnums=(0, 1)))(A, B))
    assert 'transpose_b=True' in text and 'transpose_a=True' in text
    assert 'transpose[' not in text and ' transpose ' not in text


def test_batches_and_vectors():
    batch = _rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    gb = jax.grad(lambda b: jnp.sum(batch @ b))(B)  # B broadcast over the batch: summed back
    np.testing.assert_allclose(np.asarray(gb), sum(batch[i].T @ np.ones((5, 4), np.float32) for i in range(2)),
                               rtol=1e-5)
    v = A[0]
    gv = jax.grad(lambda x: jnp.sum(jnp.sin(x @ B)))(jnp.asarray(v[:3]))
    np.testing.assert_allclose(np.asarray(gv), B @ np.cos(v[:3] @ B), rtol=1e-5)


def test_second_order_through_transposed_products():
    # f(a) = sum((a @ B) ** 2): the Hessian is 2 (B B^T) on each row's block.
    h = jax.hessian(lambda a: jnp.sum((a @ B) ** 2))(A)
    bbt = 2 * (B @ B.T)
    expected = np.zeros((5, 3, 5, 3), np.float32)
    for i in range(5):
        expected[i, :, i, :] = bbt
    np.testing.assert_allclose(np.asarray(h), expected, rtol=1e-5, atol=1e-6)
    # forward over reverse, with b transposed in the cotangent's product
    jf = jax.jacfwd(jax.grad(lambda b: jnp.sum((A @ b) ** 2)))(B)
    ata = 2 * (A.T @ A)
    expected_b = np.zeros((3, 4, 3, 4), np.float32)
    for j in range(4):
        expected_b[:, j, :, j] = ata
    np.testing.assert_allclose(np.asarray(jf), expected_b, rtol=1e-5, atol=1e-6)
