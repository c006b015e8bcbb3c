# spmd: devices=8 expect=error:ValueError expect-line=18
# spmd: expect-message=maps array axis 0 (of size 6) to mesh axis 'data' (of size 4), but 4 does not evenly divide 6
# A batch of 6 rows split over a 'data' axis of 4 devices: JAX's error
# names the argument, its shape, the mesh axis and its size.
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ('data', 'model'))


def loss(batch):
    return lax.pmean(jnp.mean(batch ** 2), 'data')


batch = jnp.ones((6, 2))
print(jax.shard_map(loss, mesh=mesh, in_specs=P('data', 'model'), out_specs=P())(batch))
