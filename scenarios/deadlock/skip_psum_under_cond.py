# spmd: devices=4 expect=deadlock expect-line=16 expect-decision-line=20
# A device skips the psum: lax.cond takes a branch without the collective on
# device 2 only, so devices 0, 1 and 3 wait at the psum forever. On GPUs this
# hangs; spmdsim reports it at once, names the lax.cond whose decision
# differed, and shows where every device stands.
import jax
import jax.numpy as jnp
from jax import lax


def step(x):
    y = x * 2.0

    def reduce(v):
        # every device must reach this psum
        return lax.psum(v, 'i')

    def skip(v):
        return v
    z = lax.cond(lax.axis_index('i') == 2, skip, reduce, y)
    return z


out = jax.pmap(step, axis_name='i')(jnp.arange(4.0))
print(out)
