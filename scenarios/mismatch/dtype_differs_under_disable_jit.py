# spmd: devices=4 expect=mismatch expect-line=17 expect-message=devices disagree on the dtype
# Under jax.disable_jit() Python control flow runs per device, so devices can
# build differently typed values: here the devices whose shard is > 1 convert
# it to int32 before the psum. The collective's operands then disagree in
# dtype across devices, which spmdsim reports with a per-device table.
import jax
import jax.numpy as jnp
from jax import lax


def f(x):
    if x > 1.0:
        v = x.astype(jnp.int32)
    else:
        v = x
    # the psum below sees int32 on devices 2 and 3, float32 on 0 and 1
    return lax.psum(v, 'i')


with jax.disable_jit():
    print(jax.pmap(f, axis_name='i')(jnp.arange(4.0)))
