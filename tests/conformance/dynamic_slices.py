# Issue 34: lax.dynamic_slice and dynamic_update_slice are JAX's primitives: one equation each, a negative traced
# start counted from the end (lt/add/select_n) and a static one folded, windows clamped to fit as XLA clamps them;
# gradients, vmap with starts shared by the examples or their own, scan's per-step reads and writes.
import jax
import jax.numpy as jnp
from jax import lax

x = jnp.arange(20.0).reshape(5, 4)
u = jnp.ones((2, 2)) * -1

print(jax.make_jaxpr(lambda a, i: lax.dynamic_slice(a, (i, 1), (2, 2)))(x, 3))
print(jax.make_jaxpr(lambda a, i: lax.dynamic_update_slice(a, u, (i, -1)))(x, 1))
print(jax.make_jaxpr(lambda a: lax.dynamic_slice(a, (-2, 0), (2, 4)))(x))
for i in [-7, -1, 0, 2, 4, 9]:
    print(i, lax.dynamic_slice(x, (i, 1), (2, 2)).tolist(), jax.jit(lax.dynamic_update_slice)(x, u, (i, 3)).tolist())
print(jax.grad(lambda a, i: jnp.sum(lax.dynamic_slice(a, (i, 1), (2, 2)) ** 2))(x, 2).tolist())
print(jax.grad(lambda a, v: jnp.sum(lax.dynamic_update_slice(a, v, (1, 1)) * a), argnums=(0, 1))(x, u))
print(jax.jvp(lambda a: lax.dynamic_update_slice(a, u * a[0, 0], (3, 2)), (x,), (jnp.ones_like(x),))[1].tolist())
# vmap: the same start for every example (one dynamic_slice over the batch, where JAX writes a gather), then each
# example its own
print(jax.vmap(lambda a: lax.dynamic_slice(a, (1,), (2,)))(x).tolist())
print(jax.vmap(lambda a, i: lax.dynamic_slice(a, (i,), (2,)))(x, jnp.array([0, 1, 2, 3, -1])).tolist())
print(jax.vmap(lambda a, i: lax.dynamic_update_slice(a, jnp.zeros(2), (i,)))(x, jnp.array([0, 1, 2, 3, 9])).tolist())
print(jax.vmap(lambda i: lax.dynamic_slice_in_dim(x, i, 2, axis=0))(jnp.array([0, 4])).tolist())
# scan reads and writes one row per step
ys = lax.scan(lambda c, row: (c + row, c * row), jnp.zeros(4), x)
print(ys[0].tolist(), ys[1].tolist())
print(jax.grad(lambda a: jnp.sum(lax.scan(lambda c, row: (c * row, c), jnp.ones(4), a)[1]))(x / 10).tolist())
# A negative int index is JAX's dynamic_slice (the start counted from the end in the program), then a squeeze.
m, w = jnp.arange(20.0).reshape(5, 4), jnp.arange(5.0)
for f, a in [(lambda a: a[-1], m), (lambda a: a[-1], w), (lambda a: a[1:, -2], m), (lambda a: a[-5, 1:3], m),
             (lambda a: a[..., -1], m)]:
    print(jax.make_jaxpr(f)(a))
    print(f(a).tolist())
print(jax.grad(lambda a: jnp.sum(a[-1] * a[-2, 1]))(m).tolist())
print(jax.vmap(lambda a: a[-1])(m).tolist())
