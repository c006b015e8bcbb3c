"""jax.experimental: the parts spmdsim provides (shard_map)."""
