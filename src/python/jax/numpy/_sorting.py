"""Sorting in jax.numpy over the sort primitive (stable, NaNs last)."""

import numpy as _np

import jax.numpy as jnp
from jax import errors
from jax._src import core
from jax._src.core import bind

__all__ = ['sort', 'argsort', 'median', 'unique']


def _prepare(a, axis):
    x = jnp._as_array(a)
    if axis is None:
        return jnp.ravel(x), 0
    return x, jnp._axes(axis, len(core.aval_of(x).shape))[0]


def sort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    x, ax = _prepare(a, axis)
    out = bind('sort', x, dimension=ax, num_keys=1)[0]
    return jnp.flip(out, ax) if descending else out


def argsort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    x, ax = _prepare(a, axis)
    shape = core.aval_of(x).shape
    iota = jnp.broadcast_to(jnp.reshape(jnp.arange(shape[ax]), [shape[ax] if d == ax else 1 for d in range(len(shape))]),
                            shape)
    keys = jnp.negative(x) if descending else x
    return bind('sort', keys, iota, dimension=ax, num_keys=1)[1]


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle of the sorted values (the mean of the two middle ones for
    an even count), as numpy; NaNs sort last."""
    x, ax = _prepare(a, axis)
    n = core.aval_of(x).shape[ax]
    if n == 0:
        raise ValueError('jnp.median of an empty axis')
    s = sort(x, axis=ax)
    lo = jnp.take(s, (n - 1) // 2, axis=ax)
    hi = jnp.take(s, n // 2, axis=ax)
    m = (lo + hi) / 2 if n % 2 == 0 else jnp.asarray(lo, dtype=jnp.result_type(lo, 1.0))
    if keepdims:
        m = jnp.expand_dims(m, ax) if axis is not None else jnp.reshape(m, (1,) * len(core.aval_of(jnp._as_array(a)).shape))
    return m


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, size=None,
           fill_value=None):
    if isinstance(ar, core.Tracer):
        raise core._concretization_error(
            ar, errors.ConcretizationTypeError,
            'jnp.unique: the size of its result depends on the values, which a traced array does not have.',
            'unique')
    out = _np.unique(_np.asarray(ar), return_index, return_inverse, return_counts, axis)
    if isinstance(out, tuple):
        return tuple(jnp.asarray(o) for o in out)
    return jnp.asarray(out)
