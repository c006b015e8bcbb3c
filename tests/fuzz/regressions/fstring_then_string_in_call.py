# spmd: devices=4 expect=error:TypeError expect-line=11 expect-message=Expected a callable value, got ', axis_name=devices'
# Found by tools/fuzz.sh (scenario target, a timeout): an f-string followed by
# another string literal sent the parser into an endless loop. Here the two
# literals concatenate into one string passed where pmap wants the function.
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    n = lax.axis_index('devices') + 1
    return x * n
print(jax.pmap(f', axis_name=''devices')(jnp.ones(4)))
