# spmd: devices=4 expect=ok
# spmd: expect-stdout: [[3. 0. 1. 2.]
# spmd: expect-stdout:  [6. 6. 6. 6.]]
# A ring: each device passes its value to the next one with ppermute; after
# n - 1 steps of pass-and-accumulate every device holds the total.
import jax
import jax.numpy as jnp
from jax import lax

n = jax.device_count()
ring = [(i, (i + 1) % n) for i in range(n)]


def ring_allreduce(x):
    received = lax.ppermute(x, 'i', perm=ring)
    acc = x
    msg = x
    for _ in range(n - 1):
        msg = lax.ppermute(msg, 'i', perm=ring)
        acc = acc + msg
    return jnp.stack([received, acc])


out = jax.pmap(ring_allreduce, axis_name='i')(jnp.arange(4.0))
print(out.T)
