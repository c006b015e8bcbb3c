# Issue 36's findings 20, 23 and 26 against real JAX: every creation function takes dtype=bfloat16 (eagerly,
# inside jit and inside pmap), zeros/ones/full inside a traced function are equations, not program constants,
# and an in_axes entry no array's rank reaches (2**70, or 0 for a nested pmap's scalar) is JAX's ValueError.
import jax
import jax.numpy as jnp

creators = {
    'zeros': lambda dt: jnp.zeros((2,), dtype=dt),
    'ones': lambda dt: jnp.ones((2,), dt),
    'full': lambda dt: jnp.full((2,), 3, dtype=dt),
    'empty_shape': lambda dt: jnp.zeros((2, 3), dtype=dt).shape,
    'arange': lambda dt: jnp.arange(3, dtype=dt),
    'linspace': lambda dt: jnp.linspace(0, 1, 3, dtype=dt),
    'eye': lambda dt: jnp.eye(2, dtype=dt),
    'identity': lambda dt: jnp.identity(2, dtype=dt),
    'tri': lambda dt: jnp.tri(2, dtype=dt),
    'zeros_like': lambda dt: jnp.zeros_like(jnp.ones(2), dtype=dt),
    'ones_like': lambda dt: jnp.ones_like(jnp.ones(2), dtype=dt),
    'full_like': lambda dt: jnp.full_like(jnp.ones(2), 2, dtype=dt),
}
for dt in (jnp.bfloat16, 'bfloat16', jnp.float16, jnp.int32):
    for name, make in creators.items():
        r = make(dt)
        print(name, dt if isinstance(dt, str) else dt.__name__, r if isinstance(r, tuple) else (r.dtype, r.tolist()))

print(jax.jit(lambda x: x + jnp.ones((3,), jnp.bfloat16))(jnp.arange(3.0).astype(jnp.bfloat16)))
print(jax.pmap(lambda x: x * jnp.full((2,), 2, dtype=jnp.bfloat16))(jnp.ones((8, 2), jnp.bfloat16)))
for fun in (lambda x: x + jnp.zeros((4,)), lambda x: jnp.full((2, 4), 7, jnp.bfloat16) * x):
    closed = jax.make_jaxpr(fun)(jnp.ones(4))
    print('broadcast_in_dim' in str(closed), str(closed).splitlines()[0])  # no constvars before the ';'

for axis in (2**70, -2**70):
    try:
        jax.pmap(lambda x: x * 2, in_axes=axis)(jnp.ones((8, 2)))
    except ValueError as e:
        print('ValueError:', e)


def outer(x):
    return jax.pmap(lambda y: y * 2, axis_name='inner')(x)


try:
    jax.pmap(outer)(jnp.ones((8,)))
except ValueError as e:
    print('ValueError:', e)
