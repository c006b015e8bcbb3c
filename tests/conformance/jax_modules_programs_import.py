# Issue 36's finding 25 against real JAX: the JAX modules training programs import besides jax itself:
# jax.example_libraries.optimizers (every optimizer, schedules, clipping, inside jit), mesh_utils, pjit,
# multihost_utils with one process, and jax.profiler's calls (a no-op trace under spmdsim, a real one under JAX).
import tempfile

import numpy as np

import jax
import jax.numpy as jnp
from jax.example_libraries import optimizers
from jax.experimental import mesh_utils, multihost_utils
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P


def loss(params, x):
    return jnp.sum((params['w'] * x + params['b']) ** 2)


x = jnp.arange(1.0, 5.0)
makers = {
    'sgd': lambda: optimizers.sgd(0.01),
    'momentum': lambda: optimizers.momentum(optimizers.exponential_decay(0.01, 2, 0.5), mass=0.9),
    'nesterov': lambda: optimizers.nesterov(0.01, 0.8),
    'adagrad': lambda: optimizers.adagrad(0.1),
    'rmsprop': lambda: optimizers.rmsprop(optimizers.inverse_time_decay(0.01, 2, 0.5, staircase=True)),
    'rmsprop_momentum': lambda: optimizers.rmsprop_momentum(0.01),
    'adam': lambda: optimizers.adam(optimizers.polynomial_decay(0.1, 3, 0.01)),
    'adamax': lambda: optimizers.adamax(optimizers.piecewise_constant([1, 2], [0.1, 0.05, 0.01])),
}
for name, make in makers.items():
    opt_init, opt_update, get_params = make()
    state = opt_init({'w': jnp.ones(4), 'b': jnp.float32(0.5)})

    @jax.jit
    def step(i, state):
        grads = jax.grad(loss)(get_params(state), x)
        return opt_update(i, optimizers.clip_grads(grads, 20.0), state)

    for i in range(4):
        state = step(i, state)
    params = get_params(state)
    print(name, np.round(np.asarray(params['w']), 4), np.round(float(params['b']), 4))
print(np.round(float(optimizers.l2_norm({'a': jnp.ones(4), 'b': jnp.full((2,), 2.0)})), 5))

mesh = mesh_utils.create_device_mesh((2, 4))
print(mesh.shape, [d.id for d in mesh.flat])
try:
    mesh_utils.create_device_mesh((3, 2))
except ValueError as e:
    print('ValueError:', e)
# Hybrid meshes: CPU devices have no slice_index, so only processes can be the granules (one here).
hybrid = mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1), process_is_granule=True)
print(hybrid.shape, [d.id for d in hybrid.flat])
for args, kwargs in ((((2, 2), (2, 1)), {}), (((2, 2), (2, 1)), {'process_is_granule': True})):
    try:
        mesh_utils.create_hybrid_device_mesh(*args, **kwargs)
    except ValueError as e:
        print('ValueError:', e)
with Mesh(mesh, ('a', 'b')):
    print(pjit(lambda v: v * 2, in_shardings=None, out_shardings=None)(jnp.arange(8.0)))

print(multihost_utils.broadcast_one_to_all({'v': jnp.arange(3)}))
print(multihost_utils.process_allgather(jnp.float32(1.5)), multihost_utils.process_allgather(jnp.arange(2), tiled=True))
multihost_utils.sync_global_devices('done')
multihost_utils.assert_equal(jnp.arange(3))

with tempfile.TemporaryDirectory() as logdir:
    with jax.profiler.trace(logdir):
        with jax.profiler.TraceAnnotation('step'):
            y = jnp.ones(3) * 2
    try:
        jax.profiler.stop_trace()
    except RuntimeError as e:
        print('RuntimeError:', e)
    jax.profiler.start_trace(logdir)
    try:
        jax.profiler.start_trace(logdir)
    except RuntimeError as e:
        print('RuntimeError:', e)
    jax.profiler.stop_trace()


@jax.profiler.annotate_function
def double(v):
    return v * 2


print(double(y), double.__name__)
