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

# lax.slice and indexing by static ints and contiguous slices (one slice, then a squeeze; x[::-1] a rev).
s = jnp.arange(20.0).reshape(5, 4)
for f in [lambda a: a[1], lambda a: a[1:3], lambda a: a[:, 1], lambda a: a[-2:], lambda a: a[::-1], lambda a: a[1:, 2],
          lambda a: a[7:], lambda a: a[..., 1], lambda a: lax.slice(a, (1, 0), (5, 4), (2, 3)),
          lambda a: lax.slice_in_dim(a, 1, 3, axis=1), lambda a: lax.rev(a, (1,))]:
    print(jax.make_jaxpr(f)(s))
    print(f(s).tolist())
print(jax.grad(lambda a: jnp.sum(lax.slice(a, (1, 0), (5, 4), (2, 3)) ** 2))(s).tolist())
print(jax.grad(lambda a: jnp.sum(a[1:3, 2] * a[0, 1:3]))(s).tolist())
print(jax.make_jaxpr(jax.vmap(lambda a: lax.slice(a, (1,), (3,))))(s))
print(jax.vmap(lambda a: a[1:3] * a[0:2])(s).tolist(), jax.vmap(lambda a: lax.slice(a, (0,), (4,), (3,)))(s).tolist())
for name, f in [('limit > dim', lambda: lax.slice(s, (0, 0), (6, 4))), ('start > limit', lambda: lax.slice(s, (3, 0), (2, 4))),
                ('strides len', lambda: lax.slice(s, (0, 0), (2, 4), (1,)))]:
    try:
        f()
    except TypeError as e:
        # up to the values, which JAX 0.8.1 prints as numpy 2 reprs (np.int64(6)) where spmdsim prints 6
        print(name, str(getattr(e, 'message', e)).split(', got')[0])  # spmdsim's: the message without report
