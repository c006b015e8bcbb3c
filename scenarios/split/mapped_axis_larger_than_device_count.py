# spmd: devices=4 expect=error:DeviceCountError expect-line=13
# The batch has 8 rows but only 4 devices exist: pmap splits axis 0 across
# devices, so that axis must equal the device count. The report suggests the
# reshape that gives each device 2 rows.
import jax
import jax.numpy as jnp


def f(x):
    return x * 2

batch = jnp.arange(8 * 3).reshape((8, 3))
out = jax.pmap(f)(batch)
print(out.shape)
