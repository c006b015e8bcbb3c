# spmd: devices=4 expect=error:UnexpectedTracerError expect-line=19
# A side effect inside the mapped function: appending to a list defined
# outside it. JAX runs it once while tracing and stores a tracer, not one
# value per device; using that value afterwards is JAX's
# UnexpectedTracerError. spmdsim also warns at the append.
import jax
import jax.numpy as jnp

seen = []


def f(x):
    seen.append(x)
    return x * 2

out = jax.pmap(f)(jnp.arange(4.0))
print(len(seen))
# the stored value is a per-device intermediate, not a host array
print(seen[0] + 1)
