"""lax.conv_general_dilated, lax.conv, jnp.convolve and jnp.correlate against
a direct numpy reference: strides, padding (strings, explicit, negative),
input and kernel dilation, feature and batch groups, dimension numbers,
1-3 spatial dimensions; JAX's errors; gradients and pmap."""

import itertools

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

RNG = np.random.default_rng(7)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def reference(x, w, strides, padding, lhs_dilation=None, rhs_dilation=None, groups=1, batch_groups=1):
    """XLA's convolution, one output element at a time, in float64, for
    (N, C, spatial...) inputs and (O, I, spatial...) kernels."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    nsp = x.ndim - 2
    lhs_dilation = lhs_dilation or (1,) * nsp
    rhs_dilation = rhs_dilation or (1,) * nsp
    for d, k in enumerate(lhs_dilation):  # zeros between the input's elements
        shape = list(x.shape)
        shape[2 + d] = (shape[2 + d] - 1) * k + 1
        spread = np.zeros(shape)
        index = [slice(None)] * x.ndim
        index[2 + d] = slice(None, None, k)
        spread[tuple(index)] = x
        x = spread
    for d, (lo, hi) in enumerate(padding):
        widths = [(0, 0)] * x.ndim
        widths[2 + d] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        index = [slice(None)] * x.ndim
        index[2 + d] = slice(max(-lo, 0), x.shape[2 + d] - max(-hi, 0))
        x = x[tuple(index)]
    n, c = x.shape[:2]
    o, i = w.shape[:2]
    span = [(k - 1) * r + 1 for k, r in zip(w.shape[2:], rhs_dilation)]
    out_sp = [max(0, (x.shape[2 + d] - span[d]) // strides[d] + 1) for d in range(nsp)]
    out = np.zeros((n // batch_groups, o) + tuple(out_sp))
    og, ob = o // groups, o // batch_groups
    for b, f in itertools.product(range(n // batch_groups), range(o)):
        g = f // og
        src = b + (f // ob) * (n // batch_groups) if batch_groups > 1 else b
        for p in itertools.product(*(range(s) for s in out_sp)):
            acc = 0.0
            for k in itertools.product(*(range(s) for s in w.shape[2:])):
                pos = tuple(p[d] * strides[d] + k[d] * rhs_dilation[d] for d in range(nsp))
                for ci in range(i):
                    acc += w[(f, ci) + k] * x[(src, g * i + ci) + pos]
            out[(b, f) + p] = acc
    return out


def check(out, want):
    assert out.dtype == jnp.float32
    assert out.shape == want.shape
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('strides,padding,pads', [
    ((1, 1), 'VALID', [(0, 0), (0, 0)]),
    ((1, 1), 'SAME', [(1, 1), (1, 1)]),
    ((2, 2), 'SAME', [(0, 1), (1, 1)]),        # odd totals: the extra row after, as JAX
    ((2, 2), 'SAME_LOWER', [(1, 0), (1, 1)]),  # ... or before
    ((2, 1), [(2, 0), (-1, 1)], [(2, 0), (-1, 1)]),
])
def test_conv_2d_matches_reference(strides, padding, pads):
    x, w = f32(2, 3, 6, 7), f32(4, 3, 3, 3)
    check(lax.conv_general_dilated(x, w, strides, padding), reference(x, w, strides, pads))


def test_conv_dilations_and_dimension_numbers():
    x, w = f32(2, 5, 6, 3), f32(2, 3, 3, 4)  # NHWC input, HWIO kernel
    out = lax.conv_general_dilated(x, w, (1, 2), [(1, 2), (0, 1)], lhs_dilation=(2, 1), rhs_dilation=(1, 2),
                                   dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    want = reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 2), [(1, 2), (0, 1)],
                     lhs_dilation=(2, 1), rhs_dilation=(1, 2))
    check(out, want.transpose(0, 2, 3, 1))


def test_conv_feature_groups_depthwise_and_batch_groups():
    x, w = f32(2, 6, 5, 5), f32(6, 2, 3, 3)
    check(lax.conv_general_dilated(x, w, (1, 1), 'SAME', feature_group_count=3),
          reference(x, w, (1, 1), [(1, 1), (1, 1)], groups=3))
    x, w = f32(1, 4, 7), f32(4, 1, 3)  # depthwise 1-D
    check(lax.conv_general_dilated(x, w, (1,), 'VALID', feature_group_count=4),
          reference(x, w, (1,), [(0, 0)], groups=4))
    x, w = f32(4, 3, 5), f32(6, 3, 2)  # what a grouped convolution's kernel gradient uses
    check(lax.conv_general_dilated(x, w, (1,), 'VALID', batch_group_count=2),
          reference(x, w, (1,), [(0, 0)], batch_groups=2))


def test_conv_1d_3d_and_lax_conv():
    x, w = f32(2, 2, 9), f32(3, 2, 4)
    check(lax.conv(x, w, (3,), 'SAME'), reference(x, w, (3,), [(0, 1)]))  # 9 -> 3: one row of padding, after
    x, w = f32(1, 2, 4, 3, 5), f32(2, 2, 2, 2, 3)
    check(lax.conv_general_dilated(x, w, (1, 2, 1), 'VALID'), reference(x, w, (1, 2, 1), [(0, 0)] * 3))
    x, w = f32(1, 1, 4, 4), f32(1, 1, 2, 2)
    check(lax.conv_with_general_padding(x, w, (1, 1), [(1, 1), (0, 0)], (2, 2), (1, 1)),
          reference(x, w, (1, 1), [(1, 1), (0, 0)], lhs_dilation=(2, 2)))


def test_conv_output_can_be_empty():
    out = lax.conv_general_dilated(f32(1, 1, 2, 2), f32(1, 1, 3, 3), (1, 1), 'VALID')
    assert out.shape == (1, 1, 0, 0)


@pytest.mark.parametrize('mode', ['full', 'same', 'valid'])
def test_convolve_and_correlate_match_numpy(mode):
    a, v = f32(9), f32(4)
    for x, y in ((a, v), (v, a)):
        np.testing.assert_allclose(np.asarray(jnp.convolve(x, y, mode)), np.convolve(x, y, mode),
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(jnp.correlate(x, y, mode)), np.correlate(x, y, mode),
                                   rtol=1e-5, atol=1e-5)
    # integers come out inexact, as numpy's do
    out = jnp.convolve(jnp.arange(5), jnp.array([1, 2]))
    assert out.dtype == jnp.float32
    assert out.tolist() == [0.0, 1.0, 4.0, 7.0, 10.0, 8.0]


def test_errors_are_jax_errors():
    x, w = f32(1, 4, 5, 5), f32(2, 3, 3, 3)
    with pytest.raises(ValueError, match=r'conv_general_dilated lhs feature dimension size divided by '
                                         r'feature_group_count must equal the rhs input feature dimension '
                                         r'size, but 4 // 1 != 3\.'):
        lax.conv_general_dilated(x, w, (1, 1), 'VALID')
    with pytest.raises(TypeError, match=r'lax\.conv_general_dilated requires arguments to have the same '
                                        r'dtypes, got float32, float16\.'):
        lax.conv_general_dilated(x, w[:, :1].repeat(4, 1).astype(np.float16), (1, 1), 'VALID')
    with pytest.raises(ValueError, match='String padding is not implemented for transposed convolution'):
        lax.conv_general_dilated(x, f32(2, 4, 3, 3), (1, 1), 'SAME', lhs_dilation=(2, 2))
    with pytest.raises(TypeError, match=r"convolution dimension_numbers\[1\] must contain the characters "
                                        r"'O' and 'I' exactly once, got HWIX\."):
        lax.conv_general_dilated(x, w, (1, 1), 'VALID', dimension_numbers=('NCHW', 'HWIX', 'NCHW'))
    with pytest.raises(ValueError, match=r'convolve\(\) only support 1-dimensional inputs\.'):
        jnp.convolve(f32(2, 2), f32(2))


def test_gradients_through_the_lowering():
    x, w, g = f32(2, 3, 5, 5), f32(4, 3, 3, 3), f32(2, 4, 3, 3)
    loss = lambda x, w: jnp.sum(lax.conv_general_dilated(x, w, (2, 2), 'SAME') * g)
    gx, gw = jax.grad(loss, argnums=(0, 1))(x, w)
    # Central differences of the float64 reference, for a few elements.
    pads = [(1, 1), (1, 1)]
    ref = lambda x, w: float(np.sum(reference(x, w, (2, 2), pads) * g))
    eps = 1e-3
    for arr, grad, other in ((x, gx, 'x'), (w, gw, 'w')):
        for idx in [(0, 0, 0, 0), (1, 2, 1, 1), tuple(s - 1 for s in arr.shape)]:
            plus, minus = arr.astype(np.float64).copy(), arr.astype(np.float64).copy()
            plus[idx] += eps
            minus[idx] -= eps
            args = (plus, w) if other == 'x' else (x, plus)
            args_m = (minus, w) if other == 'x' else (x, minus)
            numeric = (ref(*args) - ref(*args_m)) / (2 * eps)
            assert abs(float(np.asarray(grad)[idx]) - numeric) < 1e-3, (other, idx)


def test_pmap_conv_with_a_replicated_kernel():
    n = jax.device_count()
    xs, w = f32(n, 2, 3, 5, 5), f32(4, 3, 3, 3)
    out = jax.pmap(lambda x, k: lax.conv(x, k, (1, 1), 'SAME'), in_axes=(0, None))(xs, w)
    for d in range(n):
        np.testing.assert_allclose(np.asarray(out[d]), reference(xs[d], w, (1, 1), [(1, 1), (1, 1)]),
                                   rtol=1e-4, atol=1e-4)
