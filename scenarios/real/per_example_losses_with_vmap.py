# spmd: devices=2 expect=ok
# spmd: expect-stdout: per-example losses (2, 3)
# spmd: expect-stdout: [[0.   0.25 1.  ]
# spmd: expect-stdout:  [2.25 4.   6.25]]
# spmd: expect-stdout: mean 2.2917 max 6.2500
# spmd: expect-stdout: eval done on 2 devices: ['cpu:0', 'cpu:1']
# An evaluation loop: jax.vmap computes per-example losses inside the pmap-ed
# function, the per-device results come back stacked and are pulled to the
# host with jax.device_get; block_until_ready and the device list as
# evaluation scripts print them.
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


def example_loss(w, x, y):
    return (jnp.dot(w, x) - y) ** 2


@jax.pmap
def eval_step(w, xs, ys):
    return jax.vmap(example_loss, in_axes=(None, 0, 0))(w, xs, ys)


w = jnp.stack([jnp.array([0.5, 0.0])] * 2)
xs = jnp.arange(12.0).reshape(2, 3, 2) * jnp.array([1.0, 0.0])
ys = jnp.arange(6.0).reshape(2, 3) * 0.5
losses = eval_step(w, xs, ys).block_until_ready()
host = jax.device_get(losses)
print("per-example losses", host.shape)
print(np.round(host, 2))
print(f"mean {host.mean():.4f} max {host.max():.4f}")
print(f"eval done on {jax.device_count()} devices: {[f'{d.platform}:{d.id}' for d in jax.devices()]}")
