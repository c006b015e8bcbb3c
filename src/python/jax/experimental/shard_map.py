"""jax.experimental.shard_map.shard_map, JAX's home for it before jax.shard_map."""

from jax._src.shard_map import shard_map

__all__ = ['shard_map']
