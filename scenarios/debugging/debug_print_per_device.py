# spmd: devices=4 expect=ok
# spmd: expect-stdout: [device 0] x=0.0 sum=6.0
# spmd: expect-stdout: [device 1] x=1.0 sum=6.0
# spmd: expect-stdout: [device 2] x=2.0 sum=6.0
# spmd: expect-stdout: [device 3] x=3.0 sum=6.0
# jax.debug.print shows each device's values, tagged with the device and in a
# deterministic order (whatever the schedule).
import jax
import jax.numpy as jnp
from jax import lax


def f(x):
    s = lax.psum(x, 'i')
    jax.debug.print("x={x} sum={s}", x=x, s=s)
    return s

jax.pmap(f, axis_name='i')(jnp.arange(4.0))
