# spmd: devices=4 expect=ok
# spmd: expect-stdout: device 0: local sum 6.0
# spmd: expect-stdout: device 1: local sum 22.0
# spmd: expect-stdout: device 2: local sum 38.0
# spmd: expect-stdout: device 3: local sum 54.0
# spmd: expect-stdout: [120. 120. 120. 120.]
# The guide's debugging habit: run the pmapped step under jax.disable_jit()
# so plain Python (print, float(), if) sees each device's concrete values,
# while the collective still meets across devices.
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def step(x):
    local = float(jnp.sum(x))
    print(f"device {int(lax.axis_index('d'))}: local sum {local}")
    return lax.psum(jnp.sum(x), "d")


batches = np.arange(16, dtype=np.float32).reshape(4, 4)
with jax.disable_jit():
    print(jax.pmap(step, axis_name="d")(batches))
