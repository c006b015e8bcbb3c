"""lax.conv_general_dilated and its wrappers, as in JAX.

Lowered to primitives spmdsim already runs and differentiates: the input
is put in (batch, feature, spatial...) order, dilated and padded; each of the window's offsets takes one strided slice of
it, and the slices stacked make the patch matrix ("im2col"); one batched
dot_general on BLAS contracts it with the kernel, per feature group. So
convolutions accumulate in their own dtype (float32 in float32), run at the
speed of matmul, and have gradients through slicing, padding and matmul.
"""

import itertools
import math
from typing import NamedTuple

import numpy as np

from jax._src import core


class ConvDimensionNumbers(NamedTuple):
    """Positions of (batch, feature, spatial...) in lhs and the output, and of
    (out feature, in feature, spatial...) in rhs, as in JAX."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_general_permutations(dimension_numbers):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (('N', 'C'), ('O', 'I'), ('N', 'C'))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' "
                            f"exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f'convolution dimension_numbers[{i}] cannot have duplicate characters, '
                            f'got {dimension_numbers[i]}.')
    if not (set(lhs_spec) - set(charpairs[0]) == set(rhs_spec) - set(charpairs[1]) ==
            set(out_spec) - set(charpairs[2])):
        raise TypeError('convolution dimension_numbers elements must each have the same set of spatial '
                        f'characters, got {dimension_numbers}.')

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)
    return tuple(perm(spec, pair) for spec, pair in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """dimension_numbers (None, a (lhs, rhs, out) tuple of strings such as
    ('NHWC', 'HWIO', 'NHWC'), or ConvDimensionNumbers) as ConvDimensionNumbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f'convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} '
                        f'and {len(rhs_shape)}.')
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError(f'convolution dimension_numbers list/tuple must be length 3, '
                            f'got {len(dimension_numbers)}.')
        if not all(isinstance(e, str) for e in dimension_numbers):
            raise TypeError('convolution dimension_numbers elements must be strings, '
                            f'got {tuple(map(type, dimension_numbers))}.')
        for i, e in enumerate(dimension_numbers):
            if len(e) != len(lhs_shape):
                raise TypeError(f'convolution dimension_numbers[{i}] must have len equal to the ndim of lhs and '
                                f'rhs, got {len(e)} for lhs and rhs shapes {tuple(lhs_shape)} and '
                                f'{tuple(rhs_shape)}.')
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    raise TypeError(f'convolution dimension_numbers must be tuple/list or None, got {type(dimension_numbers)}.')


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """'SAME', 'SAME_LOWER' or 'VALID' as (low, high) pairs, one per spatial dimension."""
    kind = padding.upper() if isinstance(padding, str) else padding
    if kind == 'VALID':
        return [(0, 0)] * len(in_shape)
    if kind not in ('SAME', 'SAME_LOWER'):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME' or 'SAME_LOWER', got {padding}.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-size // stride)
        total = max((out - 1) * stride + window - size, 0)
        low = total // 2 if kind == 'SAME' else total - total // 2
        pads.append((low, total - low))
    return pads


def _dilated(size, dilation):
    return 0 if size == 0 else 1 + dilation * (size - 1)


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                         preferred_element_type=None, out_sharding=None):
    """lax.conv_general_dilated: an n-dimensional convolution (cross-correlation,
    as in XLA) with strides, padding, input and kernel dilation, feature and
    batch groups. See the module docstring for how it runs."""
    import jax.numpy as jnp
    from jax import lax
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    lhs_shape, rhs_shape = core.aval_of(lhs).shape, core.aval_of(rhs).shape
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    if len(lhs_shape) != len(rhs_shape):
        raise ValueError(f'conv_general_dilated lhs and rhs must have the same number of dimensions, '
                         f'but got {lhs_shape} and {rhs_shape}.')
    if len(lhs_shape) < 2:
        raise ValueError(f'conv_general_dilated needs operands with a batch and a feature dimension, '
                         f'got shapes {lhs_shape} and {rhs_shape}')
    if lhs.dtype != rhs.dtype:
        raise TypeError(f'lax.conv_general_dilated requires arguments to have the same dtypes, '
                        f'got {lhs.dtype}, {rhs.dtype}.')
    nspatial = len(lhs_shape) - 2
    lhs_perm, rhs_perm, out_perm = dnums
    lhs_c = tuple(lhs_shape[d] for d in lhs_perm)
    rhs_c = tuple(rhs_shape[d] for d in rhs_perm)
    lhs_dilation = (1,) * nspatial if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rhs_dilation = (1,) * nspatial if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    window_strides = tuple(int(s) for s in window_strides)
    for name, seq in (('window_strides', window_strides), ('lhs_dilation', lhs_dilation),
                      ('rhs_dilation', rhs_dilation)):
        if len(seq) != nspatial:
            raise ValueError(f'conv_general_dilated window and {name} must have the same number of dimensions, '
                             f'but got {nspatial} and {len(seq)}')
        if any(v < 1 for v in seq):
            raise ValueError(f'conv_general_dilated {name} must be positive, got {seq}')
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError('String padding is not implemented for transposed convolution using this op. '
                             'Please either exactly specify the required padding or use conv_transpose.')
        kernel = [_dilated(k, r) for k, r in zip(rhs_c[2:], rhs_dilation)]
        padding = padtype_to_pads(lhs_c[2:], kernel, window_strides, padding)
    else:
        try:
            padding = tuple((int(lo), int(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError('padding argument to conv_general_dilated should be a string or a sequence of '
                             f'(low, high) pairs, got {padding}') from e
        if len(padding) != nspatial:
            raise TypeError(f'Wrong number of explicit pads for convolution: expected {nspatial}, '
                            f'got {len(padding)}.')
    groups, batch_groups = int(feature_group_count), int(batch_group_count)
    features, in_features, out_features = lhs_c[1], rhs_c[1], rhs_c[0]
    if groups < 1:
        raise ValueError(f'conv_general_dilated feature_group_count must be a positive integer, got {groups}.')
    if features % groups:
        raise ValueError(f'conv_general_dilated feature_group_count must divide lhs feature dimension size, '
                         f'but {groups} does not divide {features}.')
    if features // groups != in_features:
        raise ValueError(f'conv_general_dilated lhs feature dimension size divided by feature_group_count must '
                         f'equal the rhs input feature dimension size, but {features} // {groups} != '
                         f'{in_features}.')
    if out_features % groups:
        raise ValueError(f'conv_general_dilated rhs output feature dimension size must be a multiple of '
                         f'feature_group_count, but {out_features} is not a multiple of {groups}.')
    if batch_groups < 1:
        raise ValueError(f'conv_general_dilated batch_group_count must be a positive integer, got {batch_groups}.')
    if batch_groups > 1 and lhs_c[0] % batch_groups:
        raise ValueError(f'conv_general_dilated batch_group_count must divide lhs batch dimension size, but '
                         f'{batch_groups} does not divide {lhs_c[0]}.')
    if out_features % batch_groups:
        raise ValueError(f'conv_general_dilated rhs output feature dimension size must be a multiple of '
                         f'batch_group_count, but {out_features} is not a multiple of {batch_groups}.')
    if batch_groups > 1 and groups > 1:
        raise ValueError(f'At most one of batch_group_count and feature_group_count may be > 1, got '
                         f'batch_group_count={batch_groups} and feature_group_count={groups}')

    # (batch, feature, spatial...), dilated, then padded (a negative pad crops).
    x = lax.transpose(lhs, lhs_perm) if lhs_perm != tuple(range(len(lhs_shape))) else lhs
    w = lax.transpose(rhs, rhs_perm) if rhs_perm != tuple(range(len(rhs_shape))) else rhs
    for d, dil in enumerate(lhs_dilation):
        if dil > 1:
            x = _dilate_axis(x, 2 + d, dil)
    x = _pad_spatial(x, padding)
    padded = core.aval_of(x).shape[2:]
    if any(p < 0 for p in padded):
        raise ValueError('Negative padding is larger than the size of the corresponding dimension: got '
                         f'padding={list(padding)} for lhs_shape[2:]={lhs_c[2:]}')
    windows = rhs_c[2:]
    out_space = tuple((p - _dilated(k, r)) // s + 1 if p >= _dilated(k, r) else 0
                      for p, k, r, s in zip(padded, windows, rhs_dilation, window_strides))
    batch = lhs_c[0]
    # One strided slice per window offset: (batch, feature, offsets, out spatial).
    slices = []
    for offset in itertools.product(*(range(k) for k in windows)):
        index = [slice(None), slice(None)]
        for o, r, s, n in zip(offset, rhs_dilation, window_strides, out_space):
            start = o * r
            index.append(slice(start, start + (n - 1) * s + 1 if n else start, s))
        slices.append(x[tuple(index)])
    count = math.prod(windows)
    points = math.prod(out_space)
    patches = jnp.stack(slices, axis=2) if slices else jnp.zeros((batch, features, 0) + out_space, x.dtype)
    if batch_groups > 1:
        # out[b, g*Og + o] = sum over (c, k) of w[g*Og + o, c, k] * patches[g*B + b, c, k]
        per = batch // batch_groups
        cols = jnp.reshape(patches, (batch_groups, per, features * count, points))
        cols = lax.transpose(cols, (1, 0, 2, 3))
        kern = jnp.reshape(w, (batch_groups, out_features // batch_groups, in_features * count))
        out = jnp.reshape(_per_example_product(kern, cols), (per, out_features) + out_space)
    else:
        # out[b, g*Og + o] = sum over (c, k) of w[g*Og + o, c, k] * patches[b, g*Cg + c, k]
        cols = jnp.reshape(patches, (batch, groups, in_features * count, points))
        kern = jnp.reshape(w, (groups, out_features // groups, in_features * count))
        out = jnp.reshape(_per_example_product(kern, cols), (batch, out_features) + out_space)
    inverse = tuple(int(i) for i in np.argsort(out_perm))
    out = lax.transpose(out, inverse) if inverse != tuple(range(len(inverse))) else out
    return out if preferred_element_type is None else lax.convert_element_type(out, preferred_element_type)


def _per_example_product(kern, cols):
    """kern (G, O, K) times each example's cols (B, G, K, P): (B, G, O, P).
    The kernel is broadcast over the examples first, so the product is one
    dot_general batched over (B, G) that reads both operands in place and
    writes the result in order (kern @ cols would contract the examples' K
    through a copy of cols, then transpose the result)."""
    import jax.numpy as jnp
    from jax import lax
    b = core.aval_of(cols).shape[0]
    kern = jnp.broadcast_to(kern, (b,) + core.aval_of(kern).shape)
    return lax.dot_general(kern, cols, (((3,), (2,)), ((0, 1), (0, 1))),
                           preferred_element_type=jnp.result_type(kern, cols))


def _dilate_axis(x, axis, dilation):
    """dilation - 1 zeros between consecutive elements along `axis`."""
    import jax.numpy as jnp
    shape = core.aval_of(x).shape
    n = shape[axis]
    if n == 0:
        return x
    spread = jnp.stack([x] + [jnp.zeros(shape, x.dtype)] * (dilation - 1), axis=axis + 1)
    spread = jnp.reshape(spread, shape[:axis] + (n * dilation,) + shape[axis + 1:])
    index = [slice(None)] * len(shape)
    index[axis] = slice(0, _dilated(n, dilation))
    return spread[tuple(index)]


def _pad_spatial(x, padding):
    import jax.numpy as jnp
    shape = core.aval_of(x).shape
    crop = [slice(None)] * len(shape)
    widths = [(0, 0), (0, 0)]
    for d, (lo, hi) in enumerate(padding):
        start, stop = max(0, -lo), shape[2 + d] - max(0, -hi)
        crop[2 + d] = slice(start, max(start, stop))
        widths.append((max(0, lo), max(0, hi)))
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        x = x[tuple(crop)]
    if any(w != (0, 0) for w in widths):
        x = jnp.pad(x, widths)
    return x


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """lax.conv: conv_general_dilated in (N, C, spatial...) / (O, I, spatial...) order."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    """lax.conv_with_general_padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)
