# spmd: devices=8 expect=error:ValueError expect-line=22
# spmd: expect-message=replicated across mesh axis 'model', but it varies along that axis
# A collective over the wrong mesh axis: the partial products of a blocked
# matmul (contraction split over 'model') are summed over 'data' instead.
# Each device's result still varies along 'model', while out_specs
# P('data', None) claims the rows are the same on every 'model' device: the
# replication check (check_vma) names the output and the axis at trace time.
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))


def matmul(a_block, b_block):
    return lax.psum(a_block @ b_block, 'data')   # meant: 'model'


a = jnp.ones((8, 16))
b = jnp.ones((16, 4))
c = jax.shard_map(matmul, mesh=mesh, in_specs=(P('data', 'model'), P('model', None)), out_specs=P('data', None))(a, b)
print(c)
