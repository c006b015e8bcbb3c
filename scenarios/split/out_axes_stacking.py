# spmd: devices=4 expect=error:OutAxesError expect-line=14
# out_axes=None returns one copy of the output and is only for values equal on
# every device; here each device returns its own shard times two.
import jax
import jax.numpy as jnp
from jax import lax


def f(x):
    return x * 2

x = jnp.arange(8.0).reshape((4, 2))
# out_axes=None is wrong here: the values differ per device
print(jax.pmap(f, axis_name='i', out_axes=None)(x))
