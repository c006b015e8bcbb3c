# Data-parallel MLP training (issue 17's benchmark): 8 devices, batch 64 per
# device, two 256x256 layers, tanh, squared error, jax.grad, pmean'd
# gradients, SGD. Prints the seconds of STEPS steps after one warm-up step.
import os
import time

import jax
import jax.numpy as jnp
from jax import lax

STEPS = int(os.environ.get('STEPS', '100'))
D, B = 256, 64


def loss(params, x, y):
    w1, b1, w2, b2 = params
    h = jnp.tanh(jnp.dot(x, w1) + b1)
    out = jnp.dot(h, w2) + b2
    return jnp.mean((out - y) ** 2)


def step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    grads = lax.pmean(grads, 'i')
    return tuple(p - 0.01 * g for p, g in zip(params, grads))


n = jax.device_count()
train = jax.pmap(step, axis_name='i', in_axes=(None, 0, 0), out_axes=None)
key = jax.random.PRNGKey(0)
k1, k2, k3, k4 = jax.random.split(key, 4)
params = (jax.random.normal(k1, (D, D), jnp.float32) * 0.05, jnp.zeros(D, jnp.float32),
          jax.random.normal(k2, (D, D), jnp.float32) * 0.05, jnp.zeros(D, jnp.float32))
x = jax.random.normal(k3, (n, B, D), jnp.float32)
y = jax.random.normal(k4, (n, B, D), jnp.float32)
params = train(params, x, y)
jax.block_until_ready(params)
t0 = time.perf_counter()
for _ in range(STEPS):
    params = train(params, x, y)
jax.block_until_ready(params)
print(f'seconds {time.perf_counter() - t0:.4f} checksum {float(jnp.sum(params[0])):.6f}')
