# spmd: devices=8 requires=optax expect=ok
# spmd: expect-stdout: step 10: loss 0.9952
# spmd: expect-stdout: step 20: loss 0.3162
# spmd: expect-stdout: step 30: loss 0.0709
# spmd: expect-stdout: step 40: loss 0.0168
# spmd: expect-stdout: w: [1.0, -2.0, 0.4399999976158142, 3.130000114440918]
# spmd: expect-stdout: replicas equal: True
# The optax recipe for data parallelism under the original pmap: one
# optimizer (adamw with a warmup-cosine schedule and global-norm clipping),
# its state replicated with jax.device_put_replicated, the gradients
# lax.pmean'ed over the batch axis before opt.update. The printed losses are
# real JAX 0.8.1's on 8 CPU devices (XLA_FLAGS) for the same program.
from functools import partial

import numpy as np
import jax
import jax.numpy as jnp
import optax

n_dev = jax.local_device_count()
rng = np.random.default_rng(0)
x = rng.normal(size=(n_dev, 16, 4)).astype(np.float32)
true_w = np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
y = x @ true_w + 0.1 * rng.normal(size=(n_dev, 16, 1)).astype(np.float32)

params = {"w": jnp.zeros((4, 1)), "b": jnp.zeros((1,))}
schedule = optax.warmup_cosine_decay_schedule(0.0, 0.3, warmup_steps=5, decay_steps=40, end_value=0.01)
opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-4))


def loss_fn(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean(optax.l2_loss(pred, y))


@partial(jax.pmap, axis_name="batch")
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    grads = jax.lax.pmean(grads, "batch")
    updates, opt_state = opt.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, jax.lax.pmean(loss, "batch")


params = jax.device_put_replicated(params, jax.local_devices())
opt_state = jax.pmap(opt.init)(params)
for step in range(40):
    params, opt_state, loss = train_step(params, opt_state, x, y)
    if step % 10 == 9:
        print(f"step {step + 1}: loss {float(loss[0]):.4f}")
print("w:", np.round(np.asarray(params["w"][0]).ravel(), 2).tolist())
print("replicas equal:", bool(jnp.all(params["w"] == params["w"][0])))
