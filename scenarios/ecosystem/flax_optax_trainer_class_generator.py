# spmd: requires=flax,optax expect=ok
# spmd: expect-stdout: step 5: loss 0.4759
# spmd: expect-stdout: step 10: loss 0.3418
# spmd: expect-stdout: step 15: loss 0.2256
# spmd: expect-stdout: step 20: loss 0.2106
# Real code with the libraries: a Trainer class whose pmapped method binds
# self (static_broadcasted_argnums=0), a flax Classifier, an optax chain
# with clipping, a NamedTuple batch from a generator of numpy data, and the
# device count from XLA_FLAGS set in the program. Real JAX 0.8.1 prints the
# same losses.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
from typing import NamedTuple, Iterator
from functools import partial
import numpy as np
import jax, jax.numpy as jnp
import flax.linen as nn
import optax


class Batch(NamedTuple):
    x: np.ndarray
    y: np.ndarray


def batches(n_dev, seed=0) -> Iterator[Batch]:
    rng = np.random.default_rng(seed)
    while True:
        x = rng.normal(size=(n_dev, 32, 8)).astype(np.float32)
        yield Batch(x, (x.sum(-1) > 0).astype(np.int32))


class Classifier(nn.Module):
    hidden: int = 32

    @nn.compact
    def __call__(self, x):
        return nn.Dense(2)(nn.gelu(nn.Dense(self.hidden)(x)))


class Trainer:
    def __init__(self, lr=1e-2):
        self.model = Classifier()
        self.tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(lr))

    def init(self, key, sample):
        params = self.model.init(key, sample)
        return jax.device_put_replicated((params, self.tx.init(params)), jax.local_devices())

    @partial(jax.pmap, axis_name="d", static_broadcasted_argnums=0)
    def step(self, carry, batch):
        params, opt_state = carry
        def loss_fn(p):
            logits = self.model.apply(p, batch.x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch.y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        grads = jax.lax.pmean(grads, "d")
        updates, opt_state = self.tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), jax.lax.pmean(loss, "d")


t = Trainer()
data = batches(jax.local_device_count())
carry = t.init(jax.random.PRNGKey(0), next(data).x[0])
for i in range(20):
    carry, loss = t.step(carry, next(data))
    if i % 5 == 4:
        print(f"step {i + 1}: loss {float(loss[0]):.4f}")
