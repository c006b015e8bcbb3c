"""jax.shard_map over a Mesh: blocks from in_specs, collectives over one mesh
axis, a tuple of them or all, outputs put together by out_specs, and JAX's
errors for specs that do not fit (issue 16's first step)."""

import numpy as np
import pytest

import _spmd
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental.shard_map import shard_map as experimental_shard_map
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

pytestmark = pytest.mark.spmd(devices=8)


def mesh_2x4():
    return jax.make_mesh((2, 4), ('data', 'model'))


def test_mesh_and_specs():
    mesh = mesh_2x4()
    assert mesh.axis_names == ('data', 'model')
    assert dict(mesh.shape) == {'data': 2, 'model': 4}
    assert mesh.size == 8
    assert mesh.device_ids.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert P('data', None) == ('data', None)
    assert repr(P(('data', 'model'))) == "PartitionSpec(('data', 'model'),)"
    assert NamedSharding(mesh, P('data')).spec == P('data')
    m = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ('a', 'b'))
    assert dict(m.shape) == {'a': 2, 'b': 2}


def test_blocked_matmul_with_psum_over_one_axis():
    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    b = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    f = jax.shard_map(lambda x, y: lax.psum(x @ y, 'model'), mesh=mesh_2x4(),
                      in_specs=(P('data', 'model'), P('model', None)), out_specs=P('data', None))
    c = f(jnp.asarray(a), jnp.asarray(b))
    assert c.shape == (8, 4)
    np.testing.assert_allclose(np.asarray(c), a @ b)


def test_blocks_follow_the_mesh_coordinates():
    mesh = mesh_2x4()
    # Each device returns its coordinates: data varies down, model across.
    f = jax.shard_map(lambda x: x + 10 * lax.axis_index('data') + lax.axis_index('model'), mesh=mesh,
                      in_specs=P(), out_specs=P('data', 'model'))
    assert np.asarray(f(jnp.zeros((1, 1), jnp.int32))).tolist() == [[0, 1, 2, 3], [10, 11, 12, 13]]
    # A dimension split over two axes: 'data' outermost.
    g = jax.shard_map(lambda x: x * 0 + 10 * lax.axis_index('data') + lax.axis_index('model'), mesh=mesh,
                      in_specs=P(('data', 'model')), out_specs=P(('data', 'model')))
    assert np.asarray(g(jnp.zeros(8, jnp.int32))).tolist() == [0, 1, 2, 3, 10, 11, 12, 13]
    # Mesh axes a spec leaves out hold copies of the block.
    h = jax.shard_map(lambda x: x * 1, mesh=mesh, in_specs=P('data'), out_specs=P('data', 'model'))
    out = np.asarray(h(jnp.arange(4.0).reshape(2, 2)))
    assert out.tolist() == [[0.0, 1.0] * 4, [2.0, 3.0] * 4]


def test_collectives_over_a_tuple_of_axes_and_all_gather():
    mesh = mesh_2x4()
    total = jax.shard_map(lambda x: lax.psum(x, ('data', 'model')), mesh=mesh, in_specs=P(('data', 'model')),
                          out_specs=P())(jnp.arange(8.0))
    assert np.asarray(total).tolist() == [28.0]
    gathered = jax.shard_map(lambda x: lax.all_gather(x, 'model', axis=1, tiled=True), mesh=mesh,
                             in_specs=P('data', 'model'), out_specs=P('data', None))(jnp.arange(16.0).reshape(4, 4))
    np.testing.assert_array_equal(np.asarray(gathered), np.arange(16.0).reshape(4, 4))


def test_the_experimental_spelling_and_a_mesh_context():
    mesh = mesh_2x4()
    f = experimental_shard_map(lambda x: lax.pmean(x, 'data'), mesh, in_specs=P('data'), out_specs=P())
    assert np.asarray(f(jnp.array([1.0, 3.0]))).tolist() == [2.0]
    with mesh:
        g = jax.shard_map(lambda x: x * 2, in_specs=P('model'), out_specs=P('model'))
        assert np.asarray(g(jnp.arange(4.0))).tolist() == [0.0, 2.0, 4.0, 6.0]


def test_a_divergence_along_another_axis_is_not_a_deadlock():
    # Rows take different branches, but each psum runs over 'model' inside one row.
    def f(x):
        return lax.cond(lax.axis_index('data') == 1, lambda v: lax.psum(v, 'model'),
                        lambda v: lax.psum(v * 2, 'model'), x)
    out = jax.shard_map(f, mesh=mesh_2x4(), in_specs=P('data', 'model'), out_specs=P('data', 'model'))(
        jnp.ones((2, 4)))
    assert np.asarray(out).tolist() == [[8.0] * 4, [4.0] * 4]


def test_a_divergence_along_the_collective_axis_is_a_deadlock_labelled_by_coordinates():
    def f(x):
        return lax.cond(lax.axis_index('model') == 1, lambda v: v, lambda v: lax.psum(v, 'model'), x)
    with pytest.raises(_spmd.SpmdError) as e:
        jax.shard_map(f, mesh=mesh_2x4(), in_specs=P('data', 'model'), out_specs=P('data', 'model'))(
            jnp.ones((2, 4)))
    assert e.value.kind == 'Deadlock'
    assert e.value.message.startswith("deadlock: devices {0, 2, 3} wait at psum over 'model' #0")
    assert 'but device 1 (data=0, model=1) returned after 0 collectives' in e.value.message


def test_specs_that_do_not_fit_are_jax_errors():
    mesh = mesh_2x4()
    with pytest.raises(ValueError, match=r"maps array axis 0 \(of size 6\) to mesh axis 'model' \(of size 4\), "
                                         r"but 4 does not evenly divide 6"):
        jax.shard_map(lambda x: x, mesh=mesh, in_specs=P('model'), out_specs=P('model'))(jnp.ones(6))
    with pytest.raises(ValueError, match="names mesh axis 'modle', but the mesh has no such axis") as e:
        jax.shard_map(lambda x: x, mesh=mesh, in_specs=P('modle'), out_specs=P('model'))(jnp.ones(8))
    assert e.value._spmd_hint == "did you mean 'model'?"
    with pytest.raises(ValueError, match=r'of length 2, but the value has rank 1'):
        jax.shard_map(lambda x: x, mesh=mesh, in_specs=P('data', 'model'), out_specs=P())(jnp.ones(8))
    with pytest.raises(ValueError, match="names mesh axis 'data' twice"):
        jax.shard_map(lambda x: x, mesh=mesh, in_specs=P('data', 'data'), out_specs=P())(jnp.ones((2, 2)))
    with pytest.raises(ValueError, match=r'Number of devices 8 must be >= the product of mesh_shape \(4, 4\)'):
        jax.make_mesh((4, 4), ('a', 'b'))


def test_out_specs_that_claim_replication_of_a_varying_value():
    mesh = mesh_2x4()
    with pytest.raises(ValueError, match=r"out_specs\[0\] is PartitionSpec\(\) which implies that the corresponding "
                                         r"output value \(output\) is replicated across mesh axis 'data', but it "
                                         r"varies along that axis"):
        jax.shard_map(lambda x: x * 2, mesh=mesh, in_specs=P('data'), out_specs=P())(jnp.ones(8))
    # Reduced over the axis first: replicated, accepted.
    out = jax.shard_map(lambda x: lax.psum(x, 'data'), mesh=mesh, in_specs=P('data'), out_specs=P())(jnp.ones(8))
    assert np.asarray(out).tolist() == [2.0, 2.0, 2.0, 2.0]
    # With the static check off, the devices' blocks are still compared at run time.
    with pytest.raises(ValueError, match=r"says output is replicated across mesh axis 'data', but the devices at "
                                         r"data=0 and data=1 hold different values \(largest difference 1\)"):
        jax.shard_map(lambda x: x, mesh=mesh, in_specs=P('data'), out_specs=P(), check_vma=False)(jnp.arange(2.0))


def test_inside_jit_and_grad():
    mesh = mesh_2x4()
    f = jax.shard_map(lambda x, y: lax.psum(x @ y, 'model'), mesh=mesh,
                      in_specs=(P('data', 'model'), P('model', None)), out_specs=P('data', None))
    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    b = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(a, b)), a @ b)
    # d/da sum((a b)^2) = 2 (a b) b^T, through the psum's transpose and the blocks
    grad = jax.grad(lambda a: jnp.sum(f(a, b) ** 2))(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(grad), 2 * (a @ b) @ b.T, rtol=1e-5)
    jaxpr = str(jax.make_jaxpr(f)(a, b))
    assert jaxpr.count('xla_pmap') == 2  # one per mesh axis, nested


def test_a_data_parallel_training_step_in_jit():
    mesh = jax.make_mesh((8,), ('data',))

    def local(w, x, y):
        g = jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
        return w - 0.1 * lax.pmean(g, 'data')
    step = jax.jit(jax.shard_map(local, mesh=mesh, in_specs=(P(), P('data'), P('data')), out_specs=P()))
    x = np.arange(24.0, dtype=np.float32).reshape(8, 3) / 10
    y = np.arange(8.0, dtype=np.float32)
    w = np.zeros(3, np.float32)
    for _ in range(3):
        expected = w - 0.1 * np.mean([2 * (x[d] @ w - y[d]) * x[d] for d in range(8)], axis=0)
        w_next = np.asarray(step(w, x, y))
        np.testing.assert_allclose(w_next, expected, rtol=1e-5)
        w = w_next.astype(np.float32)


def test_device_put_onto_a_sharding_and_its_picture(capsys):
    mesh = mesh_2x4()
    x = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(mesh, P('data', 'model')))
    assert x.sharding == NamedSharding(mesh, P('data', 'model'))
    assert not x.is_fully_replicated()
    shards = x.addressable_shards
    assert len(shards) == 8
    assert shards[5].device.id == 5
    assert shards[5].index == (slice(4, 8), slice(1, 2))
    assert np.asarray(shards[5].data).ravel().tolist() == [17.0, 21.0, 25.0, 29.0]
    jax.debug.visualize_array_sharding(x)
    jax.debug.visualize_array_sharding(jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P('model'))))
    assert capsys.readouterr().out == (
        '┌─────────┬─────────┬─────────┬─────────┐\n'
        '│  CPU 0  │  CPU 1  │  CPU 2  │  CPU 3  │\n'
        '├─────────┼─────────┼─────────┼─────────┤\n'
        '│  CPU 4  │  CPU 5  │  CPU 6  │  CPU 7  │\n'
        '└─────────┴─────────┴─────────┴─────────┘\n'
        '┌─────────┬─────────┬─────────┬─────────┐\n'
        '│ CPU 0,4 │ CPU 1,5 │ CPU 2,6 │ CPU 3,7 │\n'
        '└─────────┴─────────┴─────────┴─────────┘\n')
    # shard_map's results carry the layout their out_specs describe.
    y = jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P('data'), out_specs=P('data'))(jnp.arange(4.0))
    assert y.sharding == NamedSharding(mesh, P('data'))
    with pytest.raises(ValueError, match=r'should be divisible by 4, but it is equal to 6 \(full shape: \(6,\)\)'):
        jax.device_put(jnp.arange(6.0), NamedSharding(mesh, P('model')))
    with pytest.raises(ValueError, match=r"Resource axis: modle of PartitionSpec\('modle',\) is not found in mesh"):
        jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P('modle')))


def test_pswapaxes_pvary_and_mesh_contexts():
    mesh = jax.make_mesh((4,), ('i',))
    # Device d holds row d of a 4x4 matrix; pswapaxes hands it column d instead.
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    swapped = jax.shard_map(lambda r: lax.pswapaxes(r, 'i', 1), mesh=mesh, in_specs=P('i'), out_specs=P('i'))(x)
    np.testing.assert_array_equal(np.asarray(swapped), x.T)
    same = jax.shard_map(lambda r: lax.pvary(r, 'i') * 1, mesh=mesh, in_specs=P('i'), out_specs=P('i'))(x)
    np.testing.assert_array_equal(np.asarray(same), x)
    with jax.sharding.use_mesh(mesh):
        out = jax.shard_map(lambda r: lax.psum(r, 'i'), in_specs=P('i'), out_specs=P())(jnp.arange(4.0))
    assert np.asarray(out).tolist() == [6.0]
    before = jax.set_mesh(mesh)
    try:
        assert np.asarray(jax.shard_map(lambda r: r + 1, in_specs=P('i'), out_specs=P('i'))(jnp.zeros(4))).tolist() \
            == [1.0] * 4
    finally:
        jax.set_mesh(before) if before is not None else jax.sharding.Mesh._stack.clear()


def test_a_mesh_in_any_device_order_puts_each_block_on_its_device():
    devices = np.array(jax.devices())[[7, 6, 5, 4, 3, 2, 1, 0]].reshape(2, 4)
    mesh = Mesh(devices, ('data', 'model'))
    f = jax.shard_map(lambda x: x + 10 * lax.axis_index('data') + lax.axis_index('model'), mesh=mesh,
                      in_specs=P(), out_specs=P('data', 'model'))
    assert np.asarray(f(jnp.zeros((1, 1), jnp.int32))).tolist() == [[0, 1, 2, 3], [10, 11, 12, 13]]
    # A 1-D mesh on the last four devices.
    g = jax.shard_map(lambda x: lax.psum(x, 'm'), mesh=Mesh(np.array(jax.devices()[4:]), ('m',)), in_specs=P('m'),
                      out_specs=P())
    assert np.asarray(g(jnp.arange(4.0))).tolist() == [6.0]
    # Reports name the device that holds each mesh position.
    h = jax.shard_map(lambda x: lax.cond(lax.axis_index('model') == 1, lambda v: v, lambda v: lax.psum(v, 'model'), x),
                      mesh=mesh, in_specs=P('data', 'model'), out_specs=P('data', 'model'))
    with pytest.raises(_spmd.SpmdError) as e:
        h(jnp.ones((2, 4)))
    assert e.value.kind == 'Deadlock'
    assert e.value.message.startswith("deadlock: devices {4, 5, 7} wait at psum over 'model' #0")
    assert 'but device 6 (data=0, model=1) returned after 0 collectives' in e.value.message
    out = str(e.value)
    assert 'device 7 (data=0, model=0)  waiting' in out and 'device 0 (data=1, model=3)  waiting' in out
    # Under grad too (the backward pass is a pmap over the same devices).
    loss = jax.shard_map(lambda x: lax.psum(jnp.sum(x * x), ('data', 'model')), mesh=mesh,
                         in_specs=P('data', 'model'), out_specs=P())
    grad = jax.grad(lambda x: loss(x))(jnp.arange(8.0).reshape(2, 4))
    assert np.asarray(grad).tolist() == (2 * np.arange(8.0).reshape(2, 4)).tolist()


def test_axis_names_makes_the_other_mesh_axes_automatic():
    mesh = mesh_2x4()
    x = jnp.arange(32.0).reshape(8, 4)
    # Manual over 'data' only: blocks of rows; the function sees whole values along 'model'.
    f = jax.shard_map(lambda b: (b - lax.pmean(b, 'data'), b.shape[1] + 0 * b[:1, :1]), mesh=mesh,
                      in_specs=P('data'), out_specs=(P('data'), P('data')), axis_names={'data'})
    centred, width = f(x)
    want = np.asarray(x).reshape(2, 4, 4)
    np.testing.assert_allclose(np.asarray(centred), (want - want.mean(axis=0)).reshape(8, 4))
    assert np.asarray(width).tolist() == [[4.0], [4.0]]
    assert centred.sharding.mesh is mesh and centred.sharding.spec == P('data')
    # The experimental spelling names the automatic axes instead.
    g = experimental_shard_map(lambda b: lax.psum(b, 'data'), mesh, P('data'), P(), auto=frozenset({'model'}))
    assert np.asarray(g(jnp.arange(4.0))).tolist() == [2.0, 4.0]
    # Specs and collectives may only name manual axes.
    with pytest.raises(ValueError) as e:
        jax.shard_map(lambda b: b, mesh=mesh, in_specs=P('model'), out_specs=P(), axis_names={'data'})(jnp.ones(4))
    assert str(e.value) == ("shard_map in_specs argument must refer to an axis marked as manual ({'data'}), but:\n\n"
                            "  in_specs[0] refers to 'model'\n\nCheck the in_specs values passed to shard_map.")
    with pytest.raises(_spmd.SpmdError) as e:
        jax.shard_map(lambda b: lax.psum(b, 'model'), mesh=mesh, in_specs=P('data'), out_specs=P('data'),
                      axis_names={'data'})(jnp.ones(4))
    assert e.value.kind == 'AxisNameError'
    with pytest.raises(ValueError, match=r"requires axis_names=\{'pipe'\} to be a subset of mesh.axis_names="
                                         r"\('data', 'model'\)"):
        jax.shard_map(lambda b: b, mesh=mesh, in_specs=P(), out_specs=P(), axis_names={'pipe'})
    with pytest.raises(ValueError, match='leaves no mesh axis manual'):
        experimental_shard_map(lambda b: b, mesh, P(), P(), auto=frozenset({'data', 'model'}))
    with pytest.raises(ValueError, match=r"names 'pipe', which is not an axis of the mesh"):
        experimental_shard_map(lambda b: b, mesh, P(), P(), auto=frozenset({'pipe'}))
    with pytest.raises(TypeError, match='`axis_names` argument of shard_map should be of type `frozenset` or `set`'):
        jax.shard_map(lambda b: b, mesh=mesh, in_specs=P(), out_specs=P(), axis_names=['data'])


def test_jit_in_and_out_shardings_check_and_place_the_global_values():
    mesh = mesh_2x4()
    rows = NamedSharding(mesh, P('data'))
    f = jax.jit(lambda x, w: (x @ w, w.sum()), in_shardings=(rows, None),
                out_shardings=(NamedSharding(mesh, P('data', 'model')), NamedSharding(mesh, P())))
    x = jnp.arange(16.0).reshape(4, 4)
    y, total = f(x, jnp.eye(4))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    assert y.sharding == NamedSharding(mesh, P('data', 'model')) and total.sharding.spec == P()
    assert [s.data.shape for s in y.addressable_shards] == [(2, 1)] * 8
    # A PartitionSpec takes the mesh set around the call.
    with jax.sharding.use_mesh(mesh):
        z = jax.jit(lambda v: v * 2, out_shardings=P('model'))(jnp.arange(8.0))
    assert z.sharding == NamedSharding(mesh, P('model'))
    with pytest.raises(ValueError, match="a PartitionSpec, but no mesh is set"):
        jax.jit(lambda v: v, out_shardings=P('model'))(jnp.arange(8.0))
    # Shardings that do not fit, on an argument or on an output.
    with pytest.raises(ValueError, match=r"^One of pjit arguments with pytree key path x was given the sharding of "
                                         r"NamedSharding\(.*\), which implies that the global size of its dimension "
                                         r"0 should be divisible by 2, but it is equal to 3 \(full shape: \(3, 4\)\)$"):
        f(jnp.ones((3, 4)), jnp.eye(4))
    with pytest.raises(ValueError, match=r"^One of pjit outputs with pytree key path result\[0\] was given the "
                                         r"sharding of .* divisible by 4, but it is equal to 2"):
        f(jnp.ones((2, 2)), jnp.eye(2))
    # An argument already placed on other devices is refused, not moved.
    elsewhere = jax.device_put(jnp.ones((4, 4)), NamedSharding(Mesh(np.array(jax.devices()[:2]), ('d',)), P('d')))
    with pytest.raises(ValueError, match=r'^Received incompatible devices for jitted computation\. Got argument x of '
                                         r'<lambda> with shape float32\[4,4\] and device ids \[0, 1\] on platform CPU and '
                                         r'explicit input sharding with device ids \[0, 1, 2, 3, 4, 5, 6, 7\]'):
        f(elsewhere, jnp.eye(4))


def test_with_sharding_constraint_and_a_jit_of_shard_map_pass_their_layout_on():
    mesh = mesh_2x4()
    f = jax.jit(jax.shard_map(lambda a, b: lax.psum_scatter(a @ b, 'model', scatter_dimension=0, tiled=True),
                              mesh=mesh, in_specs=(P('data', 'model'), P('model', None)),
                              out_specs=P(('data', 'model'))))
    c = f(jnp.ones((8, 16)), jnp.ones((16, 4)))
    assert np.asarray(c).tolist() == [[16.0] * 4] * 8
    assert c.sharding == NamedSharding(mesh, P(('data', 'model')))
    g = jax.jit(lambda x: lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P('model'))))
    y = g(jnp.arange(8.0))
    assert np.asarray(y).tolist() == [2.0 * k for k in range(8)] and y.sharding.spec == P('model')
    assert 'sharding_constraint[' in str(jax.make_jaxpr(g)(jnp.arange(8.0)))
    # Values and gradients pass through it unchanged; outside jit the array keeps the layout.
    grad = jax.grad(lambda x: jnp.sum(lax.with_sharding_constraint(x * x, NamedSharding(mesh, P('data')))))
    assert np.asarray(grad(jnp.arange(4.0))).tolist() == [0.0, 2.0, 4.0, 6.0]
    with jax.sharding.use_mesh(mesh):
        assert lax.with_sharding_constraint(jnp.arange(4.0), P('data')).sharding == NamedSharding(mesh, P('data'))
    with pytest.raises(ValueError, match=r'^One of with_sharding_constraint arguments with pytree key path x was '
                                         r'given the sharding of .* divisible by 2, but it is equal to 3'):
        lax.with_sharding_constraint(jnp.arange(3.0), NamedSharding(mesh, P('data')))
