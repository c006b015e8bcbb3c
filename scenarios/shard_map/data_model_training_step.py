# spmd: devices=8 expect=ok
# spmd: expect-stdout: losses match numpy: True
# spmd: expect-stdout: weights match numpy: True
# A training step on a data x model mesh: the batch is split over 'data',
# the weight's columns over 'model'. Each device computes its block of the
# predictions; the loss sums over both axes; the weight's gradient is
# summed over 'data' (each block's loss is its share of the global mean,
# and every data row holds the same columns) and stays split over 'model'.
# Checked against the same step in numpy.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))
rng = np.random.default_rng(0)
x = rng.normal(size=(8, 4)).astype(np.float32)
y = rng.normal(size=(8, 8)).astype(np.float32)
w0 = rng.normal(size=(4, 8)).astype(np.float32) * 0.1
lr = 0.05


def local_step(w, x, y):
    def local_loss(w):
        return jnp.sum((x @ w - y) ** 2) / y.size / 8  # y.size is the block's; 8 blocks
    loss, g = jax.value_and_grad(local_loss)(w)
    return w - lr * lax.psum(g, 'data'), lax.psum(loss, ('data', 'model'))


step = jax.jit(jax.shard_map(local_step, mesh=mesh, in_specs=(P(None, 'model'), P('data', None), P('data', 'model')),
                             out_specs=(P(None, 'model'), P())))

w, ref_w = jnp.asarray(w0), w0.astype(np.float64)
losses, ref_losses = [], []
for _ in range(5):
    w, loss = step(w, x, y)
    losses.append(float(loss))
    err = x @ ref_w - y
    ref_losses.append(float(np.mean(err ** 2)))
    ref_w = ref_w - lr * (2 * x.T @ err / y.size)
print("losses match numpy:", bool(np.allclose(losses, ref_losses, rtol=1e-4)))
print("weights match numpy:", bool(np.allclose(np.asarray(w), ref_w, rtol=1e-4, atol=1e-6)))
