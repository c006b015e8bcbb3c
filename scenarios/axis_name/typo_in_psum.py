# spmd: devices=4 expect=error:AxisNameError expect-line=10 expect-message=did you mean 'my_devices'?
# The collective names 'my_device' but pmap bound 'my_devices'.
import jax
import jax.numpy as jnp
from jax import lax


def normalize(x):
    # typo: the pmap below binds 'my_devices'
    total = lax.psum(x, axis_name='my_device')
    return x / total

x = jnp.arange(1.0, 5.0)
print(jax.pmap(normalize, axis_name='my_devices')(x))
