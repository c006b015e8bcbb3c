# The same per-device work as mlp.py in numpy (one thread): for each of 8
# devices in turn the forward and backward pass, then the mean of the
# gradients and the update. Prints the seconds of STEPS steps after one warm-up.
import os
import time

import numpy as np

STEPS = int(os.environ.get('STEPS', '100'))
D, B, N = 256, 64, 8
rng = np.random.default_rng(0)
w1 = (rng.standard_normal((D, D)) * 0.05).astype(np.float32)
b1 = np.zeros(D, np.float32)
w2 = (rng.standard_normal((D, D)) * 0.05).astype(np.float32)
b2 = np.zeros(D, np.float32)
x = rng.standard_normal((N, B, D)).astype(np.float32)
y = rng.standard_normal((N, B, D)).astype(np.float32)


def grads(xd, yd):
    h = np.tanh(xd @ w1 + b1)
    out = h @ w2 + b2
    d_out = (2.0 / out.size) * (out - yd)
    g_w2 = h.T @ d_out
    g_b2 = d_out.sum(axis=0)
    d_h = (d_out @ w2.T) * (1 - h * h)
    return xd.T @ d_h, d_h.sum(axis=0), g_w2, g_b2


def step():
    global w1, b1, w2, b2
    gs = [grads(x[d], y[d]) for d in range(N)]
    mean = [sum(g[k] for g in gs) / N for k in range(4)]
    w1, b1, w2, b2 = (p - np.float32(0.01) * g for p, g in zip((w1, b1, w2, b2), mean))


step()
t0 = time.perf_counter()
for _ in range(STEPS):
    step()
print(f'seconds {time.perf_counter() - t0:.4f} checksum {float(w1.sum()):.6f}')
