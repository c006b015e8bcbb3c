# Issue 34: lax.cumsum / lax.cumprod with reverse, recorded as JAX's cumsum[axis=... reverse=...]; values (rounded:
# XLA sums by an associative scan, spmdsim in order), gradients through JAX's transpose (the running sum the other
# way), forward-mode and vmap.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax


def show(v):
    print(np.round(np.asarray(v, dtype=np.float64), 4).tolist())


x = jnp.arange(1.0, 13.0).reshape(3, 4) / 5
for rev in (False, True):
    print(jax.make_jaxpr(lambda a: lax.cumsum(a, 1, reverse=rev))(x))
    print(jax.make_jaxpr(lambda a: lax.cumprod(a, axis=0, reverse=rev))(x))
    show(lax.cumsum(x, 1, reverse=rev))
    show(lax.cumprod(x, 0, reverse=rev))
    show(jax.grad(lambda a: jnp.sum(lax.cumsum(a, 1, reverse=rev) ** 2))(x))
    show(jax.grad(lambda a: jnp.sum(jnp.sin(lax.cumprod(a, 0, reverse=rev))))(x))
    show(jax.jvp(lambda a: lax.cumprod(a, 1, reverse=rev), (x,), (jnp.ones_like(x),))[1])
    show(jax.vmap(lambda a: lax.cumsum(a, 0, reverse=rev))(x))
show(jnp.cumsum(x, 0))
show(jnp.cumprod(x)[:3])
try:
    lax.cumsum(x, -1)
except ValueError as e:
    print('ValueError', e)
