"""jax.extend.core"""
from jax._src.core import ShapedArray  # noqa: F401
