# spmd: devices=4 expect=deadlock expect-line=27 expect-decision-line=32
# An iterative solver inside pmap: each device refines its own block until
# its residual is small, and every iteration syncs a global residual with
# psum. The devices converge after different numbers of iterations, so the
# first to finish leaves the loop while the others wait at the psum of
# their next iteration: a hang on GPUs. spmdsim reports the deadlock and
# the while_loop whose test first came out differently between devices.
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


def jacobi_block(a_diag, b, tol=1e-4, max_iter=100):
    """Solves diag(a_diag) x = b by Richardson iteration on one device's block."""

    def cond(state):
        x, k, residual = state
        # BUG: the test uses this device's residual; the loop body runs a
        # collective, so every device must run the same number of iterations
        # (test the psum-ed residual, which all devices share, instead).
        return (residual > tol) & (k < max_iter)

    def body(state):
        x, k, _ = state
        x = x + 0.1 * (b - a_diag * x)
        lax.psum(jnp.sum(x), "blocks")  # a global progress metric
        residual = jnp.max(jnp.abs(b - a_diag * x))
        return x, k + 1, residual

    x0 = jnp.zeros_like(b)
    return lax.while_loop(cond, body, (x0, 0, jnp.array(1.0)))


rng = np.random.default_rng(3)
a = (1.0 + rng.random((4, 8))).astype(np.float32) * np.arange(1, 5, dtype=np.float32)[:, None]
b = np.ones((4, 8), dtype=np.float32)
x, iterations, residual = jax.pmap(jacobi_block, axis_name="blocks")(a, b)
print(iterations)
