# spmd: devices=2 expect=error:ConcretizationTypeError expect-line=9
# int() of a traced value: the value is not known while tracing.
import jax
import jax.numpy as jnp
from jax import lax


def f(x):
    n = int(lax.axis_index('i'))
    return x * n

print(jax.pmap(f, axis_name='i')(jnp.ones(2)))
