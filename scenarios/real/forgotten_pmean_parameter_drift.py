# spmd: devices=4 strict=1 expect=error:ParameterDriftError expect-line=34
# spmd: expect-message=output[0].w and output[0].b of train_step differ between devices although params.w and params.b entered the pmap replicated
# The guide's "gradients that were never averaged", as the JAX tutorials
# write a training step: parameters copied to every device with
# device_put_replicated, jax.value_and_grad of the loss, the update through
# tree_map, and the lax.pmean of the gradients forgotten. JAX runs it without
# a word while the four copies of the model drift apart. spmdsim sees that
# the updated parameters vary between devices although they came in
# replicated, and names the line where each device's own gradient was
# combined with them; (spmd run --strict) makes it an error.
from functools import partial
from typing import NamedTuple

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


class Params(NamedTuple):
    w: jnp.ndarray
    b: jnp.ndarray


def loss_fn(params, x, y):
    pred = x @ params.w + params.b
    return jnp.mean((pred - y) ** 2)


@partial(jax.pmap, axis_name="batch")
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    # BUG: grads = lax.pmean(grads, "batch") is missing
    new_params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return new_params, lax.pmean(loss, "batch")


rng = np.random.default_rng(0)
n = jax.local_device_count()
params = jax.device_put_replicated(Params(jnp.zeros(3), jnp.zeros(())), jax.local_devices())
for step in range(3):
    x = rng.normal(size=(n, 16, 3)).astype(np.float32)
    y = x @ np.array([1.0, -2.0, 0.5], dtype=np.float32) + 0.3
    params, loss = train_step(params, x, y)
    print(f"step {step} loss {float(loss[0]):.4f}")
