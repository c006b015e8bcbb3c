# spmd: devices=4 expect=ok
# spmd: expect-stdout: [device 0] in=[0 1] gathered=[0 1 2 3 4 5 6 7]
# spmd: expect-stdout: [device 1] in=[2 3] gathered=[0 1 2 3 4 5 6 7]
# spmd: expect-stdout: [device 2] in=[4 5] gathered=[0 1 2 3 4 5 6 7]
# spmd: expect-stdout: [device 3] in=[6 7] gathered=[0 1 2 3 4 5 6 7]
# spmd: expect-stdout: (4, 4, 2)
# The guide's habit: test a collective alone, with tiny inputs, printing its
# inputs and outputs per device.
import jax
import jax.numpy as jnp
from jax import lax


def only_gather(x):
    g = lax.all_gather(x, 'i')
    jax.debug.print("in={x} gathered={g}", x=x, g=g.reshape(-1))
    return g

out = jax.pmap(only_gather, axis_name='i')(jnp.arange(8).reshape(4, 2))
print(out.shape)
