# Devices printing with no collective in between: every print waits in the
# ordered queue until the devices finish (issue 19, finding 9: quadratic).
import os

import jax
import jax.numpy as jnp
from jax import lax

N = int(os.environ.get('PRINTS', '10000'))


def body(k, c):
    jax.debug.print("k={k}", k=k)
    return c + 1


jax.pmap(lambda x: lax.fori_loop(0, N, body, x))(jnp.arange(4))
