# spmd: devices=4 processes=2 process-devices=local expect=ok
# Two hosts with two devices each, as JAX runs them: every process maps over
# its own jax.local_device_count() devices and feeds only their rows; the
# collectives span all jax.device_count() devices, so their data crosses
# processes (through the store on the sim backend, NCCL on --backend cuda).
# Each device prints its global index and results; the lines of both
# processes together equal a one-process run's (spmd run FILE
# --num-processes 1), bit for bit: the tests compare them.
import jax
import jax.numpy as jnp
from jax import lax

n = jax.local_device_count()
first = jax.process_index() * n
ids = jnp.arange(first, first + n)
x = (ids[:, None] * 4 + jnp.arange(4)[None, :]) * 0.1   # f32, rounding shows the summation order
k = ids[:, None] * 10 + jnp.arange(4)[None, :]          # int32


def step(x, k):
    d = jax.device_count()
    right = [(i, (i + 1) % d) for i in range(d)]
    pairs = [[i, d - 1 - i] for i in range(d // 2)]       # each pair spans both processes
    return (lax.axis_index('i'), lax.psum(x, 'i'), lax.pmean(x, 'i'), lax.pmax(k, 'i'), lax.pmin(x, 'i'),
            lax.all_gather(k, 'i'), lax.all_gather(x, 'i', tiled=True), lax.psum_scatter(k, 'i', tiled=True),
            lax.all_to_all(k, 'i', 0, 0, tiled=True), lax.ppermute(x, 'i', right),
            lax.psum(x.astype(jnp.bfloat16), 'i'), lax.psum(k, 'i', axis_index_groups=pairs),
            lax.all_gather(x, 'i', axis_index_groups=pairs))


outs = jax.pmap(step, axis_name='i')(x, k)
for d in range(n):
    print('device', first + d, [o[d].tolist() for o in outs])
