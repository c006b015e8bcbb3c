"""jax.vmap: traced once, applied per example; collectives over its
axis_name (issue 16), checked against the same function under pmap, whose
collectives are the runtime's."""

import numpy as np
import pytest

import _spmd
import jax
import jax.numpy as jnp
from jax import lax

pytestmark = pytest.mark.spmd(devices=8)


def same_as_pmap(f, *args, **kw):
    """f under vmap and under pmap (over the same axis name) agree exactly."""
    v = jax.vmap(f, axis_name='i', **kw)(*args)
    p = jax.pmap(f, axis_name='i', **kw)(*args)
    for a, b in zip(jax.tree_util.tree_leaves(v), jax.tree_util.tree_leaves(p)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    return v


def test_the_tutorial_normalize():
    out = same_as_pmap(lambda x: x / lax.psum(x, 'i'), jnp.arange(4.0))
    np.testing.assert_allclose(np.asarray(out), [0.0, 1 / 6, 2 / 6, 3 / 6], rtol=1e-6)


def test_reductions_axis_index_and_gathers_match_pmap():
    x = jnp.arange(4.0) * 3 - 4
    same_as_pmap(lambda v: (lax.pmean(v, 'i'), lax.pmax(v, 'i'), lax.pmin(v, 'i')), x)
    same_as_pmap(lambda v: lax.axis_index('i') * 10 + v, jnp.arange(4, dtype=jnp.int32))
    same_as_pmap(lambda v: (lax.all_gather(v, 'i'), lax.all_gather(v, 'i', axis=1), lax.all_gather(v, 'i', tiled=True)),
                 jnp.arange(24.0).reshape(4, 3, 2))
    same_as_pmap(lambda v: lax.ppermute(v, 'i', [(k, (k + 1) % 4) for k in range(4)]), jnp.arange(4.0))
    same_as_pmap(lambda v: lax.ppermute(v, 'i', [(0, 2)]), jnp.arange(4.0) + 1)  # unreceived lanes get zeros
    same_as_pmap(lambda v: lax.all_to_all(v, 'i', 0, 1), jnp.arange(48.0).reshape(4, 4, 3))
    same_as_pmap(lambda v: lax.all_to_all(v, 'i', 1, 0, tiled=True), jnp.arange(64.0).reshape(4, 2, 8))
    same_as_pmap(lambda v: lax.psum_scatter(v, 'i'), jnp.arange(16.0).reshape(4, 4))
    same_as_pmap(lambda v: lax.psum_scatter(v, 'i', scatter_dimension=1, tiled=True), jnp.arange(64.0).reshape(4, 2, 8))


def test_a_reduction_is_the_same_for_every_example_so_out_axes_none_may_return_it():
    total, gathered = jax.vmap(lambda v: (lax.psum(v, 'b'), lax.all_gather(v, 'b')), axis_name='b',
                               out_axes=None)(jnp.arange(3))
    assert total.tolist() == 3 and total.dtype == jnp.int32
    assert gathered.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match=r'^vmap has mapped output \(axis_name=b\) but out_axes is None$'):
        jax.vmap(lambda v: v * 2, axis_name='b', out_axes=None)(jnp.arange(3))
    with pytest.raises(ValueError, match=r"^at vmap out_axes\[1\], got axis spec None but output was batched on axis 0$"):
        jax.vmap(lambda v: (v.sum(), v), out_axes=(0, None))(jnp.ones((3, 2)))


def test_nested_vmaps_reduce_over_a_tuple_of_axes_like_nested_pmaps(original_pmap):
    f = lambda x: (x - lax.pmean(x, ('i', 'j')), lax.axis_index(('i', 'j')), lax.all_gather(x, ('i', 'j')))
    x = jnp.arange(4.0).reshape(2, 2)
    v = jax.vmap(jax.vmap(f, axis_name='j'), axis_name='i')(x)
    p = jax.pmap(jax.pmap(f, axis_name='j'), axis_name='i')(x)
    for a, b in zip(v, p):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert np.asarray(v[1]).tolist() == [[0, 1], [2, 3]]


def test_vmap_inside_pmap_with_a_collective_over_both_axes():
    def per_device(xs):
        return jax.vmap(lambda x: lax.psum(x, ('d', 'b')) + lax.axis_index(('d', 'b')), axis_name='b')(xs)
    out = jax.pmap(per_device, axis_name='d')(jnp.arange(8.0).reshape(4, 2))
    assert np.asarray(out).tolist() == [[28.0, 29.0], [30.0, 31.0], [32.0, 33.0], [34.0, 35.0]]
    # The batch axis first: the index runs over 'b' outermost.
    idx = jax.pmap(jax.vmap(lambda x: lax.axis_index(('b', 'd')), axis_name='b'), axis_name='d')(jnp.zeros((2, 3)))
    assert np.asarray(idx).tolist() == [[0, 2, 4], [1, 3, 5]]


def test_control_flow_that_uses_the_axis_runs_batched_as_in_jax():
    # A cond whose branch has a psum: both branches run on every example,
    # each example keeps its own (the psum sums every example's operand).
    c = jax.vmap(lambda x: lax.cond(x > 1, lambda v: lax.psum(v, 'i'), lambda v: -v, x), axis_name='i')
    assert np.asarray(c(jnp.arange(4.0))).tolist() == [0.0, -1.0, 6.0, 6.0]
    # A while loop with a psum: it runs until every example is done; the
    # psum counts every example at each step, finished or not.
    w = jax.vmap(lambda x: lax.while_loop(lambda v: v < 10, lambda v: v + lax.psum(jnp.ones_like(v), 'i'), x),
                 axis_name='i')
    assert np.asarray(w(jnp.arange(4.0))).tolist() == [12.0, 13.0, 10.0, 11.0]
    # Without the axis inside, control flow runs per example.
    s = jax.vmap(lambda x: lax.fori_loop(0, 3, lambda k, v: v * x, 1.0))
    assert np.asarray(s(jnp.arange(4.0))).tolist() == [0.0, 1.0, 8.0, 27.0]


def test_jit_and_grad_of_a_vmap_with_a_collective():
    normalize = jax.vmap(lambda x: x / lax.psum(x, 'i'), axis_name='i')
    np.testing.assert_allclose(np.asarray(jax.jit(normalize)(jnp.arange(1.0, 5.0))), [0.1, 0.2, 0.3, 0.4], rtol=1e-6)
    g = jax.grad(lambda x: normalize(x)[0])(jnp.arange(1.0, 5.0))
    np.testing.assert_allclose(np.asarray(g), [0.09, -0.01, -0.01, -0.01], rtol=1e-5)


def test_per_example_gradients_averaged_over_the_batch_inside_pmap():
    w = jnp.array([1.0, -2.0])
    xs = jnp.arange(16.0).reshape(2, 4, 2)  # 2 devices x 4 examples

    def loss(w, x):
        return jnp.sum(w * x) ** 2

    def step(w, xs):
        grads = jax.vmap(jax.grad(loss), in_axes=(None, 0), axis_name='batch')(w, xs)
        return lax.pmean(jnp.mean(grads, axis=0), 'devices')
    got = jax.pmap(step, axis_name='devices', in_axes=(None, 0))(w, xs)
    flat = np.asarray(xs).reshape(8, 2)
    want = np.mean([2 * np.sum(np.asarray(w) * x) * x for x in flat], axis=0)
    np.testing.assert_allclose(np.asarray(got), [want, want], rtol=1e-6)


def test_python_runs_once_and_the_axes_and_sizes_are_checked():
    calls = []

    def f(x, scale):
        calls.append(1)
        return x * scale
    out = jax.vmap(f, in_axes=(1, None))(jnp.arange(6.0).reshape(2, 3), 2.0)
    assert np.asarray(out).tolist() == [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]] and len(calls) == 1
    assert np.asarray(jax.vmap(lambda x, y: x + y)(jnp.ones(2), y=jnp.arange(2.0))).tolist() == [1.0, 2.0]
    assert jax.vmap(lambda x: x.sum(), out_axes=0)(jnp.ones((3, 4))).shape == (3,)
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(2))
    assert str(e.value) == ('vmap got inconsistent sizes for array axes to be mapped:\n'
                            '  * one axis had size 3: axis 0 of argument x of type float32[3];\n'
                            '  * one axis had size 2: axis 0 of argument y of type float32[2]')
    with pytest.raises(ValueError, match=r'but got len\(in_axes\)=1, len\(args\)=2'):
        jax.vmap(lambda x, y: x, in_axes=(0,))(jnp.ones(2), jnp.ones(2))
    with pytest.raises(ValueError, match=r'vmap was requested to map its argument along axis 2, which implies that '
                                         r'its rank should be at least 3, but is only 1'):
        jax.vmap(lambda x: x, in_axes=2)(jnp.ones(2))
    with pytest.raises(ValueError, match='must have at least one non-None value in in_axes'):
        jax.vmap(lambda x: x, in_axes=None)(jnp.ones(2))


def test_an_axis_name_typo_inside_vmap_names_the_bound_axis():
    with pytest.raises(_spmd.SpmdError) as e:
        jax.vmap(lambda x: lax.psum(x, 'batchh'), axis_name='batch')(jnp.ones(3))
    assert e.value.kind == 'AxisNameError'
    assert e.value.message == "psum: unbound axis name: 'batchh'. The bound axis names are: 'batch'"


def test_a_device_that_skips_a_psum_inside_a_vmap_is_a_deadlock():
    def f(xs):
        def per_example(x):
            return lax.cond(lax.axis_index('d') == 1, lambda v: v, lambda v: lax.psum(v, 'd'), x)
        return jax.vmap(per_example, axis_name='b')(xs)
    with pytest.raises(_spmd.SpmdError) as e:
        jax.pmap(f, axis_name='d')(jnp.ones((4, 3)))
    assert e.value.kind == 'Deadlock'
    assert e.value.message.startswith("deadlock: devices {0, 2, 3} wait at psum over 'd' #0")
    assert 'but device 1 returned after 0 collectives' in e.value.message
