# The smallest useful program: one pmap with a psum.
import jax
import jax.numpy as jnp
from jax import lax

print(jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(jnp.arange(8.0)))
