"""jax.vmap as a batching transformation (issue 34): every primitive's
batching rule against the function applied to one example at a time, eager
and under jit, and the batched program's size independent of the batch."""

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax, random

pytestmark = pytest.mark.spmd(devices=8)

rng = np.random.default_rng(7)


def one_by_one(f, args, in_axes):
    """f applied to each example, stacked: what vmap(f) must return."""
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [f(*[a if ax is None else jnp.asarray(np.take(np.asarray(a), i, axis=ax)) for a, ax in zip(args, in_axes)])
            for i in range(n)]
    return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


def check(f, *args, in_axes=0, exact=True):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    want = one_by_one(f, args, axes)
    for how in (jax.vmap(f, in_axes=axes), jax.jit(jax.vmap(f, in_axes=axes))):
        got = how(*args)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
            if exact:
                np.testing.assert_array_equal(np.asarray(g), w)
            else:
                np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def floats(*shape):
    return jnp.asarray(rng.normal(size=shape), jnp.float32)


def test_elementwise_operands_of_every_rank_broadcast_per_example():
    x, y = floats(4, 3), floats(3)
    check(lambda a, b: jnp.sin(a) * b + 1.0, x, y, in_axes=(0, None))
    check(lambda a, b: a + b, x, floats(4, 2, 3))  # the example's (3,) against (2, 3)
    check(lambda a, b: a - b, floats(4, 2, 3), floats(4))  # against a scalar example
    check(lambda a: jnp.where(a > 0, a, 0.5 * a).astype(jnp.int32), x)
    check(lambda a, b: jnp.maximum(a, b) // 0.5, x, floats(4, 1))
    check(lambda a: (a > 0) & (a < 1), x)


def test_reductions_scans_and_sorts_shift_their_axes():
    x = floats(5, 3, 4)
    check(lambda a: (a.max(axis=-1), a.argmax(axis=0), a.min(axis=(0, 1)), jnp.argmin(a, axis=-1)), x)
    # Sums over several axes may add in another order than one example's: equal to rounding.
    check(lambda a: (a.sum(), a.mean(axis=(0, 1), keepdims=True), jnp.prod(a, axis=1)), x, exact=False)
    check(lambda a: (jnp.cumsum(a, axis=1), jnp.cumprod(a, axis=-1), jnp.flip(a, axis=(0, 1))), x)
    check(lambda a: (jnp.sort(a, axis=0), jnp.argsort(a[0])), x)
    check(lambda a: (jnp.any(a > 1), jnp.all(a > -3, axis=1)), x)


def test_layout_reshape_transpose_broadcast_concatenate():
    x = floats(3, 2, 4)
    check(lambda a: (a.reshape(8), a.T, jnp.broadcast_to(a[:, None], (2, 5, 4)), jnp.expand_dims(a, 1)), x)
    check(lambda a, b: (jnp.concatenate([a, b], axis=-1), jnp.stack([a, a], axis=1)), x, floats(3, 2, 1))
    check(lambda a, b: jnp.concatenate([a, b]), x, floats(2, 4), in_axes=(0, None))


@pytest.mark.parametrize('a_shape,b_shape,in_axes', [
    ((4,), (4,), (0, 0)), ((4,), (4, 5), (0, 0)), ((3, 4), (4,), (0, 0)), ((3, 4), (4, 5), (0, 0)),
    ((2, 3, 4), (4, 5), (0, 0)), ((3, 4), (2, 4, 5), (0, 0)), ((3, 4), (4, 5), (0, None)),
    ((3, 4), (4, 5), (None, 0)), ((4,), (4, 5), (None, 0)), ((3, 4), (4,), (None, 0)), ((4,), (2, 4, 5), (0, None)),
])
def test_matmul_of_vectors_matrices_and_stacks(a_shape, b_shape, in_axes):
    n = 6
    a = floats(*((n,) + a_shape if in_axes[0] == 0 else a_shape))
    b = floats(*((n,) + b_shape if in_axes[1] == 0 else b_shape))
    check(lambda u, v: u @ v, a, b, in_axes=in_axes, exact=False)
    check(lambda u, v: jnp.dot(u, v) if u.ndim < 3 else u @ v, a, b, in_axes=in_axes, exact=False)


def test_indexing_static_dynamic_and_updates():
    x = floats(4, 5, 3)
    i = jnp.array([0, 2, -1, -3], dtype=jnp.int32)
    check(lambda a: (a[1:3], a[..., 0], a[None, ::2, 1]), x)
    check(lambda a, k: (a[k], a[:, k], jnp.take(a, k, axis=1)), x, i)  # both batched
    check(lambda a, k: (a[k], a[:, k]), x[0], i, in_axes=(None, 0))  # only the index batched
    check(lambda a, k: a[k, 1:], x, jnp.int32(2), in_axes=(0, None))  # only the array batched
    check(lambda a, v: (a.at[1].set(v), a.at[:, 0].add(v[0]), a.at[2:].multiply(2.0)), x, floats(4, 3))
    check(lambda a, v: a.at[0, :].set(v), x, floats(3), in_axes=(0, None))
    starts = jnp.array([0, 3, 1, 9], dtype=jnp.int32)  # 9: clamped into the array, as XLA does
    check(lambda a, k: lax.dynamic_slice(a, (k, 1), (2, 2)), x, starts)
    check(lambda a, u, k: lax.dynamic_update_slice(a, u, (k, 0)), x, floats(4, 1, 3), starts)


def test_random_with_a_key_per_example():
    keys = random.split(random.PRNGKey(3), 4)
    check(lambda k: (random.normal(k, (3,)), random.uniform(k, (2, 2)), random.randint(k, (5,), 0, 10)), keys)
    check(lambda k: (random.split(k, 3), random.fold_in(k, 7)), keys)
    check(lambda k, d: random.fold_in(k, d), keys, jnp.arange(4, dtype=jnp.int32))
    check(lambda k, d: random.bernoulli(random.fold_in(k, d), 0.3, (6,)), keys[0], jnp.arange(4), in_axes=(None, 0))


def test_control_flow_with_batched_predicates_and_operands():
    x = floats(5, 3)
    check(lambda a: lax.cond(a.sum() > 0, lambda v: v * 2, lambda v: -v, a), x)  # batched predicate: a select
    check(lambda a, p: lax.cond(p, lambda v: v * 2, lambda v: -v, a), x, True, in_axes=(0, None))
    check(lambda k, a: lax.switch(k, [lambda v: v, lambda v: v * 10, lambda v: -v], a),
          jnp.array([0, 1, 2, 7, -3], dtype=jnp.int32), x)  # clamped, as lax.switch does
    # Each example's own trip count (2 or 5): the loop runs until every one is done.
    check(lambda a: lax.while_loop(lambda c: c[0] < jnp.where(a.sum() > 0, 5.0, 2.0),
                                   lambda c: (c[0] + 1, c[1] * 1.5), (0.0, a)), x)
    check(lambda a: lax.fori_loop(0, 3, lambda i, c: c * a + i, a), x)
    check(lambda a: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(()), a), x)
    check(lambda a, b: lax.scan(lambda c, r: (c * b + r, c), 1.0, a)[0], x, jnp.float32(0.5), in_axes=(0, None))


def test_jit_grad_and_custom_rules_compose_with_vmap():
    w = floats(3, 2)
    xs = floats(4, 3)

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    check(jax.grad(loss), w, xs, in_axes=(None, 0), exact=False)
    check(jax.jit(lambda v: jnp.sin(v).sum()), xs)
    per_example = jax.grad(lambda w: jax.vmap(loss, in_axes=(None, 0))(w, xs).sum())(w)
    np.testing.assert_allclose(np.asarray(per_example), np.asarray(jax.grad(loss)(w, xs)), rtol=1e-5)

    @jax.custom_jvp
    def total(v):
        return jnp.sum(jnp.sin(v))  # the rule below is written for one example (a full sum)

    @total.defjvp
    def total_jvp(primals, tangents):
        (v,), (t,) = primals, tangents
        return total(v), jnp.sum(jnp.cos(v) * t)

    @jax.custom_vjp
    def clipped(v):
        return jnp.sum(v ** 2)
    clipped.defvjp(lambda v: (clipped(v), v), lambda v, g: (jnp.clip(2 * v * g, -1.0, 1.0),))
    g = jax.grad(lambda v: jax.vmap(total)(v).sum())(xs)
    np.testing.assert_allclose(np.asarray(g), np.cos(np.asarray(xs)), rtol=1e-6)
    g = jax.grad(lambda v: jax.vmap(clipped)(v).sum())(xs)
    np.testing.assert_array_equal(np.asarray(g), np.clip(2 * np.asarray(xs), -1, 1))
    check(jax.grad(clipped), xs)


def test_nested_vmaps_and_axes_other_than_the_first():
    x = floats(3, 4, 5)
    f = jax.vmap(jax.vmap(lambda a, b: a * b + a.sum(), in_axes=(1, None), out_axes=1), in_axes=(0, 0))
    want = np.stack([np.stack([x[i, :, j] * x[i, 0, 0] + x[i, :, j].sum() for j in range(5)], axis=1)
                     for i in range(3)])
    np.testing.assert_allclose(np.asarray(f(x, x[:, 0, 0])), want, rtol=1e-6)
    assert jax.vmap(lambda a: a, in_axes=2, out_axes=1)(x).shape == (3, 5, 4)


def test_collectives_with_groups_and_with_other_axes(original_pmap):
    x = jnp.arange(8.0) * 3 - 7
    groups = [[0, 2, 4, 6], [1, 3, 5, 7]]
    for collective in (lambda v: lax.psum(v, 'i', axis_index_groups=groups),
                       lambda v: lax.pmax(v, 'i', axis_index_groups=groups),
                       lambda v: lax.pmean(v, 'i', axis_index_groups=groups),
                       lambda v: lax.all_gather(v, 'i', axis_index_groups=groups)):
        v = jax.vmap(collective, axis_name='i')(x)
        p = jax.pmap(collective, axis_name='i')(x)
        np.testing.assert_array_equal(np.asarray(v), np.asarray(p))
    # An example's value that is the same for every example: psum multiplies it.
    assert jax.vmap(lambda v: lax.psum(3.0, 'i') + lax.psum(jnp.float32(2), 'i') + v * 0, axis_name='i')(
        jnp.ones(4)).tolist() == [20.0] * 4
    # all_gather over a pmap axis and the vmapped one, either order, as nested pmaps.
    y = jnp.arange(24.0).reshape(2, 3, 4)
    for axes in (('d', 'b'), ('b', 'd')):
        f = lambda v: (lax.all_gather(v, axes, axis=1), lax.all_gather(v, axes, tiled=True), lax.psum(v, axes))
        v = jax.pmap(jax.vmap(f, axis_name='b'), axis_name='d')(y)
        p = jax.pmap(jax.pmap(f, axis_name='b'), axis_name='d')(y)
        for a, b in zip(v, p):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_pmap_inside_vmap_batches_each_devices_program():
    x = jnp.arange(24.0).reshape(3, 4, 2)
    got = jax.vmap(jax.pmap(lambda v: lax.psum(v, 'd') * v, axis_name='d'))(x)
    want = np.stack([np.asarray(x[i]).sum(axis=0) * np.asarray(x[i]) for i in range(3)])
    np.testing.assert_array_equal(np.asarray(got), want)
    got = jax.vmap(jax.pmap(lambda v, s: v * s, in_axes=(0, None), axis_name='d'), in_axes=(None, 0))(
        x[0], jnp.arange(3.0))
    assert got.shape == (3, 4, 2) and np.asarray(got)[2].tolist() == (2 * np.asarray(x[0])).tolist()


def test_debug_print_runs_once_per_example(capfd):
    jax.vmap(lambda v: jax.debug.print('example {v}', v=v))(jnp.arange(3))
    assert capfd.readouterr().out == 'example 0\nexample 1\nexample 2\n'


def _mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    return jnp.sum((jnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)


def test_the_batched_program_does_not_grow_with_the_batch():
    params = (floats(8, 16), floats(16), floats(16, 4), floats(4))
    grads = jax.vmap(jax.grad(_mlp_loss), in_axes=(None, 0, 0))
    sizes = {b: len(jax.make_jaxpr(grads)(params, floats(b, 8), floats(b, 4)).eqns) for b in (1, 16, 512)}
    assert len(set(sizes.values())) == 1, sizes
    one_example = len(jax.make_jaxpr(jax.grad(_mlp_loss))(params, floats(8), floats(4)).eqns)
    assert sizes[16] <= one_example + 8, (sizes, one_example)
    # The product is one batched dot_general per layer and direction, not one per example.
    text = str(jax.make_jaxpr(grads)(params, floats(512, 8), floats(512, 4)))
    one = str(jax.make_jaxpr(jax.grad(_mlp_loss))(params, floats(8), floats(4)))
    assert text.count('dot_general') == one.count('dot_general') == 5


def test_the_jaxpr_of_a_vmap_is_the_batched_program():
    f = jax.vmap(lambda x, w: jnp.sin(x) @ w, in_axes=(0, None))
    text = str(jax.make_jaxpr(f)(jnp.ones((5, 3)), jnp.ones((3, 2))))
    # One example's vector times the matrix becomes the batch's matrix times
    # it: the batch axis is a free axis of dot_general (real JAX's text).
    assert text == ('{ lambda ; a:f32[5,3] b:f32[3,2]. let\n'
                    '    c:f32[5,3] = sin a\n'
                    '    d:f32[5,2] = dot_general[\n'
                    '      dimension_numbers=(([1], [0]), ([], []))\n'
                    '      preferred_element_type=float32\n'
                    '    ] c b\n'
                    '  in (d,) }'), text
