# spmd: devices=2 expect=error:ValueError expect-line=29 expect-message=must be passed positionally
# A static argument (the activation's name, a Python string) declared with
# static_broadcasted_argnums but passed by keyword, as a refactor that adds
# keyword calls does. JAX cannot see it as static then and says it must be
# passed positionally; spmdsim gives JAX's error at the call.
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

ACTIVATIONS = {"relu": jax.nn.relu, "gelu": jax.nn.gelu, "tanh": jnp.tanh}


@partial(jax.pmap, axis_name="i", static_broadcasted_argnums=(2,))
def layer(x, w, activation):
    h = ACTIVATIONS[activation](x @ w)
    return lax.psum(h.sum(), "i")


x = jnp.ones((2, 3, 4))
w = jnp.ones((2, 4, 5)) * 0.1

# Positional: fine.
print(layer(x, w, "relu"))

# BUG: by keyword, the static argument is not where
# static_broadcasted_argnums says it is.
print(layer(x, w, activation="tanh"))
