# spmd: devices=2 expect=error:TracerBoolConversionError expect-line=10
# A Python `if` on a value computed from the mapped input: inside pmap values
# are traced, so Python cannot branch on them. Use lax.cond or jnp.where.
import jax
import jax.numpy as jnp


def relu_sum(x):
    s = x.sum()
    if s > 0:
        return s
    return 0.0

print(jax.pmap(relu_sum)(jnp.ones((2, 3))))
