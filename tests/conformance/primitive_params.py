# Issue 34: primitives recorded with JAX's parameters and computed as JAX computes them: lax.round's rounding
# methods (halves away from zero by default, to even for jnp.round), squeeze, new axes by indexing (one
# broadcast_in_dim), and the sharding parameters JAX prints as None.
import jax
import jax.numpy as jnp
from jax import lax

x = jnp.array([0.5, 1.5, 2.5, -0.5, -2.5])
m = jnp.ones((3, 4))

print(jax.make_jaxpr(lambda a: lax.round(a))(x))
print(jax.make_jaxpr(lambda a: lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN))(x))
print(jax.jit(lambda a: (lax.round(a), jnp.round(a), jnp.rint(a), jnp.round(a, 1)))(x))
print(jax.vmap(lambda a: lax.round(a))(x), jax.grad(lambda a: jnp.sum(lax.round(a) * a))(x))

for f in [lambda a: a[:], lambda a: a[None], lambda a: a[:, None], lambda a: a[..., None], lambda a: a[None, ..., None],
          lambda a: a[None, :, None, :], lambda a: a[...], lambda a: jnp.squeeze(a[None]), lambda a: a.reshape(12),
          lambda a: jnp.sum(a), lambda a: jnp.zeros((2,)) + lax.iota(jnp.float32, 2), lambda a: lax.squeeze(a[:, None], (1,))]:
    print(jax.make_jaxpr(f)(m))
print(jax.grad(lambda a: jnp.sum(jnp.squeeze(a[None, :, None]) ** 2))(m))
print(jax.vmap(lambda a: jnp.squeeze(a[None]) * 2)(m))
try:
    lax.squeeze(m, (0,))
except ValueError as e:
    print('ValueError', e)
