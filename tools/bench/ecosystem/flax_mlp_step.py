# A flax + optax data-parallel MLP training step on 8 devices (pmap, pmean of
# the gradients), STEPS steps (default 100) after one warm-up step; prints
# the seconds per steady-state step. The same file runs under `spmd run` and
# under real JAX (XLA:CPU with 8 host devices).
import os
import time
from functools import partial

import numpy as np
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax
from flax.training import train_state
from flax import jax_utils

steps = int(os.environ.get('STEPS', '100'))


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(256)(x))
        x = nn.relu(nn.Dense(256)(x))
        return nn.Dense(10)(x)


n = jax.local_device_count()
rng = np.random.default_rng(0)
x = rng.normal(size=(n, 64, 128)).astype(np.float32)
y = rng.integers(0, 10, size=(n, 64))
model = MLP()
state = train_state.TrainState.create(apply_fn=model.apply, params=model.init(jax.random.PRNGKey(0), x[0])['params'],
                                      tx=optax.adam(1e-3))
state = jax_utils.replicate(state)


@partial(jax.pmap, axis_name='batch')
def step(state, x, y):
    def loss_fn(p):
        return optax.softmax_cross_entropy_with_integer_labels(state.apply_fn({'params': p}, x), y).mean()
    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=jax.lax.pmean(grads, 'batch')), jax.lax.pmean(loss, 'batch')


state, loss = step(state, x, y)
jax.block_until_ready(loss)
t0 = time.perf_counter()
for _ in range(steps):
    state, loss = step(state, x, y)
jax.block_until_ready(loss)
print(f'{(time.perf_counter() - t0) / steps * 1e3:.3f} ms/step, loss {float(loss[0]):.4f}')
