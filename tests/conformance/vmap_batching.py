# Issue 34: vmap as a batching transformation gives what JAX's gives: values (rounded to 4 decimals, so XLA's and
# spmdsim's float rounding agree), shapes and dtypes, for every family of batching rules, collectives over the
# vmapped axis, control flow with batched predicates, random keys per example, custom rules and a pmap inside vmap.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax, random


def show(name, value):
    for leaf in jax.tree_util.tree_leaves(value):
        a = np.asarray(leaf)
        text = np.array2string(np.round(a, 4) if a.dtype.kind == 'f' else a, separator=',', threshold=10_000)
        print(f'{name}: {a.dtype} {a.shape} {" ".join(text.split())}')


x = jnp.arange(24.0).reshape(4, 2, 3) / 7 - 1.2
w = jnp.arange(12.0).reshape(3, 4) / 5 - 1
idx = jnp.array([2, 0, -1, 1], dtype=jnp.int32)

show('elementwise', jax.vmap(lambda a, b: jnp.tanh(a) * b + a.max())(x, x[:, 0]))
show('reductions', jax.vmap(lambda a: (a.sum(0), a.argmax(-1), jnp.cumsum(a, 1), jnp.sort(a, 0)))(x))
show('layout', jax.vmap(lambda a: (a.T, a.reshape(8), jnp.concatenate([a, a[:1]]), jnp.flip(a, 1)), in_axes=2)(x))
show('matmul', jax.vmap(lambda a: (a @ w, a[0] @ w, w.T @ a[1], a[0] @ a[1]))(x))
show('matmul in_axes', jax.vmap(lambda a, b: a @ b, in_axes=(None, 0))(w.T, x[:, 0]))
show('indexing', jax.vmap(lambda a, i: (a[:, i], a[1, 1:], jnp.take(a, i, axis=1), a.at[0, 1].set(9.0)))(x, idx))
show('gather unbatched array', jax.vmap(lambda i: w[:, i])(idx))
show('dynamic_slice', jax.vmap(lambda a, i: lax.dynamic_slice(a, (0, i), (2, 2)))(x, jnp.array([0, 1, 5, -2])))
show('negative starts', (lax.dynamic_slice(x[0], (-1, -2), (1, 2)), lax.dynamic_update_slice(x[0], jnp.ones((1, 2)), (-1, -5))))
show('out_axes', jax.vmap(lambda a: (a, a.sum()), out_axes=(2, 0))(x))

show('psum pmean pmax', jax.vmap(lambda a: (lax.psum(a, 'i'), lax.pmean(a, 'i'), lax.pmax(a, 'i')), axis_name='i')(x))
show('axis_index', jax.vmap(lambda a: lax.axis_index('i') * 10 + a, axis_name='i')(jnp.arange(4)))
show('all_gather', jax.vmap(lambda a: (lax.all_gather(a, 'i'), lax.all_gather(a, 'i', axis=1, tiled=True)),
                             axis_name='i')(x))
show('ppermute', jax.vmap(lambda a: lax.ppermute(a, 'i', [(0, 1), (1, 2), (2, 3), (3, 0)]), axis_name='i')(x))
show('psum_scatter', jax.vmap(lambda a: lax.psum_scatter(a, 'i', scatter_dimension=1, tiled=True), axis_name='i')(
    jnp.arange(32.0).reshape(4, 2, 4)))
show('all_to_all', jax.vmap(lambda a: lax.all_to_all(a, 'i', 0, 1), axis_name='i')(jnp.arange(48.0).reshape(4, 4, 3)))
show('nested', jax.vmap(jax.vmap(lambda a: lax.psum(a, ('i', 'j')) + lax.axis_index(('i', 'j')), axis_name='j'),
                        axis_name='i')(x[:, :, 0]))

show('cond batched', jax.vmap(lambda a: lax.cond(a.sum() > 0, lambda v: v * 2, lambda v: -v, a))(x))
show('switch', jax.vmap(lambda i, a: lax.switch(i, [jnp.sin, jnp.cos, lambda v: -v], a))(jnp.array([0, 1, 2, 5]), x))
show('while', jax.vmap(lambda a: lax.while_loop(lambda c: c[0] < a.size + 3 * (a.sum() > 0), lambda c: (c[0] + 1,
                                                                                                      c[1] * 0.9),
                                                 (0, a)))(x))
show('scan', jax.vmap(lambda a: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(3), a))(x))
show('fori', jax.vmap(lambda a: lax.fori_loop(0, 4, lambda i, c: c * a + i, a))(x[:, 0]))

keys = random.split(random.PRNGKey(42), 4)
show('random', jax.vmap(lambda k: (random.normal(k, (3,)), random.uniform(k, (2,)), random.randint(k, (3,), 0, 9),
                                   random.normal(random.split(k, 2)[1], (2,))))(keys))
show('fold_in', jax.vmap(lambda d: random.normal(random.fold_in(keys[0], d), (2,)))(jnp.arange(4)))


def loss(p, a):
    return jnp.sum(jnp.tanh(a @ p) ** 2)


show('per-example grads', jax.vmap(jax.grad(loss), in_axes=(None, 0))(w, x))
show('jit of vmap of grad', jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0)))(w, x))
show('grad of vmap', jax.grad(lambda p: jax.vmap(loss, in_axes=(None, 0))(p, x).sum())(w))


@jax.custom_jvp
def total(v):
    return jnp.sum(jnp.sin(v))


@total.defjvp
def total_jvp(primals, tangents):
    (v,), (t,) = primals, tangents
    return total(v), jnp.sum(jnp.cos(v) * t) * 2


show('custom_jvp', jax.grad(lambda a: jax.vmap(total)(a).sum())(x))
show('vmap of pmap', jax.vmap(jax.pmap(lambda a: lax.psum(a, 'd') * a, axis_name='d'))(x))
try:
    lax.dynamic_slice_in_dim(x[0], -1, 1, axis=1, allow_negative_indices=False)
except ValueError as e:
    print(e)
