# spmd: devices=8 expect=error:AxisNameError expect-line=14
# spmd: expect-message=psum: unbound axis name: 'modle'. The bound axis names are: 'data', 'model'
# A collective over a misspelt mesh axis: found while tracing, with the
# closest mesh axis in the hint.
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))


def total(block):
    return lax.psum(block, 'modle')


print(jax.shard_map(total, mesh=mesh, in_specs=P('data', 'model'), out_specs=P('data'))(jnp.ones((2, 4))))
