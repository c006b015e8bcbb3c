# spmd: devices=8 expect=deadlock expect-line=17 expect-decision-line=19
# spmd: expect-message=device 1 (data=0, model=1) returned after 0 collectives
# The pmap bug class "a device skips a psum under a condition", in shard_map
# form: a 2 x 4 mesh, and a lax.cond on the device's 'model' index that
# skips the psum over 'model' on column 1. Every other device of both rows
# waits at the psum for it. The report labels devices by mesh coordinates.
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))


def normalize(block):
    def with_total(v):
        return v / lax.psum(v, 'model')
    # Column 1 "knows" its value is already normalized: a shortcut that hangs.
    return lax.cond(lax.axis_index('model') == 1, lambda v: v, with_total, block)


x = jnp.ones((2, 4))
print(jax.shard_map(normalize, mesh=mesh, in_specs=P('data', 'model'), out_specs=P('data', 'model'))(x))
