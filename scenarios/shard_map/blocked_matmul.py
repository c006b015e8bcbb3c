# spmd: devices=8 expect=ok
# spmd: expect-stdout: c == a @ b: True
# spmd: expect-stdout: row sums: [  6.  22.  38.  54.  70.  86. 102. 118.]
# The shard_map tutorial's first program, written for a 2 x 4 mesh: a
# matmul whose contraction dimension is split over 'model', each device
# multiplying its blocks and a psum over 'model' adding the partial
# products; rows are split over 'data'.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))


@jax.jit
def reference(a, b):
    return a @ b


def matmul_blocks(a_block, b_block):
    # a_block: (4, 1) rows of 'data', one column of 'model'; b_block: (1, 4)
    return lax.psum(a_block @ b_block, 'model')


a = jnp.arange(32.0).reshape(8, 4)
b = jnp.eye(4)
c = jax.shard_map(matmul_blocks, mesh=mesh, in_specs=(P('data', 'model'), P('model', None)),
                  out_specs=P('data', None))(a, b)
print("c == a @ b:", bool(np.allclose(np.asarray(c), np.asarray(reference(a, b)))))
print("row sums:", np.asarray(jnp.sum(c, axis=1)))
