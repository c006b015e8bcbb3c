# spmd: devices=8 expect=ok
# spmd: expect-stdout: c == a @ b: True
# spmd: expect-stdout: c blocks: (16, 8) over 8 devices of (2, 8)
# The shard_map tutorial's reduce-scatter matmul: the contraction dimension
# split over a 1-D mesh of 8 devices, each device multiplying its blocks,
# and psum_scatter (tiled) both adding the partial products and leaving each
# device its own rows of the result, so no device holds the whole product.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ('x',))


def matmul_reduce_scatter(a_block, b_block):
    partial = a_block @ b_block                      # (16, 8) partial product
    return lax.psum_scatter(partial, 'x', scatter_dimension=0, tiled=True)  # rows summed and split


a = jnp.asarray(np.arange(16 * 32, dtype=np.float32).reshape(16, 32) % 7)
b = jnp.asarray(np.arange(32 * 8, dtype=np.float32).reshape(32, 8) % 5)
a = jax.device_put(a, NamedSharding(mesh, P(None, 'x')))
b = jax.device_put(b, NamedSharding(mesh, P('x', None)))
c = jax.jit(jax.shard_map(matmul_reduce_scatter, mesh=mesh, in_specs=(P(None, 'x'), P('x', None)),
                          out_specs=P('x', None)))(a, b)
print('c == a @ b:', bool(np.array_equal(np.asarray(c), np.asarray(a) @ np.asarray(b))))
print('c blocks:', c.shape, 'over', len(c.addressable_shards), 'devices of', c.addressable_shards[0].data.shape)
