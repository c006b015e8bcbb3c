# spmd: devices=8 expect=error:DeviceCountError expect-line=36 expect-message=reshape
# The most common first pmap bug: the data loader yields a global batch of
# 32 examples and the step is called with it as is. pmap maps the leading
# axis over the devices, so it wants (8, 4, 784), not (32, 784). spmdsim
# says which argument, its shape, and the reshape that fits.
import itertools
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


def loader(batch_size, seed=0):
    rng = np.random.default_rng(seed)
    while True:
        images = rng.random((batch_size, 784), dtype=np.float32)
        labels = rng.integers(0, 10, size=(batch_size,))
        yield {"image": images, "label": labels}


def step(w, batch):
    logits = batch["image"] @ w
    onehot = jax.nn.one_hot(batch["label"], 10)
    loss = -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * onehot, axis=-1))
    return lax.pmean(loss, "batch")


p_step = jax.pmap(step, axis_name="batch", in_axes=(None, 0))
w = jnp.zeros((784, 10))
for batch in itertools.islice(loader(32), 2):
    # BUG: the batch is not split per device: batch["image"].reshape(8, 4, 784)
    loss = p_step(w, batch)
    print(loss[0])
