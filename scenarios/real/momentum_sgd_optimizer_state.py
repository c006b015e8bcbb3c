# spmd: devices=4 expect=ok
# spmd: expect-stdout: epoch 0 loss 2.2175 grad-norm 2.6830
# spmd: expect-stdout: epoch 1 loss 2.5232 grad-norm 3.1572
# spmd: expect-stdout: epoch 2 loss 1.9816 grad-norm 2.9583
# spmd: expect-stdout: metrics {'loss': 3, 'grad_norm': 3}
# A correct data-parallel trainer with optimizer state: momentum SGD whose
# state is a NamedTuple of pytrees, replicated across devices (params and
# state go in with in_axes=None and come back with out_axes=None, which
# spmdsim checks are equal on every device), a jit-compiled helper for the
# update, gradient-norm clipping, and metrics in a defaultdict. The expected
# numbers were checked against the same arithmetic in numpy.
from collections import defaultdict
from functools import partial
from typing import NamedTuple

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


class OptState(NamedTuple):
    velocity: dict


def init(params):
    return OptState(jax.tree_util.tree_map(jnp.zeros_like, params))


@jax.jit
def sgd_update(params, grads, state):
    velocity = jax.tree_util.tree_map(lambda v, g: 0.9 * v + g, state.velocity, grads)
    params = jax.tree_util.tree_map(lambda p, v: p - 0.05 * v, params, velocity)
    return params, OptState(velocity)


def global_norm(tree):
    return jnp.sqrt(sum(jnp.sum(x ** 2) for x in jax.tree_util.tree_leaves(tree)))


def loss_fn(params, x, y):
    err = x @ params["w"] + params["b"] - y
    return jnp.mean(err ** 2)


@partial(jax.pmap, axis_name="dp", in_axes=(None, None, 0, 0), out_axes=(None, None, None, None))
def train_step(params, state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    loss = lax.pmean(loss, "dp")
    grads = lax.pmean(grads, "dp")
    norm = global_norm(grads)
    scale = jnp.minimum(1.0, 3.0 / norm)
    grads = jax.tree_util.tree_map(lambda g: g * scale, grads)
    params, state = sgd_update(params, grads, state)
    return params, state, loss, norm


rng = np.random.default_rng(42)
true_w = np.array([[1.0], [-1.0]], dtype=np.float32)
params = {"w": jnp.zeros((2, 1)), "b": jnp.zeros((1,))}
state = init(params)
metrics = defaultdict(list)
for epoch in range(3):
    x = rng.normal(size=(4, 16, 2)).astype(np.float32)
    y = x @ true_w + 1.0
    params, state, loss, norm = train_step(params, state, x, y)
    metrics["loss"].append(float(loss))
    metrics["grad_norm"].append(float(norm))
    print(f"epoch {epoch} loss {float(loss):.4f} grad-norm {float(norm):.4f}")
print("metrics", {k: len(v) for k, v in metrics.items()})
