"""Operators and methods of jax.Array (concrete arrays and tracers alike),
defined over jax.numpy as JAX does."""

import builtins

import numpy as _np

import jax.numpy as jnp
from jax import lax
from jax._src import core
from jax._src.core import Array, Tracer


def _defer(f):
    """Binary operators give NotImplemented to types JAX does not know, so
    Python can try the reflected operator."""
    def op(self, other):
        if not isinstance(other, (Array, bool, int, float, _np.ndarray, _np.generic)):
            return NotImplemented
        return f(self, other)
    return op


def _swap(f):
    return lambda self, other: f(other, self)


_BINARY = {
    'add': jnp.add, 'sub': jnp.subtract, 'mul': jnp.multiply, 'truediv': jnp.divide,
    'floordiv': jnp.floor_divide, 'mod': jnp.remainder, 'pow': jnp.power, 'matmul': jnp.matmul,
    'and': jnp.bitwise_and, 'or': jnp.bitwise_or, 'xor': jnp.bitwise_xor,
}
for _name, _fn in _BINARY.items():
    setattr(Array, f'__{_name}__', _defer(_fn))
    setattr(Array, f'__r{_name}__', _defer(_swap(_fn)))

for _name, _fn in {'lt': jnp.less, 'le': jnp.less_equal, 'gt': jnp.greater, 'ge': jnp.greater_equal,
                   'eq': jnp.equal, 'ne': jnp.not_equal}.items():
    setattr(Array, f'__{_name}__', _defer(_fn))

Array.__neg__ = lambda self: jnp.negative(self)
Array.__pos__ = lambda self: self
Array.__abs__ = lambda self: jnp.abs(self)
Array.__invert__ = lambda self: jnp.logical_not(self)


def _divmod(self, other):
    return jnp.floor_divide(self, other), jnp.remainder(self, other)


Array.__divmod__ = _divmod

# methods
Array.sum = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: jnp.sum(self, axis, dtype, out,
                                                                                      keepdims, **kw)
Array.prod = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: jnp.prod(self, axis, dtype, out,
                                                                                        keepdims, **kw)
Array.mean = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: jnp.mean(self, axis, dtype, out,
                                                                                        keepdims, **kw)
Array.max = lambda self, axis=None, out=None, keepdims=False, **kw: jnp.max(self, axis, out, keepdims, **kw)
Array.min = lambda self, axis=None, out=None, keepdims=False, **kw: jnp.min(self, axis, out, keepdims, **kw)
Array.any = lambda self, axis=None, out=None, keepdims=False, **kw: jnp.any(self, axis, out, keepdims, **kw)
Array.all = lambda self, axis=None, out=None, keepdims=False, **kw: jnp.all(self, axis, out, keepdims, **kw)
Array.var = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw: jnp.var(
    self, axis, dtype, out, ddof, keepdims, **kw)
Array.std = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw: jnp.std(
    self, axis, dtype, out, ddof, keepdims, **kw)
Array.argmax = lambda self, axis=None, keepdims=False: jnp.argmax(self, axis, keepdims)
Array.argmin = lambda self, axis=None, keepdims=False: jnp.argmin(self, axis, keepdims)
Array.astype = lambda self, dtype: jnp.astype(self, dtype)
Array.ravel = lambda self: jnp.ravel(self)
Array.flatten = lambda self: jnp.ravel(self)
Array.squeeze = lambda self, axis=None: jnp.squeeze(self, axis)
Array.swapaxes = lambda self, a, b: jnp.swapaxes(self, a, b)
Array.dot = lambda self, other: jnp.dot(self, other)
Array.clip = lambda self, a_min=None, a_max=None: jnp.clip(self, a_min, a_max)
Array.T = property(lambda self: jnp.transpose(self))
Array.mT = property(lambda self: jnp.swapaxes(self, -1, -2))
Array.real = property(lambda self: jnp.real(self))
Array.imag = property(lambda self: jnp.imag(self))
Array.conj = lambda self: jnp.conj(self)
Array.conjugate = lambda self: jnp.conj(self)
Array.round = lambda self, decimals=0: jnp.round(self, decimals)
Array.cumsum = lambda self, axis=None, dtype=None: jnp.cumsum(self, axis, dtype)
Array.copy = lambda self: jnp.copy(self)
Array.itemsize = property(lambda self: self.dtype.itemsize)
Array.take = lambda self, indices, axis=None, mode=None, fill_value=None: jnp.take(self, indices, axis, mode,
                                                                                    fill_value)
Array.repeat = lambda self, repeats, axis=None: jnp.repeat(self, repeats, axis)
Array.sort = lambda self, axis=-1, **kw: jnp.sort(self, axis, **kw)
Array.argsort = lambda self, axis=-1, **kw: jnp.argsort(self, axis, **kw)
Array.cumprod = lambda self, axis=None, dtype=None: jnp.cumprod(self, axis, dtype)
Array.ptp = lambda self, axis=None, keepdims=False: jnp.ptp(self, axis, keepdims=keepdims)
Array.diagonal = lambda self, offset=0, axis1=0, axis2=1: jnp.diagonal(self, offset, axis1, axis2)
Array.trace = lambda self, offset=0, axis1=0, axis2=1: jnp.trace(self, offset, axis1, axis2)
Array.is_fully_addressable = property(lambda self: True)


def _reshape(self, *shape, order='C'):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return jnp.reshape(self, shape)


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    return jnp.transpose(self, axes or None)


Array.reshape = _reshape
Array.transpose = _transpose


# --- indexing -----------------------------------------------------------------

def _static_item(i):
    """The five-number encoding of one static index item, or None when dynamic."""
    if i is None:
        return (2, 0, 0, 0, 0)
    if i is Ellipsis:
        return (3, 0, 0, 0, 0)
    if isinstance(i, slice):
        parts, mask = [], 0
        for bit, v in enumerate((i.start, i.stop, i.step)):
            if v is None:
                parts.append(0)
            elif isinstance(v, Tracer):
                return None
            else:
                parts.append(int(v))
                mask |= 1 << bit
        return (1, *parts, mask)
    if isinstance(i, (bool, _np.bool_)):
        raise IndexError('boolean indices are not supported: their result shape depends on the data')
    if isinstance(i, (int, _np.integer)):
        return (0, int(i), 0, 0, 0)
    if isinstance(i, core.ArrayImpl) and i.shape == () and i.dtype.kind in 'iu':
        return (0, int(i), 0, 0, 0)
    return None


def _filled(items, ndim):
    """items with the Ellipsis (or, without one, the end) filled with whole
    slices, so the items other than None index every axis once; None where
    there are more than the axes or several Ellipses (the general path says
    why)."""
    if sum(i is Ellipsis for i in items) > 1:
        return None
    taken = sum(i is not None and i is not Ellipsis for i in items)
    if taken > ndim:
        return None
    fill = (slice(None),) * (ndim - taken)
    if Ellipsis in items:
        k = items.index(Ellipsis)
        return items[:k] + fill + items[k + 1:]
    return items + fill


def _whole(i):
    return isinstance(i, slice) and i.start is None and i.stop is None and i.step is None


def _new_axes_only(self, items):
    """x[None], x[:, None], x[..., None] as JAX records them: one
    broadcast_in_dim (lax.expand_dims); x[:] and x[...] are x. None where the
    index selects anything."""
    if not all(i is None or i is Ellipsis or _whole(i) for i in items):
        return None
    items = _filled(items, len(core.aval_of(self).shape))
    if items is None:
        return None
    new = [k for k, i in enumerate(items) if i is None]
    return jnp.expand_dims(self, new) if new else self


def _static_int(i):
    if isinstance(i, (bool, _np.bool_)):
        return None
    if isinstance(i, (int, _np.integer)):
        return int(i)
    return None


def _by_slicing(self, items):
    """x[1], x[1:3], x[:, 2], x[::-1] as JAX records them (its
    _attempt_rewriting_take_via_slice): static non-negative ints and
    contiguous slices are one slice (then a squeeze of the ints' axes),
    whole reversed axes a rev, a negative int a dynamic_slice. None where
    the index needs the general path (None axes, steps, arrays, traced
    bounds)."""
    shape = core.aval_of(self).shape
    items = None if any(i is None for i in items) else _filled(items, len(shape))
    if items is None:
        return None
    starts, sizes, ints, revs, partial = [], [], [], [], False
    for axis, (i, n) in enumerate(zip(items, shape)):
        if isinstance(i, slice):
            if i.step == -1 and i.start is None and i.stop is None:
                revs.append(axis)
                starts.append(0)
                sizes.append(n)
                continue
            if i.step not in (None, 1) or any(v is not None and _static_int(v) is None for v in (i.start, i.stop)):
                return None
            start, stop, _ = i.indices(n)
            starts.append(start)
            sizes.append(builtins.max(stop - start, 0))
            partial = partial or (start, sizes[-1]) != (0, n)
            continue
        k = _static_int(i)
        if k is None or not -n <= k < n:
            return None
        starts.append(k)
        sizes.append(1)
        ints.append(axis)
    x = lax.rev(self, tuple(revs)) if revs else self
    if not ints and not partial:
        return x
    if all(s >= 0 for s in starts):
        x = lax.slice(x, starts, [s + n for s, n in zip(starts, sizes)])
    else:
        # A negative int: JAX's dynamic_slice, the start counted from the end
        # in the program (as int32 constants when there are several).
        negative = [s < 0 for s in starts]
        if len(starts) > 1:
            starts = [lax.convert_element_type(s, _np.int32) for s in starts]
        x = lax.dynamic_slice(x, starts, sizes, allow_negative_indices=negative)
    return lax.squeeze(x, ints) if ints else x


def _getitem(self, key):
    items = key if isinstance(key, tuple) else (key,)
    expanded = _new_axes_only(self, items)
    if expanded is None:
        expanded = _by_slicing(self, items)
    if expanded is not None:
        return expanded
    encoded = [_static_item(i) for i in items]
    if all(e is not None for e in encoded):
        return core.bind1('index', self, items=tuple(v for e in encoded for v in e))
    # One integer array (or traced integer) among static items: the static
    # part first, then a take along the axis the array indexes.
    dynamic = [k for k, e in enumerate(encoded) if e is None]
    if len(dynamic) == 1 and Ellipsis not in items[:dynamic[0]]:
        k = dynamic[0]
        idx = items[k]
        if isinstance(idx, (list, tuple)):
            idx = jnp.asarray(idx)
        idx = idx if isinstance(idx, Array) else jnp.asarray(idx)
        if idx.dtype == _np.bool_:
            raise IndexError('boolean indices are not supported: their result shape depends on the data; '
                             'use jnp.where(mask, x, 0) instead')
        if idx.dtype.kind not in 'iu':
            raise IndexError(f'indices must be integers, got {idx.dtype.name}')
        static = list(items)
        static[k] = slice(None)
        base = self[tuple(static)] if any(i != slice(None) for i in static) else self
        # The indexed axis in `base`: items before it that keep or add an axis.
        axis = 0
        for i in items[:k]:
            if i is None or isinstance(i, slice):
                axis += 1
        n = base.shape[axis]
        idx = jnp.where(jnp.less(idx, 0), jnp.add(idx, n), idx)
        return core.bind1('take', base, idx, axis=axis)
    raise NotImplementedError(f'spmdsim does not support this index yet: {key!r}; '
                              'use static ints and slices, or one integer array')


def _setitem(self, key, value):
    err = TypeError(f"'{type(self).__name__}' object does not support item assignment. JAX arrays are immutable. "
                    'Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another .at[] method: '
                    'https://jax.readthedocs.io/en/latest/_autosummary/jax.numpy.ndarray.at.html')
    err._spmd_hint = 'write x = x.at[idx].set(y): it returns a new array'
    raise err


Array.__setitem__ = _setitem


Array.__getitem__ = _getitem


class _IndexUpdateRef:
    def __init__(self, array, index):
        self.array, self.index = array, index

    def get(self):
        return self.array[self.index]

    def set(self, values):
        return self._update(values, 'set')

    def add(self, values):
        return self._update(values, 'add')

    def multiply(self, values):
        return self._update(values, 'mul')

    def min(self, values):
        return self._update(values, 'min')

    def max(self, values):
        return self._update(values, 'max')

    def _update(self, values, mode):
        items = self.index if isinstance(self.index, tuple) else (self.index,)
        encoded = [_static_item(i) for i in items]
        if any(e is None for e in encoded):
            if _scalar_positions(items, core.aval_of(self.array).ndim):
                return self._update_at_positions(values, mode, items)
            raise NotImplementedError(f'spmdsim supports x.at[...] with static ints and slices, or traced integer '
                                      f'scalars and whole slices, got {self.index!r}')
        return core.bind1('index_update', self.array, values, items=tuple(v for e in encoded for v in e),
                          mode=mode)


    def _update_at_positions(self, values, mode, items):
        """x.at[i, :, j].set(v) with traced integer scalars: the one window
        they pick, read, combined with the values and written back with a
        dynamic slice. A negative index counts from the end; an index still
        outside the axis drops the update, as JAX's scatter does."""
        x = self.array
        shape = core.aval_of(x).shape
        dtype = core.aval_of(x).dtype
        items = list(items) + [slice(None)] * (len(shape) - len(items))
        starts, sizes, inside = [], [], None
        for item, n in zip(items, shape):
            if isinstance(item, slice):
                starts.append(_np.int32(0))
                sizes.append(n)
                continue
            i = lax.convert_element_type(item, _np.int32)
            i = jnp.where(jnp.less(i, 0), jnp.add(i, _np.int32(n)), i)
            ok = jnp.logical_and(jnp.greater_equal(i, 0), jnp.less(i, n))
            inside = ok if inside is None else jnp.logical_and(inside, ok)
            starts.append(i)
            sizes.append(1)
        window = lax.dynamic_slice(x, starts, sizes, allow_negative_indices=False)
        selected = [n for item, n in zip(items, shape) if isinstance(item, slice)]
        v = jnp.broadcast_to(lax.convert_element_type(values, dtype), selected).reshape(sizes)
        combined = {'set': lambda: v, 'add': lambda: window + v, 'mul': lambda: window * v,
                    'min': lambda: jnp.minimum(window, v), 'max': lambda: jnp.maximum(window, v)}[mode]()
        combined = jnp.where(inside, combined, window).astype(dtype)
        return lax.dynamic_update_slice(x, combined, starts, allow_negative_indices=False)


def _scalar_positions(items, rank):
    """Whether every item is an integer scalar (a traced one among them) or
    a whole slice `:`, at most one per axis."""
    if len(items) > rank:
        return False
    for i in items:
        if isinstance(i, slice):
            if (i.start, i.stop, i.step) != (None, None, None):
                return False
        elif isinstance(i, (bool, _np.bool_)) or not isinstance(i, (int, _np.integer, Array)):
            return False
        elif isinstance(i, Array) and (core.aval_of(i).shape != () or core.aval_of(i).dtype.kind not in 'iu'):
            return False
    return True


class _At:
    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)


Array.at = property(lambda self: _At(self))
