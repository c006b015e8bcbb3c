"""dtypes as JAX canonicalises them: 64-bit types become 32-bit unless
jax_enable_x64 is set, Python scalars are weakly typed."""

import abc

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
    dtype = property(lambda self: self)  # jnp.bfloat16 is also the scalar type: jnp.bfloat16.dtype, .__name__
    __name__ = 'bfloat16'

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


class extended(np.generic):
    """The abstract type of JAX's extended dtypes (typed PRNG keys): arrays of
    spmdsim never have one, so issubdtype(x.dtype, prng_key) is False."""


class prng_key(extended):
    """The abstract type of typed PRNG key arrays (jax.random.key)."""


class ExtendedDType(abc.ABC):
    """The base of extended dtypes libraries define (flax's fp8 meta dtype);
    spmdsim's arrays never hold one."""

    @property
    @abc.abstractmethod
    def type(self): ...


DType = np.dtype


def supports_inf(dtype_like):
    dt = dtype(dtype_like)
    return dt is bfloat16 or dt.kind == 'f'


# The dtype of the tangent of an integer input (what grad gives for it).
float0 = np.dtype([('float0', np.void, 0)])


def _as_generic(x):
    """A numpy scalar type (np.floating, np.float32, ...) for issubdtype's
    arguments: dtypes, names, jnp scalar types, Python types, bfloat16."""
    if x is bfloat16 or (isinstance(x, str) and x == 'bfloat16'):
        return None
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    if x is float:
        return np.floating
    if x is int:
        return np.signedinteger
    if x is bool:
        return np.bool_
    if x is complex:
        return np.complexfloating
    return np.dtype(x).type


def issubdtype(arg1, arg2):
    """np.issubdtype, with bfloat16 a floating type as in JAX."""
    a, b = _as_generic(arg1), _as_generic(arg2)
    if a is None:
        return b is None or b in (np.floating, np.inexact, np.number, np.generic)
    if b is None:
        return False
    return issubclass(a, b)


def canonicalize_dtype(dtype_like, allow_extended_dtype=False):
    return canonicalize(dtype_like)


def result_type(*args, return_weak_type_flag=False):
    import jax.numpy as jnp
    out = jnp.result_type(*args)
    if return_weak_type_flag:
        weak = all(isinstance(a, (bool, int, float)) or getattr(a, 'weak_type', False) for a in args)
        return out, weak
    return out


def finfo(dtype_like):
    dt = dtype(dtype_like)
    return np.finfo(np.float32 if dt is bfloat16 else dt)


def iinfo(dtype_like):
    return np.iinfo(dtype(dtype_like))
