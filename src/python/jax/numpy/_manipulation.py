"""Array manipulation in jax.numpy: flips, rolls, tiling, splitting, padding,
stacking and take, composed of spmdsim's primitives (static shapes, as JAX
requires under a trace)."""

import builtins

import numpy as _np

import jax.numpy as jnp
from jax import lax
from jax._src import core
from jax._src.core import bind1

__all__ = ['flip', 'fliplr', 'flipud', 'roll', 'repeat', 'tile', 'take', 'take_along_axis', 'split', 'array_split', 'hstack', 'vstack',
           'column_stack', 'atleast_1d', 'atleast_2d', 'pad', 'diag', 'tril', 'triu']


def _shape(x):
    return core.aval_of(x).shape


def _axis(axis, ndim):
    return jnp._axes(axis, ndim)[0]


def _slice_axis(x, axis, start, stop):
    key = (slice(None),) * axis + (slice(start, stop),)
    return x[key]


def flip(m, axis=None):
    x = jnp._as_array(m)
    dims = jnp._axes(axis, len(_shape(x)))
    return bind1('rev', x, dimensions=dims) if dims else x


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    x = jnp._as_array(a)
    if axis is None:
        return jnp.reshape(roll(jnp.ravel(x), shift, 0), _shape(x))
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) != len(axes):
        raise ValueError(f'shift and axis must have the same length, got {len(shifts)} and {len(axes)}')
    for s, ax in zip(shifts, axes):
        ax = _axis(ax, len(_shape(x)))
        n = _shape(x)[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            x = jnp.concatenate([_slice_axis(x, ax, n - s, n), _slice_axis(x, ax, 0, n - s)], ax)
    return x


def repeat(a, repeats, axis=None):
    x = jnp._as_array(a)
    if axis is None:
        x, axis = jnp.ravel(x), 0
    ax = _axis(axis, len(_shape(x)))
    if not isinstance(repeats, (int, _np.integer)):
        reps = [int(r) for r in _np.asarray(repeats).ravel()]
        if len(reps) != _shape(x)[ax]:
            raise ValueError(f'repeats has {len(reps)} entries for an axis of size {_shape(x)[ax]}')
        index = _np.repeat(_np.arange(len(reps)), reps).astype(_np.int32)
        return bind1('take', x, jnp.asarray(index), axis=ax)
    shape = list(_shape(x))
    expanded = jnp.expand_dims(x, ax + 1)
    target = shape[:ax + 1] + [int(repeats)] + shape[ax + 1:]
    return jnp.reshape(jnp.broadcast_to(expanded, target), shape[:ax] + [shape[ax] * int(repeats)] + shape[ax + 1:])


def tile(A, reps):
    x = jnp._as_array(A)
    reps = (int(reps),) if isinstance(reps, (int, _np.integer)) else tuple(int(r) for r in reps)
    nd = builtins.max(len(reps), len(_shape(x)))
    x = jnp.reshape(x, (1,) * (nd - len(_shape(x))) + _shape(x))
    reps = (1,) * (nd - len(reps)) + reps
    # (r0, d0, r1, d1, ...) broadcast, then merged pairwise.
    inter = []
    for d in _shape(x):
        inter += [1, d]
    x = jnp.reshape(x, inter)
    target = []
    for r, d in zip(reps, _shape(x)[1::2]):
        target += [r, d]
    x = jnp.broadcast_to(x, target)
    return jnp.reshape(x, [r * d for r, d in zip(reps, target[1::2])])


def take(a, indices, axis=None, mode=None, fill_value=None):
    x = jnp._as_array(a)
    if axis is None:
        x, axis = jnp.ravel(x), 0
    ax = _axis(axis, len(_shape(x)))
    idx = jnp._as_array(indices)
    if idx.dtype.kind not in 'iu':
        raise TypeError(f'take: indices must be integers, got {idx.dtype.name}')
    n = _shape(x)[ax]
    idx = jnp.where(jnp.less(idx, 0), jnp.add(idx, n), idx)
    return bind1('take', x, idx, axis=ax)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """numpy.take_along_axis with JAX's out-of-bounds rule: negative indices
    count from the end; beyond the axis, mode='fill' (the default) gives
    fill_value (NaN for inexact dtypes, the dtype's minimum for integers, True
    for booleans) and mode='clip' the nearest element."""
    x, idx = jnp._as_array(arr), jnp._as_array(indices)
    if idx.dtype.kind not in 'iu':
        raise TypeError(f'take_along_axis indices must be of integer type, got {idx.dtype}')
    if mode not in (None, 'fill', 'clip'):
        raise NotImplementedError(f"take_along_axis mode={mode!r}: spmdsim has mode='fill' and mode='clip'")
    if axis is None:
        if len(_shape(idx)) != 1:
            raise ValueError('when axis=None, `indices` must have a single dimension.')
        x, axis = jnp.ravel(x), 0
    nd = len(_shape(x))
    if len(_shape(idx)) != nd:
        raise ValueError(f'indices and arr must have the same number of dimensions; {len(_shape(idx))} vs. {nd}')
    ax = _axis(axis, nd)
    xs, js = _shape(x), _shape(idx)
    other = [(xs[d], js[d]) for d in range(nd) if d != ax]
    for a, b in other:
        if a != b and a != 1 and b != 1:
            raise ValueError(f'indices and arr must be broadcast-compatible along the other axes; '
                             f'got shapes {xs} and {js} for axis {ax}')
    out_shape = tuple(js[d] if d == ax else builtins.max(xs[d], js[d]) for d in range(nd))
    n = xs[ax]
    source_shape = out_shape[:ax] + (n,) + out_shape[ax + 1:]
    x = jnp.broadcast_to(x, source_shape)
    idx = jnp.broadcast_to(jnp.where(idx < 0, idx + n, idx), out_shape)
    inside = jnp.logical_and(idx >= 0, idx < n)
    # One flat index per output element into x's elements (row-major strides).
    flat = jnp.zeros(out_shape, jnp.int32 if x.size < 2 ** 31 else jnp.int64)
    stride = 1
    for d in reversed(range(nd)):
        if d == ax:
            term = jnp.clip(idx, 0, builtins.max(n - 1, 0))
        else:
            term = jnp.reshape(jnp.arange(out_shape[d]), tuple(-1 if i == d else 1 for i in range(nd)))
        flat = flat + (term * stride).astype(flat.dtype)
        stride *= source_shape[d]
    out = bind1('take', jnp.ravel(x), flat, axis=0) if n else jnp.zeros(out_shape, x.dtype)
    if mode == 'clip':
        return out
    if fill_value is None:
        kind = x.dtype.kind
        fill_value = (_np.nan if kind in 'fc' else True if kind == 'b' else _np.iinfo(x.dtype).min)
    return jnp.where(inside, out, jnp.asarray(fill_value, x.dtype))


def _split_points(n, indices_or_sections, even):
    if isinstance(indices_or_sections, (int, _np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError('number sections must be larger than 0.')
        if even and n % k:
            raise ValueError('array split does not result in an equal division')
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        points, at = [], 0
        for s in sizes[:-1]:
            at += s
            points.append(at)
        return points
    return [int(i) for i in indices_or_sections]


def split(ary, indices_or_sections, axis=0, _even=True):
    x = jnp._as_array(ary)
    ax = _axis(axis, len(_shape(x)))
    n = _shape(x)[ax]
    points = _split_points(n, indices_or_sections, _even)
    bounds = [0] + points + [n]
    return list(lax.split(x, [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])], ax))


def array_split(ary, indices_or_sections, axis=0):
    return split(ary, indices_or_sections, axis, _even=False)


def atleast_1d(x):
    x = jnp._as_array(x)
    return jnp.reshape(x, (1,)) if len(_shape(x)) == 0 else x


def atleast_2d(x):
    x = atleast_1d(x)
    return jnp.reshape(x, (1,) + _shape(x)) if len(_shape(x)) == 1 else x


def hstack(tup):
    arrays = [atleast_1d(a) for a in tup]
    return jnp.concatenate(arrays, 0 if len(_shape(arrays[0])) == 1 else 1)


def vstack(tup):
    return jnp.concatenate([atleast_2d(a) for a in tup], 0)


def column_stack(tup):
    arrays = [jnp._as_array(a) for a in tup]
    return jnp.concatenate([jnp.reshape(a, (-1, 1)) if len(_shape(a)) < 2 else a for a in arrays], 1)


def pad(array, pad_width, mode='constant', constant_values=0):
    if mode != 'constant':
        raise NotImplementedError(f"jnp.pad mode={mode!r}: spmdsim pads with mode='constant' only")
    x = jnp._as_array(array)
    nd = len(_shape(x))
    widths = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.int64), (nd, 2)) if nd else _np.zeros((0, 2), int)
    for ax in range(nd):
        lo, hi = (int(w) for w in widths[ax])
        if lo < 0 or hi < 0:
            raise ValueError(f'index can\'t contain negative values, got pad_width {pad_width}')
        parts = []
        for w in (lo, None, hi):
            if w is None:
                parts.append(x)
            elif w:
                shape = list(_shape(x))
                shape[ax] = w
                parts.append(jnp.full(shape, constant_values, dtype=x.dtype))
        x = jnp.concatenate(parts, ax) if len(parts) > 1 else x
    return x


def diag(v, k=0):
    x = jnp._as_array(v)
    if len(_shape(x)) == 1:
        n = _shape(x)[0] + builtins.abs(k)
        return jnp.where(jnp.eye(n, k=k, dtype=bool), jnp.reshape(pad(x, (builtins.abs(k), 0)),
                                                                  (1, n) if k >= 0 else (n, 1)), jnp.zeros((), x.dtype))
    rows, cols = _shape(x)
    i = _np.arange(builtins.max(0, builtins.min(rows, cols - k) if k >= 0 else builtins.min(rows + k, cols)))
    r, c = (i, i + k) if k >= 0 else (i - k, i)
    return bind1('take', jnp.ravel(x), jnp.asarray((r * cols + c).astype(_np.int32)), axis=0)


def tril(m, k=0):
    x = jnp._as_array(m)
    rows, cols = _shape(x)[-2:]
    return jnp.where(jnp.asarray(_np.tri(rows, cols, k, dtype=bool)), x, jnp.zeros((), x.dtype))


def triu(m, k=0):
    x = jnp._as_array(m)
    rows, cols = _shape(x)[-2:]
    return jnp.where(jnp.asarray(~_np.tri(rows, cols, k - 1, dtype=bool)), x, jnp.zeros((), x.dtype))
