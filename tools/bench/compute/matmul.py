# float32 matmul of N x N by N x N (N=1024 by default) on one device; prints GFLOP/s (median of 5).
import os
import time

import jax
import jax.numpy as jnp

N = int(os.environ.get('N', '1024'))
f = jax.jit(jnp.matmul)
key = jax.random.PRNGKey(0)
a = jax.random.normal(key, (N, N), jnp.float32)
b = jax.random.normal(jax.random.split(key)[0], (N, N), jnp.float32)
jax.block_until_ready(f(a, b))
ts = []
for _ in range(5):
    t0 = time.perf_counter()
    jax.block_until_ready(f(a, b))
    ts.append(time.perf_counter() - t0)
ts.sort()
print(f'gflops {2 * N ** 3 / ts[2] / 1e9:.2f}')
