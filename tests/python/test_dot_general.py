"""lax.dot_general, jnp.tensordot and jnp.einsum: one batched matmul on BLAS
per contraction, JAX's axis order (batch, lhs free, rhs free), JAX's error
for mismatched dimensions, and gradients through the lowering."""

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
B = RNG.standard_normal((2, 5, 3, 6)).astype(np.float32)


def test_dot_general_batch_then_free_axes():
    # batch axis 0 with 0; contract lhs 3 with rhs 1 and lhs 1 with rhs 2
    out = lax.dot_general(A, B, (((3, 1), (1, 2)), ((0,), (0,))))
    assert out.shape == (2, 4, 6)
    np.testing.assert_allclose(np.asarray(out), np.einsum('bjka,bajd->bkd', A, B), rtol=1e-5, atol=1e-5)


def test_dot_general_is_one_primitive():
    text = str(jax.make_jaxpr(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))))(A[0, 0], B[0, :, 0]))
    assert text.count('dot_general') == 1
    assert '= mul ' not in text and 'reduce_sum' not in text


def test_dot_general_mismatched_contraction_is_jax_error():
    with pytest.raises(TypeError, match=r'dot_general requires contracting dimensions to have the same shape, '
                                        r'got \(5,\) and \(3,\)\.'):
        lax.dot_general(A, B, (((3,), (2,)), ((), ())))


def test_tensordot_matches_numpy():
    np.testing.assert_allclose(np.asarray(jnp.tensordot(A, B, axes=([1, 3], [2, 1]))),
                               np.tensordot(A, B, axes=([1, 3], [2, 1])), rtol=1e-5, atol=1e-5)
    m, n = A[0, 0], B[0, :, 0]
    np.testing.assert_allclose(np.asarray(jnp.tensordot(m, n, axes=1)), m @ n, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('spec, shapes', [
    ('ij,jk->ik', [(4, 5), (5, 6)]),
    ('bij,bjk->bik', [(2, 4, 5), (2, 5, 3)]),
    ('ij,jk,kl->il', [(3, 4), (4, 5), (5, 2)]),
    ('i,j->ij', [(3,), (4,)]),
    ('ij,ij->i', [(3, 4), (3, 4)]),
    ('ijk->', [(2, 3, 4)]),
    ('ij->ji', [(3, 4)]),
    ('ii->i', [(4, 4)]),
    ('bij,jk', [(2, 3, 4), (4, 5)]),
])
def test_einsum_matches_numpy(spec, shapes):
    ops = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    np.testing.assert_allclose(np.asarray(jnp.einsum(spec, *ops)), np.einsum(spec, *ops), rtol=1e-5, atol=1e-5)


def test_einsum_gradient_and_pmap():
    x, w = A[0, 0], B[0, :, 0]
    g = jax.grad(lambda v: jnp.sum(jnp.einsum('bi,io->bo', x, v) ** 2))(w)
    np.testing.assert_allclose(np.asarray(g), 2 * x.T @ (x @ w), rtol=1e-4, atol=1e-4)
    n = jax.device_count()
    xs = RNG.standard_normal((n, 4, 5)).astype(np.float32)
    out = jax.pmap(lambda a, v: jnp.einsum('bi,io->bo', a, v), in_axes=(0, None))(xs, w)
    np.testing.assert_allclose(np.asarray(out), xs @ w, rtol=1e-5, atol=1e-5)
