# Issue 34: jax.make_jaxpr prints what JAX prints for jnp's binary operators: both operands promoted to one dtype
# first (a Python scalar as a weak literal of that dtype, an array through convert_element_type), a non-scalar of
# lower rank given leading axes of 1 (broadcast_in_dim), true_divide of integers in floats; arrays the function
# closes over are constvars. Values and dtypes too.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

x = jnp.arange(12.0).reshape(3, 4) / 7
v = jnp.arange(4.0)
i = jnp.arange(6, dtype=jnp.int32)
h = jnp.ones(3, jnp.float16)
b = jnp.array([True, False, True])

cases = {
    'float array and python int': lambda a: a * 2 + 1,
    'float array and python float': lambda a: a - 0.5,
    'int array and python float': lambda a: a.astype(jnp.int32) * 1.5,
    'int array and float array': lambda a: a.astype(jnp.int32) + a,
    'bool and float array': lambda a: (a > 1) * a,
    'bool and python int': lambda a: (a > 1) + 1,
    'lower rank': lambda a: a + a[0],
    'true_divide of ints': lambda a: a.astype(jnp.int32) / 2,
    'int floor ops': lambda a: a.astype(jnp.int32) * 3 - 1,
    'comparisons': lambda a: (a > 1, a == 2, a <= a[1]),
    'float16 with python float': lambda a: a.astype(jnp.float16) * 0.5,
    'closed-over arrays': lambda a: a @ x.T + v[:3] * v[1:],
    'closed-over int array': lambda a: a.astype(jnp.int32) + i[:4],
    'maximum and minimum': lambda a: jnp.minimum(jnp.maximum(a, 0.25), 2),
    # jnp functions JAX writes with these primitives
    'isnan': lambda a: (jnp.isnan(a), jnp.isnan(a.astype(jnp.int32))),
    'outer': lambda a: jnp.outer(a[0], a[1]),
    'argmax': lambda a: (jnp.argmax(a, 1), jnp.argmin(a)),
    # a weak carry stays weak; one the body gives another dtype starts promoted
    'while weak carry': lambda a: lax.while_loop(lambda c: c < 5, lambda c: c + 1, 0) + a[0, 0],
    'while promoted carry': lambda a: lax.while_loop(lambda c: c < 5, lambda c: c + 0.5, 0) * a[0, 0],
    'keepdims': lambda a: (jnp.mean(a, axis=1, keepdims=True), jnp.sum(a, axis=0, keepdims=True),
                           jnp.max(a, axis=(0, 1), keepdims=True)),
}
for name, f in cases.items():
    print(name)
    print(jax.make_jaxpr(f)(x))
    out = f(x)
    for leaf in jax.tree_util.tree_leaves(out):
        leaf = np.asarray(leaf)
        print(' ', leaf.dtype, leaf.shape, np.round(leaf.astype(np.float64), 4).tolist())
print(jax.make_jaxpr(lambda c: c + 1)(h), (h + 1).dtype, (h * 2.5).dtype, (b + 1).dtype, (b * 2.5).dtype)
print(jax.make_jaxpr(lambda c, d: c * d)(i, 3), (i * 3).dtype, jax.jit(lambda c: c / 2)(i))
