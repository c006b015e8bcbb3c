# A 100-step (STEPS=N: N-step) data-parallel training loop on 8 devices (linear regression,
# gradients written out, pmean): the same file runs through `spmd run` and a
# plain python3 with the _spmd extension.
import os

import jax
import jax.numpy as jnp
from jax import lax


def step(w, x, y):
    err = jnp.dot(x, w) - y
    grad = lax.pmean(2.0 * jnp.dot(err, x) / x.shape[0], 'i')
    return w - 0.05 * grad


train = jax.pmap(step, axis_name='i', in_axes=(None, 0, 0))
n = jax.device_count()
x = jnp.reshape(jnp.arange(n * 16 * 4, dtype=jnp.float32) / 512.0, (n, 16, 4))
y = jnp.sum(x, axis=2)
w = jnp.zeros(4)
for _ in range(int(os.environ.get('STEPS', '100'))):
    w = train(w, x, y)[0]
print(w)
