"""jax.experimental.checkify (see jax._src.checkify)."""
from jax._src.checkify import (DivisionByZeroError, Error, ErrorCategory, FailedCheckError, NaNError, OOBError,
                               all_checks, automatic_checks, check, checkify, div_checks, float_checks, index_checks,
                               nan_checks, user_checks)

__all__ = ['DivisionByZeroError', 'Error', 'ErrorCategory', 'FailedCheckError', 'NaNError', 'OOBError', 'all_checks',
           'automatic_checks', 'check', 'checkify', 'div_checks', 'float_checks', 'index_checks', 'nan_checks',
           'user_checks']
