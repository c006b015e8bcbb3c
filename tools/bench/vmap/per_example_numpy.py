# The numpy peer of vmap_vs_batched.py's MLP case: the same per-example
# gradients (64 -> 256 tanh -> 256, squared error) computed with batched
# einsum, median milliseconds per call for each batch size.
#
#   python3 tools/bench/vmap/per_example_numpy.py     (BATCHES=16,256,4096 REPS=...)
import os
import statistics
import time

import numpy as np

BATCHES = [int(b) for b in os.environ.get('BATCHES', '16,256,4096').split(',')]
D_IN, HIDDEN, D_OUT = 64, 256, 256


def per_example_grads(params, xs, ys):
    w1, b1, w2, b2 = params
    h = np.tanh(xs @ w1 + b1)
    out = h @ w2 + b2
    d_out = 2 * (out - ys)
    d_h = (d_out @ w2.T) * (1 - h * h)
    return (np.einsum('bi,bj->bij', xs, d_h), d_h, np.einsum('bi,bj->bij', h, d_out), d_out)


rng = np.random.default_rng(0)
params = tuple(a.astype(np.float32) for a in (rng.normal(size=(D_IN, HIDDEN)) * 0.1, np.zeros(HIDDEN),
                                              rng.normal(size=(HIDDEN, D_OUT)) * 0.1, np.zeros(D_OUT)))
for b in BATCHES:
    reps = int(os.environ.get('REPS', str(max(5, 2000 // b))))
    xs = rng.normal(size=(b, D_IN)).astype(np.float32)
    ys = rng.normal(size=(b, D_OUT)).astype(np.float32)
    per_example_grads(params, xs, ys)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        per_example_grads(params, xs, ys)
        times.append((time.perf_counter() - t0) * 1e3)
    print(f'| numpy per-example gradient | {b} | {statistics.median(times):.3f} ms |', flush=True)
