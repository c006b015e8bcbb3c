"""The annotations of jax.typing, as JAX defines them: Unions that work with
isinstance() as well as in type hints (optax checks `isinstance(x, ArrayLike)`)."""

from typing import Any, Protocol, Sequence, Union

import numpy as np

from jax._src.core import Array


class SupportsDType(Protocol):
    @property
    def dtype(self, /) -> np.dtype: ...


StaticScalar = Union[np.bool_, np.number, bool, int, float, complex]
ArrayLike = Union[Array, np.ndarray, StaticScalar]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
DType = np.dtype
DimSize = Union[int, Any]
Shape = Sequence[DimSize]
