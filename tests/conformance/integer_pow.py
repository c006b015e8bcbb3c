# Issue 34: x ** n for a concrete integer n is one integer_pow equation, as JAX records it, computed by JAX's
# unrolled multiplications (so x ** 2 is x * x to the bit), with JAX's errors, gradients and batching.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

x = jnp.arange(1.0, 4.0)
i = jnp.arange(1, 4)


def fails(name, f):
    try:
        print(name, 'ok', f())
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        print(name, type(e).__name__, getattr(e, 'message', e))  # spmdsim's: the message without report


fails('int neg', lambda: lax.integer_pow(i, -2))
fails('weak int neg', lambda: jax.jit(lambda a: lax.integer_pow(a, -2))(3))
fails('bool', lambda: lax.integer_pow(jnp.array([True]), 2))
fails('jnp int neg', lambda: jnp.power(i, -2))
fails('int ** -1', lambda: i ** -1)
fails('float y', lambda: lax.integer_pow(x, 2.0))
print(jax.make_jaxpr(lambda a: (a ** 2, a ** 0, a ** -3, jnp.power(a, 3), jnp.square(a), a ** 1))(x))
print(jax.make_jaxpr(lambda a: (a ** 2, jnp.power(a, 3), a ** np.int32(2), a ** True))(i))
print(jax.make_jaxpr(jax.vmap(lambda a: a ** 2))(x))
print(jax.make_jaxpr(lambda a: a ** 2)(3.0))
print(jax.make_jaxpr(lambda a: jnp.power(a, 2.0))(x))
print(x ** 2, x ** -3, x ** 0, i ** 5, i ** 0, float(jnp.float16(3.0) ** 7), jnp.array([2, 3]) ** 21, jnp.array([True]) ** 3)
print(jax.jit(lambda a: (a ** 2 + 1) ** -2)(x), jax.jit(lambda a: a ** 0 + a ** 7)(x))
print(jax.grad(lambda a: jnp.sum(a ** -2 * jnp.sin(a)))(x), jax.hessian(lambda a: jnp.sum(a ** 4))(x))
print(jax.grad(lambda a: jnp.sum(a ** 0 + a ** 1))(x), jax.jvp(lambda a: a ** 3, (x,), (x,)))
print(jax.vmap(jax.grad(lambda a: a ** 5))(x))
# bit for bit: x ** 3 is (x * x) * x, not pow's exp(3 log x)
r = jnp.linspace(0.1, 7.0, 50, dtype=jnp.float32)
print(np.asarray(r ** 3).view(np.uint32).tolist() == np.asarray((r * r) * r).view(np.uint32).tolist())
# A cond whose branches differ only in weak types (x ** 3's tangent is strong, sin's weak): JAX's typematch.
f = lambda p, v: lax.cond(p, lambda u: u * 2.0, lambda u: u.astype(jnp.float32), v)
print(jax.make_jaxpr(f)(True, 1.0))
print(repr(f(True, 1.0)), repr(f(False, 1.0)))
print(jax.grad(lambda v: lax.cond(v > 0, lambda u: u ** 3, lambda u: jnp.sin(u), v))(2.0))
