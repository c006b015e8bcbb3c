# matmul.py's work in numpy (OpenBLAS on OPENBLAS_NUM_THREADS threads): GFLOP/s, median of 5.
import os
import time

import numpy as np

N = int(os.environ.get('N', '1024'))
rng = np.random.default_rng(0)
a = rng.standard_normal((N, N)).astype(np.float32)
b = rng.standard_normal((N, N)).astype(np.float32)
a @ b
ts = []
for _ in range(5):
    t0 = time.perf_counter()
    a @ b
    ts.append(time.perf_counter() - t0)
ts.sort()
print(f'gflops {2 * N ** 3 / ts[2] / 1e9:.2f}')
