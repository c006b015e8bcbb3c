# chain.py's work in numpy: the same 20 ops, one array op at a time, for each
# of 8 devices' 1M float32 in turn; CHAIN_REPS (10) applications after one warm-up.
import os
import time

import numpy as np

REPS = int(os.environ.get('CHAIN_REPS', '10'))
N = 8
x = (np.arange(N * (1 << 20), dtype=np.float32) / (1 << 20)).reshape(N, 1 << 20)
f32 = np.float32


def chain(x):
    y = x * f32(1.5)
    y = y + f32(0.25)
    y = np.abs(y)
    y = y - f32(1.0)
    y = y * f32(0.5)
    y = np.maximum(y, f32(0.0))
    y = y + f32(2.0)
    y = np.sqrt(y)
    y = y * y
    y = y - f32(0.125)
    y = np.tanh(y)
    y = y * f32(3.0)
    y = y + f32(1.0)
    y = np.log(y)
    y = y * f32(0.75)
    y = y - f32(0.5)
    y = np.abs(y)
    y = y + f32(1e-3)
    y = np.minimum(y, f32(10.0))
    return y * f32(2.0)


def run():
    return [chain(x[d]) for d in range(N)]


run()
t0 = time.perf_counter()
for _ in range(REPS):
    ys = run()
print(f'seconds {time.perf_counter() - t0:.4f} checksum {float(sum(y.sum(dtype=np.float64) for y in ys)):.3f}')
