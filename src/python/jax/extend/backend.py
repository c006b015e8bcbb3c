"""jax.extend.backend"""
from jax._src.xla_bridge import backends, get_backend  # noqa: F401
