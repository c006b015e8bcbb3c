# Issue 34: jax.make_jaxpr's text is laid out as JAX lays it out (its Wadler-Lindig printer at 80 columns: a short
# jaxpr on one line with '; ' between equations, parameters broken one per line when they do not fit), with JAX's
# names for a nested jit (jit[name=... jaxpr=...], its variables named like the call's) and a cond's parameters.
import jax
import jax.numpy as jnp
from jax import lax

print(jax.make_jaxpr(lambda x: jnp.sin(x) * jnp.cos(x))(jnp.ones(3)))
print(jax.make_jaxpr(lambda x: jnp.tanh(jnp.sin(jnp.cos(jnp.exp(x)))) * jnp.log(x) - jnp.sqrt(x))(jnp.ones((3, 4))))
print(jax.make_jaxpr(lambda x: jax.jit(jnp.sin)(x) * 2.0)(jnp.ones(3)))
print(jax.make_jaxpr(lambda x: jax.jit(lambda a, b: (b, a * b))(x, x + 1.0))(jnp.ones(2)))
print(jax.make_jaxpr(lambda x, y: lax.cond(x > 0.0, lambda v: v, lambda v: -v * 2.0, y))(1.0, jnp.ones(3)))
