# Issue 34: every product is one dot_general equation, recorded as JAX records it (jnp.matmul's batch axes, its
# squeezes of broadcast stacks and its transpose back to numpy's order; jnp.dot's and tensordot's free axes;
# lax.dot_general's precision and preferred_element_type), vmap of a product is one batched dot_general, and the
# values, shapes and dtypes agree with JAX's, errors included.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax


def show(name, value):  # rounded, and -0.0 as 0.0: BLAS and XLA round the last bits differently
    for leaf in jax.tree_util.tree_leaves(value):
        a = np.asarray(leaf)
        text = np.array2string(np.round(a, 4) + 0.0 if a.dtype.kind == 'f' else a, separator=',', threshold=10_000)
        print(f'{name}: {a.dtype} {a.shape} {" ".join(text.split())}')


def fails(name, f):
    try:
        f()
        print(name, 'no error')
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        print(name, type(e).__name__, getattr(e, 'message', e))  # spmdsim's: the message without report


m = jnp.arange(12.0).reshape(3, 4) / 5 - 1
n = jnp.arange(20.0).reshape(4, 5) / 7 - 1
v = jnp.arange(4.0) - 1.5
s = jnp.arange(24.0).reshape(2, 3, 4) / 9 - 1
t = jnp.arange(40.0).reshape(2, 4, 5) / 11 - 1
i = jnp.arange(20, dtype=jnp.int32).reshape(4, 5) - 7

for name, f, args in [
    ('matrix @ matrix', lambda a, b: a @ b, (m, n)),
    ('matrix @ vector', lambda a, b: a @ b, (m, v)),
    ('vector @ vector', lambda a, b: a @ b, (v, v)),
    ('vector @ matrix', lambda a, b: a @ b, (v, n)),
    ('stack @ stack', lambda a, b: a @ b, (s, t)),
    ('stack @ matrix', lambda a, b: a @ b, (s, n)),
    ('matrix @ stack', lambda a, b: jnp.matmul(a, b), (m, t)),
    ('broadcast stack', lambda a, b: a[None] @ b, (m, t)),
    ('float @ int', lambda a, b: a @ b, (m, i)),
    ('dot of stacks', jnp.dot, (s, t)),
    ('dot of a scalar', jnp.dot, (2.0, m)),
    ('tensordot', lambda a, b: jnp.tensordot(a, b, axes=([1, 2], [0, 1])), (s, s.transpose(1, 2, 0))),
    ('inner', jnp.inner, (m, m)),
    ('vdot', jnp.vdot, (m, m)),
    ('einsum', lambda a, b: jnp.einsum('bij,bjk->bki', a, b), (s, t)),
    ('lax.dot', lax.dot, (m, n)),
    ('dot_general', lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (s, t)),
    ('precision', lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), precision='highest'), (m, n)),
    ('preferred', lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32), (i.T, i)),
    ('vmap lhs', jax.vmap(lambda a, b: a @ b, in_axes=(0, None)), (s, n)),
    ('vmap rhs', jax.vmap(lambda a, b: a @ b, in_axes=(None, 0)), (m, t)),
    ('vmap both', jax.vmap(lambda a, b: a @ b), (s, t)),
    ('vmap of a batched dot_general', jax.vmap(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))),
     (s[None], t[None])),
]:
    print(name)
    print(jax.make_jaxpr(f)(*args))
    show(name, f(*args))
    show(name + ' under jit', jax.jit(f)(*args))

show('grad lhs and rhs', jax.grad(lambda a, b: jnp.sum(jnp.sin(a @ b)), argnums=(0, 1))(m, n))
show('grad of a batched product', jax.grad(lambda a, b: jnp.sum(jnp.tanh(a @ b)), argnums=(0, 1))(s, t))
show('grad of a transposed contraction', jax.grad(
    lambda a, b: jnp.sum(lax.dot_general(a, b, (((0, 2), (2, 0)), ((), ()))) ** 2), argnums=(0, 1))(s, t.transpose(1, 2, 0)))
show('jvp', jax.jvp(lambda a, b: a @ b, (m, n), (jnp.ones_like(m), n)))
show('per-example grads', jax.vmap(jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w))), in_axes=(None, 0))(n, s))

fails('contracting sizes', lambda: lax.dot_general(m, n, (((0,), (0,)), ((), ()))))
fails('axis out of range', lambda: lax.dot_general(m, n, (((3,), (0,)), ((), ()))))
fails('negative axis', lambda: lax.dot_general(m, n, (((-1,), (0,)), ((), ()))))
fails('batch counts', lambda: lax.dot_general(s, t, (((2,), (1,)), ((0,), ()))))
fails('repeated axis', lambda: lax.dot_general(s, t, (((2, 2), (1, 1)), ((), ()))))
fails('batch and contracting', lambda: lax.dot_general(s, t, (((0,), (0,)), ((0,), (0,)))))
fails('batch sizes', lambda: lax.dot_general(s, t.transpose(1, 0, 2), (((2,), (2,)), ((0,), (0,)))))
fails('matmul stacks', lambda: jnp.ones((2, 3, 4)) @ jnp.ones((3, 4, 5)))
fails('matmul of a scalar', lambda: jnp.matmul(2.0, m))
fails('lax.dot of stacks', lambda: lax.dot(s, t))
