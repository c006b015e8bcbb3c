# vmap against the same function written batched by hand (issue 34), side by
# side in one run, both under jax.jit: an MLP per-example gradient
# (vmap(grad(loss), in_axes=(None, 0, 0)) against the per-example gradients
# written with batched einsums) and a convolution written with vmap (one
# image per call) against the convolution of the whole batch. For each batch
# size: the median milliseconds per call, the ratio, the jaxpr's equation
# count and the trace time of the vmap form.
#
#   spmd run tools/bench/vmap/vmap_vs_batched.py       (BATCHES=16,256,4096 REPS=...)
import os
import statistics
import time

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

BATCHES = [int(b) for b in os.environ.get('BATCHES', '16,256,4096').split(',')]
D_IN, HIDDEN, D_OUT = 64, 256, 256


def loss(params, x, y):
    w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return jnp.sum((out - y) ** 2)


def per_example_grads_by_hand(params, xs, ys):
    """The same per-example gradients, backpropagated by hand over the batch."""
    w1, b1, w2, b2 = params
    h = jnp.tanh(xs @ w1 + b1)
    out = h @ w2 + b2
    d_out = 2 * (out - ys)
    d_h = (d_out @ w2.T) * (1 - h * h)
    return (jnp.einsum('bi,bj->bij', xs, d_h), d_h, jnp.einsum('bi,bj->bij', h, d_out), d_out)


def conv_one(image, kernel):
    return lax.conv_general_dilated(image[None], kernel, (1, 1), 'SAME')[0]


def conv_batch(images, kernel):
    return lax.conv_general_dilated(images, kernel, (1, 1), 'SAME')


def median_ms(f, *args, reps):
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def trace(f, *args):
    t0 = time.perf_counter()
    jaxpr = jax.make_jaxpr(f)(*args)
    return len(jaxpr.eqns), (time.perf_counter() - t0) * 1e3


def row(name, batch, vmapped, by_hand, args, reps):
    v = median_ms(jax.jit(vmapped), *args, reps=reps)
    h = median_ms(jax.jit(by_hand), *args, reps=reps)
    eqns, trace_ms = trace(vmapped, *args)
    hand_eqns, _ = trace(by_hand, *args)
    print(f'| {name} | {batch} | {v:.3f} ms | {h:.3f} ms | {v / h:.2f}x | {eqns} ({hand_eqns}) | {trace_ms:.1f} ms |',
          flush=True)


rng = np.random.default_rng(0)
params = tuple(jnp.asarray(a, jnp.float32) for a in (rng.normal(size=(D_IN, HIDDEN)) * 0.1, np.zeros(HIDDEN),
                                                     rng.normal(size=(HIDDEN, D_OUT)) * 0.1, np.zeros(D_OUT)))
kernel = jnp.asarray(rng.normal(size=(8, 3, 3, 3)), jnp.float32)  # OIHW: 3 channels in, 8 out, 3x3
vmapped_grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
print('| case | batch | vmap(f) | f batched by hand | ratio | jaxpr equations (by hand) | trace of vmap(f) |')
print('| --- | --- | --- | --- | --- | --- | --- |')
for b in BATCHES:
    reps = int(os.environ.get('REPS', str(max(5, 2000 // b))))
    xs = jnp.asarray(rng.normal(size=(b, D_IN)), jnp.float32)
    ys = jnp.asarray(rng.normal(size=(b, D_OUT)), jnp.float32)
    got = jax.jit(vmapped_grads)(params, xs, ys)
    want = jax.jit(per_example_grads_by_hand)(params, xs, ys)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-4)
    row('MLP per-example gradient', b, vmapped_grads, per_example_grads_by_hand, (params, xs, ys), reps)
for b in BATCHES:
    reps = int(os.environ.get('REPS', str(max(5, 2000 // b))))
    images = jnp.asarray(rng.normal(size=(b, 3, 16, 16)), jnp.float32)
    vmapped_conv = jax.vmap(conv_one, in_axes=(0, None))
    np.testing.assert_allclose(np.asarray(jax.jit(vmapped_conv)(images, kernel)),
                               np.asarray(jax.jit(conv_batch)(images, kernel)), rtol=1e-4, atol=1e-4)
    row('convolution 3x16x16, 8 3x3 filters', b, vmapped_conv, conv_batch, (images, kernel), reps)
