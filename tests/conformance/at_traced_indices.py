# x.at[i].set/add/multiply/max with traced integer indices (under jit, in a fori_loop, under vmap and grad): JAX's
# values, an index past the end dropping its update as JAX's scatter does.
import jax, jax.numpy as jnp
from jax import lax
x = jnp.arange(12.0).reshape(3, 4)
f = jax.jit(lambda x, i, j: (x.at[i].set(-1.0), x.at[i, j].add(100.0), x.at[:, j].multiply(2.0), x.at[i, 1].max(50.0), x.at[i].set(jnp.arange(4.0))))
for r in f(x, 1, -1): print(r)
for r in f(x, 7, 2): print(r)   # out of bounds: dropped
print(lax.fori_loop(0, 3, lambda k, a: a.at[k].set(k * 10), jnp.zeros(4, jnp.int32)))
print(jax.vmap(lambda a, i: a.at[i].set(9.0))(x, jnp.array([0, 3, 1])))
print(jax.grad(lambda a, i: a.at[i].set(0.0).sum() + (a.at[i].add(a[0]) ** 2).sum())(jnp.arange(3.0), 2))
