"""lax.reduce_window (what flax's max_pool/avg_pool call): the reduction of
every window of an array, as one strided slice per position inside the
window combined with `computation`. Windows are small (pooling), so this is
a handful of slices; gradients flow through them as through any slice."""

import itertools

import jax.numpy as jnp
from jax.lax._convolution import padtype_to_pads


def _dilated(size, dilation):
    return 0 if size == 0 else 1 + dilation * (size - 1)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding, base_dilation=None,
                  window_dilation=None):
    x = jnp.asarray(operand)
    nd = x.ndim
    window = tuple(int(w) for w in window_dimensions)
    strides = tuple(int(s) for s in window_strides)
    if len(window) != nd or len(strides) != nd:
        raise TypeError(f'reduce_window: window_dimensions {window} and window_strides {strides} must have one entry '
                        f'per dimension of the operand (shape {x.shape})')
    if base_dilation is not None and any(int(d) != 1 for d in base_dilation):
        raise NotImplementedError('reduce_window with base_dilation is not supported by spmdsim yet')
    wdil = tuple(int(d) for d in window_dilation) if window_dilation is not None else (1,) * nd
    if isinstance(padding, str):
        padding = padtype_to_pads(x.shape, [_dilated(w, d) for w, d in zip(window, wdil)], strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    init = jnp.asarray(init_value, x.dtype)
    if any(lo or hi for lo, hi in padding):
        x = jnp.pad(x, padding, constant_values=init)
    out_shape = [(size - _dilated(w, d)) // s + 1 for size, w, d, s in zip(x.shape, window, wdil, strides)]
    if any(o <= 0 for o in out_shape):
        return jnp.full([max(o, 0) for o in out_shape], init, x.dtype)
    result = None
    for offset in itertools.product(*[range(w) for w in window]):
        index = tuple(slice(o * d, o * d + (n - 1) * s + 1, s) for o, d, n, s in zip(offset, wdil, out_shape, strides))
        part = x[index]
        result = part if result is None else computation(result, part)
    return result
