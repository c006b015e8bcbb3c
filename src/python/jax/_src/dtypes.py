"""dtypes as JAX canonicalises them: 64-bit types become 32-bit unless
jax_enable_x64 is set, Python scalars are weakly typed."""

import numpy as np

from jax._src import config

bool_ = np.dtype('bool')
int32 = np.dtype('int32')
int64 = np.dtype('int64')
float16 = np.dtype('float16')
float32 = np.dtype('float32')
float64 = np.dtype('float64')



class _BFloat16:
    """jnp.bfloat16 without ml_dtypes (which Debian does not package): a
    dtype-like object arrays report as their dtype; numpy sees such arrays as
    float32 (np.asarray converts)."""
    name = 'bfloat16'
    kind = 'f'
    itemsize = 2
    type = property(lambda self: self)

    def __call__(self, value):
        import jax.numpy as jnp
        return jnp.asarray(value, float32).astype(self)

    def __eq__(self, other):
        return other is self or other == 'bfloat16'

    def __hash__(self):
        return hash('bfloat16')

    def __repr__(self):
        return "dtype(bfloat16)"

    __str__ = lambda self: 'bfloat16'


bfloat16 = _BFloat16()


def dtype(x):
    """np.dtype(x), and bfloat16 for its name or object."""
    if x is bfloat16 or (isinstance(x, str) and x == 'bfloat16'):
        return bfloat16
    return np.dtype(x)


def is_float(dtype_like):
    """Whether arrays of this dtype hold floats (bfloat16 included)."""
    dt = dtype(dtype_like)
    return dt is bfloat16 or dt.kind == 'f'


def canonicalize(dtype_like):
    """The dtype an array of `dtype` gets (int64 -> int32 without x64, ...)."""
    dt = dtype(dtype_like)
    if dt is bfloat16:
        return bfloat16
    x64 = config.x64_enabled()
    if dt.kind == 'b':
        return bool_
    if dt.kind in 'iu':
        return int64 if (x64 and dt.itemsize == 8) else int32
    if dt.kind == 'f':
        if dt.itemsize == 2:
            return float16
        return float64 if (x64 and dt.itemsize == 8) else float32
    raise TypeError(f'spmdsim does not support arrays of dtype {dt.name}; '
                    'use bool, int32, float16 or float32 (int64/float64 with jax_enable_x64)')


def default_float():
    return float64 if config.x64_enabled() else float32


def default_int():
    return int64 if config.x64_enabled() else int32


def python_scalar_dtype(x):
    """(dtype, weak) of a Python scalar."""
    if isinstance(x, (bool, np.bool_)):
        return bool_, False
    if isinstance(x, int):
        return default_int(), True
    if isinstance(x, float):
        return default_float(), True
    raise TypeError(f'{type(x).__name__} is not a valid JAX type')
