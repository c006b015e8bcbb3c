# spmd: devices=8 expect=ok
# spmd: expect-stdout: data parallel loss: True
# spmd: expect-stdout: data parallel gradients (jit): True
# spmd: expect-stdout: FSDP loss: True
# spmd: expect-stdout: FSDP gradients (all_gather transposed to psum_scatter): True
# spmd: expect-stdout: tensor parallel gemm: True
# spmd: expect-stdout: collective matmul: True
# spmd: expect-stdout: ┌─────────┬─────────┬─────────┬─────────┐
# spmd: expect-stdout: │  CPU 0  │  CPU 1  │  CPU 2  │  CPU 3  │
# spmd: expect-stdout: ├─────────┼─────────┼─────────┼─────────┤
# spmd: expect-stdout: │  CPU 4  │  CPU 5  │  CPU 6  │  CPU 7  │
# spmd: expect-stdout: └─────────┴─────────┴─────────┴─────────┘
# The parallelism strategies of JAX's shard_map tutorial, written the way it
# writes them (experimental spelling, partial as a decorator): a data-parallel
# loss with pmean, FSDP (parameters all_gather-ed in the forward pass, whose
# gradient is a psum_scatter), a tensor-parallel gemm with psum_scatter, and a
# collective matmul that overlaps an all-gather with ppermute. Each is checked
# against the same computation on one device.
from functools import partial
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P
from jax.experimental.shard_map import shard_map

mesh = jax.make_mesh((8,), ('batch',))

def init_layer(key, n_in, n_out):
    k1, k2 = jax.random.split(key)
    W = jax.random.normal(k1, (n_in, n_out)) / jnp.sqrt(n_in)
    b = jax.random.normal(k2, (n_out,))
    return W, b

def init(key, layer_sizes, batch_size):
    key, *keys = jax.random.split(key, len(layer_sizes))
    params = list(map(init_layer, keys, layer_sizes[:-1], layer_sizes[1:]))
    key, *keys = jax.random.split(key, 3)
    inputs = jax.random.normal(keys[0], (batch_size, layer_sizes[0]))
    targets = jax.random.normal(keys[1], (batch_size, layer_sizes[-1]))
    return params, (inputs, targets)

layer_sizes = [16, 32, 32, 8]
batch_size = 32
params, batch = init(jax.random.PRNGKey(0), layer_sizes, batch_size)

def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jax.nn.relu(outputs)
    return outputs

def loss(params, batch):
    inputs, targets = batch
    predictions = predict(params, inputs)
    return jnp.mean(jnp.sum((predictions - targets) ** 2, axis=-1))

# data parallel
@partial(shard_map, mesh=mesh, in_specs=(P(), P('batch')), out_specs=P())
def loss_dp(params, batch):
    return lax.pmean(loss(params, batch), 'batch')

print('data parallel loss:', np.allclose(loss(params, batch), loss_dp(params, batch), atol=1e-6, rtol=1e-6))
g1 = jax.grad(loss)(params, batch); g2 = jax.jit(jax.grad(loss_dp))(params, batch)
print('data parallel gradients (jit):', all(np.allclose(a, b, atol=1e-5, rtol=1e-5) for a, b in zip(jax.tree.leaves(g1), jax.tree.leaves(g2))))

# FSDP
@partial(shard_map, mesh=mesh, in_specs=(P('batch'), P('batch')), out_specs=P())
def loss_fsdp(local_params, local_batch):
    batch_params = jax.tree.map(lambda p: lax.all_gather(p, 'batch', tiled=True), local_params)
    return lax.pmean(loss(batch_params, local_batch), 'batch')

print('FSDP loss:', np.allclose(loss(params, batch), loss_fsdp(params, batch), atol=1e-6, rtol=1e-6))
g3 = jax.grad(loss_fsdp)(params, batch)
print('FSDP gradients (all_gather transposed to psum_scatter):', all(np.allclose(a, b, atol=1e-5, rtol=1e-5) for a, b in zip(jax.tree.leaves(g1), jax.tree.leaves(g3))))

# tensor parallel
mesh2 = jax.make_mesh((8,), ('feats',))
@partial(shard_map, mesh=mesh2, in_specs=(P(None, 'feats'), P('feats', None), P('feats')), out_specs=P(None, 'feats'))
def gemm_tp(inputs, W, b):
    block_result = jnp.dot(inputs, W)
    return lax.psum_scatter(block_result, 'feats', scatter_dimension=1, tiled=True) + b
x = jax.random.normal(jax.random.PRNGKey(1), (4, 16)); W = jax.random.normal(jax.random.PRNGKey(2), (16, 16)); b = jnp.arange(16.)
print('tensor parallel gemm:', np.allclose(gemm_tp(x, W, b), x @ W + b, atol=1e-5))

# collective matmul: all-gather overlapped with ppermute
@partial(shard_map, mesh=mesh, in_specs=(P('batch', None), P(None, 'batch')), out_specs=P(None, 'batch'))
def matmul_allgather_overlapped(lhs_block, rhs_block):
    size = jax.lax.axis_size('batch')
    idx = jax.lax.axis_index('batch')
    shift = partial(jax.lax.ppermute, axis_name='batch', perm=[(i, (i + 1) % size) for i in range(size)])
    B = lhs_block.shape[0]
    out_block = jnp.zeros((B * size, rhs_block.shape[1]))
    for i in range(size):
        out_block = lax.dynamic_update_slice(out_block, lhs_block @ rhs_block, (((idx - i) % size) * B, 0))
        lhs_block = shift(lhs_block)
    return out_block
lhs = jax.random.normal(jax.random.PRNGKey(3), (16, 8)); rhs = jax.random.normal(jax.random.PRNGKey(4), (8, 16))
print('collective matmul:', np.allclose(matmul_allgather_overlapped(lhs, rhs), lhs @ rhs, atol=1e-5))
jax.debug.visualize_array_sharding(jax.device_put(jnp.zeros((8, 8)), NamedSharding(jax.make_mesh((2, 4), ('a', 'b')), P('a', 'b'))))
