"""jax.typing: ArrayLike and DTypeLike, for annotations and isinstance checks."""

from jax._src.typing import ArrayLike, DTypeLike

__all__ = ['ArrayLike', 'DTypeLike']
