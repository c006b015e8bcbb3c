# Issue 36, finding 26 (the rest of it): jnp.arange, linspace, eye, identity and tri are iota equations in a
# traced program (as in JAX), so the device that runs it makes them in its own arena; their values, dtypes and
# errors against real JAX, eagerly, under jit and under pmap.
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

cases = {
    'arange(5)': lambda: jnp.arange(5),
    'arange(2.5)': lambda: jnp.arange(2.5),
    'arange(1, 4)': lambda: jnp.arange(1, 4),
    'arange(0, 5)': lambda: jnp.arange(0, 5),
    'arange(0, 5, 2)': lambda: jnp.arange(0, 5, 2),
    'arange(0.5, 2, 0.25)': lambda: jnp.arange(0.5, 2, 0.25),
    'arange(3, bf16)': lambda: jnp.arange(3, dtype=jnp.bfloat16),
    'arange(np.int32(4))': lambda: jnp.arange(np.int32(4)),
    'arange(4, float16)': lambda: jnp.arange(4, dtype=jnp.float16),
    'linspace(0, 1, 5)': lambda: jnp.linspace(0, 1, 5),
    'linspace(0, 1, 4, endpoint=False)': lambda: jnp.linspace(0, 1, 4, endpoint=False),
    'linspace(0, 10, 4, int32)': lambda: jnp.linspace(0, 10, 4, dtype=jnp.int32),
    'linspace(arrays, axis=1)': lambda: jnp.linspace(jnp.zeros(2), jnp.array([1.0, 2.0]), 3, axis=1),
    'linspace(0, 1, 0)': lambda: jnp.linspace(0, 1, 0),
    'linspace(2, 3, 1, retstep)': lambda: jnp.linspace(2, 3, 1, retstep=True),
    'linspace(0, 1, 3, retstep)': lambda: jnp.linspace(0, 1, 3, retstep=True),
    'eye(3, 4, 1, int)': lambda: jnp.eye(3, 4, 1, dtype=int),
    'eye(2, k=-1)': lambda: jnp.eye(2, k=-1),
    'identity(2, bf16)': lambda: jnp.identity(2, dtype=jnp.bfloat16),
    'tri(3, k=-1)': lambda: jnp.tri(3, k=-1),
    'tri(2, 3, dtype=int32)': lambda: jnp.tri(2, 3, dtype=jnp.int32),
    'lax.iota(float32, 3)': lambda: lax.iota(jnp.float32, 3),
    'lax.broadcasted_iota(int32, (2, 3), 1)': lambda: lax.broadcasted_iota(jnp.int32, (2, 3), 1),
}


def show(r):
    if isinstance(r, tuple):
        return tuple(show(x) for x in r)
    return (str(r.dtype), r.shape, r.tolist())


for name, make in cases.items():
    eager = show(make())
    jitted = show(jax.jit(make)())
    print(name, eager, 'jit agrees' if repr(jitted) == repr(eager) else f'jit differs: {jitted}')

for name, make in [('arange(-3)', lambda: jnp.arange(-3)), ('arange(5, dtype=bool)', lambda: jnp.arange(5, dtype=bool)),
                   ('broadcasted_iota dimension 2', lambda: lax.broadcasted_iota(jnp.int32, (2, 3), 2)),
                   ('eye(2, k=0.5)', lambda: jnp.eye(2, k=0.5)), ('linspace num -1', lambda: jnp.linspace(0, 1, -1))]:
    try:
        make()
    except (TypeError, ValueError) as e:
        print(name, type(e).__name__, e)

# Under pmap each device makes its own: a per-device offset added to the same iota.
print(jax.pmap(lambda x: jnp.arange(4) * x + jnp.eye(4)[1])(jnp.arange(8.0)))
print(jax.pmap(lambda x: jnp.linspace(0, x, 3))(jnp.arange(8.0))[-1])

# The traced program has no constants before its ';' and makes each with iota.
for fun in (lambda: jnp.arange(6), lambda: jnp.eye(3), lambda: jnp.tri(2), lambda: jnp.linspace(0.0, 1.0, 4)):
    text = str(jax.make_jaxpr(fun)())
    print(text.split(';')[0] + ';', text.count(' = iota['))

# The bounds must be concrete: JAX's ConcretizationTypeError, naming the argument.
try:
    jax.jit(lambda n: jnp.arange(n))(3)
except jax.errors.ConcretizationTypeError as e:
    print('ConcretizationTypeError', "It arose in the jnp.arange argument 'stop'" in str(e))
