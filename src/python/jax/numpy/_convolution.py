"""jnp.convolve and jnp.correlate, as JAX computes them: one-dimensional
lax.conv_general_dilated (im2col and one matmul on BLAS)."""

import jax.numpy as jnp
from jax import lax
from jax._src import core, dtypes

__all__ = ['convolve', 'correlate']


def _conv(x, y, mode, op, precision, preferred_element_type):
    x, y = jnp.asarray(x), jnp.asarray(y)
    if len(core.aval_of(x).shape) != 1 or len(core.aval_of(y).shape) != 1:
        raise ValueError(f'{op}() only support 1-dimensional inputs.')
    dtype = jnp.result_type(x, y)
    if preferred_element_type is None and dtype.kind not in 'fc':
        dtype = dtypes.default_float()  # numpy's convolutions are inexact
    x, y = x.astype(dtype), y.astype(dtype)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f'{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.')
    reverse = False
    if op == 'correlate':
        if dtype.kind == 'c':
            y = jnp.conj(y)
        if x.shape[0] < y.shape[0]:
            x, y = y, x
            reverse = True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = jnp.flip(y)
    n = y.shape[0]
    if mode == 'valid':
        padding = [(0, 0)]
    elif mode == 'same':
        padding = [(n // 2, n - n // 2 - 1)]
    elif mode == 'full':
        padding = [(n - 1, n - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = lax.conv_general_dilated(x[None, None, :], y[None, None, :], (1,), padding, precision=precision,
                                   preferred_element_type=preferred_element_type)[0, 0]
    return jnp.flip(out) if reverse else out


def convolve(a, v, mode='full', *, precision=None, preferred_element_type=None):
    """numpy.convolve: the discrete linear convolution of two 1-D arrays."""
    return _conv(a, v, mode, 'convolve', precision, preferred_element_type)


def correlate(a, v, mode='valid', *, precision=None, preferred_element_type=None):
    """numpy.correlate: the cross-correlation of two 1-D arrays."""
    return _conv(a, v, mode, 'correlate', precision, preferred_element_type)
