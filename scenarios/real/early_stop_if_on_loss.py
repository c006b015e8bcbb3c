# spmd: devices=4 expect=error:TracerBoolConversionError expect-line=32 expect-message=lax.cond
# Early stopping written inside the pmap-ed step: a Python `if` on the loss.
# Inside pmap the loss is traced (one program for every device, no values
# yet), so Python cannot branch on it. JAX's error points at the `if` and
# names the arguments the loss came from.
from dataclasses import dataclass
from functools import partial

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


@dataclass(frozen=True)
class Config:
    lr: float = 0.05
    tolerance: float = 1e-3


class Model:
    def __init__(self, config):
        self.config = config
        self.step = jax.pmap(self._step, axis_name="d")

    def _step(self, w, x, y):
        loss_fn = lambda w: jnp.mean((x @ w - y) ** 2)
        loss, grad = jax.value_and_grad(loss_fn)(w)
        loss, grad = lax.pmean((loss, grad), "d")
        # BUG: Python control flow on a traced value; use lax.cond, or
        # return the loss and decide on the host
        if loss < self.config.tolerance:
            return w
        return w - self.config.lr * grad


model = Model(Config())
rng = np.random.default_rng(0)
x = rng.normal(size=(4, 8, 2)).astype(np.float32)
y = x @ np.array([1.0, 2.0], dtype=np.float32)
w = jnp.zeros((4, 2))
w = model.step(w, x, y)
