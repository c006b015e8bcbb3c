# Issue 36's finding 24 against real JAX: a user's __jax_array__ is called by jnp.asarray / jnp.array only
# (elsewhere JAX 0.8.1's "no longer supported" ValueError), and an exception raised by a user's __array__
# or __jax_array__ surfaces as it was raised.
import jax
import jax.numpy as jnp


class Wrapped:
    def __init__(self, values):
        self.values = values

    def __jax_array__(self):
        return jnp.asarray(self.values) * 2


class BrokenJaxArray:
    def __jax_array__(self):
        raise RuntimeError('broken __jax_array__')


class BrokenArray:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError('broken __array__')


print(jnp.asarray(Wrapped([1.0, 2.0])), jnp.array(Wrapped([3, 4])), jnp.asarray(Wrapped([1, 2]), jnp.float32))
for value in (Wrapped([1.0]), BrokenJaxArray()):
    for name, use in (('add', lambda v: jnp.add(v, 1)), ('jit', lambda v: jax.jit(lambda x: x)(v)),
                      ('sum', lambda v: jnp.sum(v))):
        try:
            use(value)
        except ValueError as e:
            print(type(value).__name__, name, 'ValueError:', e)
for name, use in (('asarray', jnp.asarray), ('pmap', lambda v: jax.pmap(lambda x: x)(v))):
    try:
        use(BrokenArray())
    except RuntimeError as e:
        print(name, 'RuntimeError:', e)
try:
    jnp.asarray(BrokenJaxArray())
except RuntimeError as e:
    print('asarray RuntimeError:', e)
