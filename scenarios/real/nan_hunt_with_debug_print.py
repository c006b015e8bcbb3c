# spmd: devices=4 expect=ok
# spmd: expect-stdout: [device 0] shard stats: min 0.01 max 1.00 nan False
# spmd: expect-stdout: [device 1] shard stats: min 0.00 max 0.98 nan False
# spmd: expect-stdout: [device 2] shard stats: min nan max nan nan True
# spmd: expect-stdout: [device 3] shard stats: min 0.01 max 0.97 nan False
# spmd: expect-stdout: loss is nan: True
# spmd: expect-stdout: first bad shard: 2
# The guide's habit for a NaN that appears only across devices: print each
# device's own view with jax.debug.print (every line tagged with its device,
# in a fixed order), then find the bad shard on the host. Here one corrupt
# record in the input file makes device 2's shard NaN, and the pmean of the
# loss spreads it to every device.
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

rng = np.random.default_rng(7)
data = rng.random((4, 32)).astype(np.float32)
data[2, 5] = np.nan  # a corrupt record


def loss_fn(x):
    jax.debug.print("shard stats: min {lo:.2f} max {hi:.2f} nan {bad}",
                    lo=jnp.min(x), hi=jnp.max(x), bad=jnp.any(jnp.isnan(x)))
    return lax.pmean(jnp.mean(x ** 2), "i")


loss = jax.pmap(loss_fn, axis_name="i")(data)
print("loss is nan:", bool(jnp.isnan(loss[0])))
bad = [i for i in range(data.shape[0]) if np.isnan(data[i]).any()]
print("first bad shard:", bad[0])
