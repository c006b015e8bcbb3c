# spmd: devices=4 expect=error:OutAxesError expect-line=49 expect-message=differs between devices
# The guide's "gradients that were never averaged": each device updates the
# replicated parameters with the gradient of its own shard only (the pmean
# is missing), so the "replicated" copies drift apart. Returning them with
# out_axes=None, as a training step that keeps one copy does, is where it
# shows: spmdsim compares the copies and names the devices that differ.
import logging
from functools import partial
from typing import NamedTuple

import numpy as np
import jax
import jax.numpy as jnp

logging.basicConfig(level=logging.WARNING)
log = logging.getLogger("train")


class Params(NamedTuple):
    w: jnp.ndarray
    b: jnp.ndarray


def loss_fn(params, x, y):
    pred = x @ params.w + params.b
    err = pred - y
    return jnp.mean(err ** 2)


@partial(jax.pmap, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, 0))
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    # BUG: grads = jax.lax.pmean(grads, "batch") is missing
    new = Params(params.w - 0.1 * grads.w, params.b - 0.1 * grads.b)
    return new, loss


def batches(rng, steps, n_dev, per_dev):
    true_w = np.array([1.5, -2.0], dtype=np.float32)
    for _ in range(steps):
        x = rng.normal(size=(n_dev, per_dev, 2)).astype(np.float32)
        y = x @ true_w + 0.5
        yield x, y


params = Params(jnp.zeros(2), jnp.zeros(()))
rng = np.random.default_rng(0)
for step, (x, y) in enumerate(batches(rng, 3, jax.local_device_count(), 8)):
    params, losses = train_step(params, x, y)
    log.info("step %d loss %s", step, losses.mean())
