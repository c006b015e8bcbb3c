# spmd: devices=4 expect=mismatch expect-line=13 expect-message=devices disagree on the shape
# Per-device sizes: under disable_jit the length below is a concrete Python
# int that differs by device, so the psum's operands have different shapes.
import jax
import jax.numpy as jnp
from jax import lax


def f(x):
    n = int(lax.axis_index('i')) % 2 + 2
    v = jnp.ones(n) * x
    # devices 0 and 2 bring f32[2], devices 1 and 3 bring f32[3]
    return lax.psum(v, 'i')


with jax.disable_jit():
    print(jax.pmap(f, axis_name='i')(jnp.arange(4.0)))
