"""jax.dtypes"""
from jax._src.dtypes import (bfloat16, canonicalize_dtype, extended, finfo, float0, iinfo, issubdtype, prng_key,
                             result_type)

__all__ = ['bfloat16', 'canonicalize_dtype', 'extended', 'finfo', 'float0', 'iinfo', 'issubdtype', 'prng_key',
           'result_type']
