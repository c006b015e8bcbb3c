# Issue 34: lax.split is JAX's split primitive (jnp.split and array_split use it), with JAX's ValueErrors, its
# gradient (the pieces' cotangents concatenated) and vmap.
import jax
import jax.numpy as jnp
from jax import lax

x = jnp.arange(12.0).reshape(3, 4)
print(jax.make_jaxpr(lambda a: lax.split(a, (1, 3), axis=1))(x))
print(jax.make_jaxpr(lambda a: lax.split(a, (2, 1), axis=-2))(x))
print([p.tolist() for p in lax.split(x, (1, 3), axis=1)])
for name, f in [('sum', lambda: lax.split(x, (1, 2), axis=1)), ('negative size', lambda: lax.split(x, (-1, 5), axis=1))]:
    try:
        print(name, [p.shape for p in f()])
    except ValueError as e:
        print(name, 'ValueError', getattr(e, 'message', e))  # spmdsim's: the message without report
print(jax.grad(lambda a: jnp.sum(lax.split(a, (1, 3), axis=1)[1] ** 2))(x).tolist())
print(jax.jvp(lambda a: lax.split(a, (2, 2), axis=1)[0], (x,), (jnp.ones_like(x),))[1].tolist())
print([p.tolist() for p in jax.vmap(lambda a: lax.split(a, (2, 2), axis=0))(x)])
print([p.shape for p in jnp.split(x, 2, axis=1)], [p.shape for p in jnp.array_split(x, 3, axis=1)])
print([p.tolist() for p in jnp.split(jnp.arange(6), [1, 4])])
