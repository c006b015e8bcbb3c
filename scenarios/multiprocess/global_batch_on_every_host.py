# spmd: devices=8 processes=2 process-devices=local expect=error:InputSplitError expect-line=23
# spmd: expect-message=but this process runs 4 local devices (process 0 of 2 runs devices 0..3 of 8)
# The classic multi-host pmap bug: code written on one host, where
# jax.device_count() == jax.local_device_count(), is deployed on two hosts
# with four devices each. Every process builds the global batch of 8 rows
# and hands it to pmap, but on several hosts pmap maps over the process's
# own jax.local_device_count() = 4 devices. JAX fails with a terse shape
# error; spmdsim names the mapped axis, both counts, which devices this
# process runs, and the slice each process should pass:
#     batch[jax.process_index() * 4:(jax.process_index() + 1) * 4]
# Run it with `spmd run FILE` (the header starts two processes, each running
# its 4 of the 8 devices: --process-devices local).
import jax
import jax.numpy as jnp
from jax import lax

batch = jnp.arange(jax.device_count() * 2.0).reshape(jax.device_count(), 2)


def mean_grad(x):
    return lax.pmean(x * 2.0, 'batch')

grads = jax.pmap(mean_grad, axis_name='batch')(batch)
print(grads)
