# spmd: devices=8 expect=ok
# spmd: expect-stdout: ring sum == psum: True
# spmd: expect-stdout: per device: [28. 28. 28. 28. 28. 28. 28. 28.]
# spmd: expect-stdout: bidirectional ring sum == psum: True
# The shard_map tutorial's ring collectives: an all-reduce written with
# lax.ppermute around a 1-D mesh of 8 devices (each step passes the running
# block to the right neighbour and adds its own), checked against psum; then
# the same with blocks travelling both ways at once, half the steps.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ('x',))
n = mesh.shape['x']
right = [(i, (i + 1) % n) for i in range(n)]
left = [(i, (i - 1) % n) for i in range(n)]


def ring_allreduce(block):
    def step(_, carry):
        acc, travelling = carry
        travelling = lax.ppermute(travelling, 'x', right)
        return acc + travelling, travelling
    acc, _ = lax.fori_loop(0, n - 1, step, (block, block))
    return acc


def bidirectional_allreduce(block):
    def step(_, carry):
        acc, to_right, to_left = carry
        to_right = lax.ppermute(to_right, 'x', right)
        to_left = lax.ppermute(to_left, 'x', left)
        return acc + to_right + to_left, to_right, to_left
    acc, to_right, _ = lax.fori_loop(0, (n - 1) // 2, step, (block, block, block))
    # n = 8 is even: the block opposite arrives once more from one side.
    return acc + lax.ppermute(to_right, 'x', right)


x = jnp.arange(8.0)
ring = jax.jit(jax.shard_map(ring_allreduce, mesh=mesh, in_specs=P('x'), out_specs=P('x')))(x)
reference = jax.shard_map(lambda b: lax.psum(b, 'x'), mesh=mesh, in_specs=P('x'), out_specs=P('x'))(x)
print('ring sum == psum:', bool(np.array_equal(np.asarray(ring), np.asarray(reference))))
print('per device:', np.asarray(ring))
both = jax.shard_map(bidirectional_allreduce, mesh=mesh, in_specs=P('x'), out_specs=P('x'))(x)
print('bidirectional ring sum == psum:', bool(np.array_equal(np.asarray(both), np.asarray(reference))))
