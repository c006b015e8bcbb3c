# spmd: devices=4 expect=deadlock expect-line=11 expect-decision-line=15
# The loop's trip count depends on the device: device k runs k + 1
# iterations, each with a psum. Device 0 leaves the loop after one psum while
# the others wait at the second.
import jax
import jax.numpy as jnp
from jax import lax


def body(i, acc):
    return acc + lax.psum(acc, 'devices')

def f(x):
    n = lax.axis_index('devices') + 1
    return lax.fori_loop(0, n, body, x)


print(jax.pmap(f, axis_name='devices')(jnp.ones(4)))
