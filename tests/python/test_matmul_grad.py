"""matmul's gradients are JAX's transposed products: a's cotangent the
cotangent's dot_general with b over b's free axis, b's the cotangent's with a
then a transpose back (the plan runs that pair as one product the other way
round, no copy: execution_plan_test.cc); they equal the products of the
explicitly transposed arrays, and second derivatives go through the products'
own rules."""

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


def test_the_cotangents_are_jax_products():
    text = str(jax.make_jaxpr(jax.grad(lambda a, b: jnp.sum(a @ b), argnums=(0, 1)))(A, B))
    # real JAX 0.8.1's equations for the two cotangents
    assert ('f:f32[5,3] = dot_general[\n'
            '      dimension_numbers=(([1], [1]), ([], []))\n'
            '      preferred_element_type=float32\n'
            '    ] e b\n') in text, text
    assert ('g:f32[4,3] = dot_general[\n'
            '      dimension_numbers=(([0], [0]), ([], []))\n'
            '      preferred_element_type=float32\n'
            '    ] e a\n'
            '    h:f32[3,4] = transpose[permutation=(1, 0)] g\n'
            '  in (f, h) }') in text, text


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
