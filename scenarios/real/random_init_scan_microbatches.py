# spmd: devices=4 expect=ok
# spmd: expect-stdout: step 0: loss 4.8577
# spmd: expect-stdout: step 1: loss 4.0804
# spmd: expect-stdout: step 2: loss 3.1124
# spmd: expect-stdout: step 3: loss 2.3417
# spmd: expect-stdout: w [ 0.288 -0.632  1.214] b 0.487
# A correct data-parallel step written the way training scripts are: an
# argparse config, jax.random for the initial weights (one key, split), a
# pmap-ed step that accumulates gradients over micro-batches with lax.scan
# and averages them across devices with pmean, numpy data from a generator.
# The expected losses were checked against the same arithmetic in numpy, from
# the same initial weights (jax.random's threefry, as JAX draws them).
import argparse
import os
from functools import partial

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--micro", type=int, default=2)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args([])

n_dev = jax.local_device_count()
key = jax.random.PRNGKey(0)
k_w, k_b = jax.random.split(key)
params = {"w": 0.01 * jax.random.normal(k_w, (3,)), "b": jnp.zeros(())}


def loss_of(params, x, y):
    err = x @ params["w"] + params["b"] - y
    return jnp.mean(err ** 2)


@partial(jax.pmap, axis_name="data", in_axes=(None, 0, 0), out_axes=None)
def train_step(params, xs, ys):
    def micro(acc, batch):
        loss, g = jax.value_and_grad(loss_of)(params, *batch)
        return jax.tree_util.tree_map(jnp.add, acc, g), loss
    zero = jax.tree_util.tree_map(jnp.zeros_like, params)
    total, losses = lax.scan(micro, zero, (xs, ys))
    grads = lax.pmean(jax.tree_util.tree_map(lambda g: g / xs.shape[0], total), "data")
    new = jax.tree_util.tree_map(lambda p, g: p - args.lr * g, params, grads)
    return new, lax.pmean(jnp.mean(losses), "data")


def data(seed):
    rng = np.random.default_rng(seed)
    w = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    while True:
        x = rng.normal(size=(n_dev, args.micro, 16, 3)).astype(np.float32)
        yield x, x @ w + 1.0


stream = data(1)
for step in range(args.steps):
    x, y = next(stream)
    params, loss = train_step(params, x, y)
    print(f"step {step}: loss {float(loss):.4f}")
print("w", np.round(np.asarray(params["w"]), 3), "b", round(float(params["b"]), 3))
