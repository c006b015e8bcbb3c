# spmd: devices=4 expect=ok
# spmd: expect-stdout: inside: Traced<float32[3]>with<DynamicJaxprTrace>
# spmd: expect-stdout: (4, 3)
# Python's print inside a pmap-ed function runs once, while tracing, and
# shows an abstract value, not per-device data (spmdsim also warns on stderr
# and suggests jax.debug.print).
import jax
import jax.numpy as jnp


def f(x):
    print("inside:", x)
    return x + 1

out = jax.pmap(f)(jnp.ones((4, 3)))
print(out.shape)
