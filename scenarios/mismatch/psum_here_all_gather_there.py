# spmd: devices=4 expect=mismatch expect-decision-line=17
# Two devices gather while the others sum: on GPUs the result is garbage or a
# hang; spmdsim reports which devices brought which collective.
import jax
import jax.numpy as jnp
from jax import lax


def summed(v):
    return lax.psum(v, 'i')

def gathered(v):
    return lax.all_gather(v, 'i').sum(axis=0)

def f(x):
    odd = lax.axis_index('i') % 2 == 1
    return lax.cond(odd, gathered, summed, x)


print(jax.pmap(f, axis_name='i')(jnp.arange(8.0).reshape(4, 2)))
