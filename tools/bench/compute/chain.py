# A chain of 20 elementwise ops over 8 x 1M float32 (issue 17's benchmark),
# under pmap; CHAIN_REPS (10) applications after one warm-up. Prints the seconds.
import os
import time

import jax
import jax.numpy as jnp

REPS = int(os.environ.get('CHAIN_REPS', '10'))


def chain(x):
    y = x * 1.5
    y = y + 0.25
    y = jnp.abs(y)
    y = y - 1.0
    y = y * 0.5
    y = jnp.maximum(y, 0.0)
    y = y + 2.0
    y = jnp.sqrt(y)
    y = y * y
    y = y - 0.125
    y = jnp.tanh(y)
    y = y * 3.0
    y = y + 1.0
    y = jnp.log(y)
    y = y * 0.75
    y = y - 0.5
    y = jnp.abs(y)
    y = y + 1e-3
    y = jnp.minimum(y, 10.0)
    return y * 2.0


n = jax.device_count()
f = jax.pmap(chain)
x = jnp.reshape(jnp.arange(n * (1 << 20), dtype=jnp.float32) / (1 << 20), (n, 1 << 20))
y = f(x)
jax.block_until_ready(y)
t0 = time.perf_counter()
for _ in range(REPS):
    y = f(x)
jax.block_until_ready(y)
print(f'seconds {time.perf_counter() - t0:.4f} checksum {float(jnp.sum(y)):.3f}')
