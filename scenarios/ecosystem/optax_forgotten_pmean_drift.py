# spmd: devices=4 requires=optax strict=1 expect=error:ParameterDriftError expect-line=27
# spmd: expect-message=output[0]['b'] and output[0]['w'] of train_step differ between devices although params['b'] and params['w'] entered the pmap replicated
# The guide's "gradients never averaged", with optax: the per-device
# gradients go straight into opt.update, so each device's adam step differs
# and the four replicas of the model drift apart. Real JAX runs it without a
# word (the losses even go down); spmdsim names the update that mixed a
# device's own gradient into the replicated parameters.
from functools import partial

import numpy as np
import jax
import jax.numpy as jnp
import optax

opt = optax.adam(1e-2)


def loss_fn(params, x, y):
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


@partial(jax.pmap, axis_name="batch")
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    # BUG: grads = jax.lax.pmean(grads, "batch") is missing
    updates, opt_state = opt.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, jax.lax.pmean(loss, "batch")


n = jax.local_device_count()
params = {"w": jnp.zeros((3,)), "b": jnp.zeros(())}
params = jax.device_put_replicated(params, jax.local_devices())
opt_state = jax.pmap(opt.init)(params)
rng = np.random.default_rng(0)
x = rng.normal(size=(n, 8, 3)).astype(np.float32)
y = x @ np.array([1.0, -2.0, 0.5], np.float32)
for step in range(3):
    params, opt_state, loss = train_step(params, opt_state, x, y)
    print(f"step {step}: loss {float(loss[0]):.4f}")
