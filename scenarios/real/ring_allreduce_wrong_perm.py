# spmd: devices=4 expect=error:ValueError expect-line=22 expect-message=destinations must be unique
# A hand-written ring all-reduce: each step passes the running sum to the
# next device. The permutation is built with an off-by-one (device i sends
# to (i + 1) % (n - 1)), so two devices send to device 0 and nobody to
# device 3. JAX refuses such a permutation when it traces the ppermute;
# spmdsim gives its error at the line, before any device runs.
import jax
import jax.numpy as jnp
from jax import lax

N = jax.device_count()


def ring_allreduce(x):
    # BUG: should be (i + 1) % N
    perm = [(i, (i + 1) % (N - 1)) for i in range(N)]
    total = x
    chunk = x

    def step(k, carry):
        total, chunk = carry
        chunk = lax.ppermute(chunk, "ring", perm)
        return total + chunk, chunk
    total, _ = lax.fori_loop(0, N - 1, step, (total, chunk))
    return total


print(jax.pmap(ring_allreduce, axis_name="ring")(jnp.arange(4.0)))
