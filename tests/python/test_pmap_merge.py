"""jax_pmap_shmap_merge: the new jax.pmap (JAX >= 0.8: jit of a shard_map,
the default) where it behaves or errs differently from the original pmap
(the flag off), and the deprecated device_put_replicated/sharded."""

import os
import subprocess
import sys

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

pytestmark = pytest.mark.spmd(devices=8)


def nested(x):
    return jax.pmap(lambda v: lax.psum(v, ('i', 'j')), axis_name='j')(x)


def test_the_default_is_the_new_pmap_and_the_environment_can_turn_it_off():
    assert jax.config.jax_pmap_shmap_merge is True
    code = 'import jax; print(jax.config.jax_pmap_shmap_merge)'
    env = dict(os.environ, JAX_PMAP_SHMAP_MERGE='0')
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == 'False\n'


def test_nested_pmaps_are_the_original_pmaps_only():
    x = jnp.ones((2, 4))
    with pytest.raises(ValueError) as e:
        jax.pmap(nested, axis_name='i')(x)
    assert str(e.value) == ("The context mesh AbstractMesh('i': 2, axis_types=(Manual,)) should match the mesh "
                            "passed to shard_map Mesh('j': 4, axis_types=(Auto,))")
    assert 'one jax.shard_map over a 2-D mesh' in e.value._spmd_hint
    assert "jax.config.update('jax_pmap_shmap_merge', False)" in e.value._spmd_hint
    # Inside a shard_map too; inside jit a pmap is fine.
    mesh = jax.make_mesh((2,), ('i',))
    with pytest.raises(ValueError, match=r"^The context mesh AbstractMesh\('i': 2"):
        jax.shard_map(nested, mesh=mesh, in_specs=P('i'), out_specs=P('i'))(x)
    assert np.asarray(jax.jit(jax.pmap(lambda v: lax.psum(v, 'j'), axis_name='j'))(jnp.ones(4))).tolist() == [4.0] * 4


def test_nested_pmaps_under_the_original_pmap(original_pmap):
    assert np.asarray(jax.pmap(nested, axis_name='i')(jnp.ones((2, 4)))).tolist() == [[8.0] * 4] * 2


def test_a_mapped_argument_is_required_and_axis_size_must_agree():
    with pytest.raises(ValueError, match=r'^pmap requires at least one argument with a mapped axis\.$') as e:
        jax.pmap(lambda: lax.axis_index('i'), axis_name='i', axis_size=3)()
    assert "jax.config.update('jax_pmap_shmap_merge', False)" in e.value._spmd_hint
    with pytest.raises(ValueError, match=r"^Specified axis_size 3 doesn't match received axis_size 4\.$"):
        jax.pmap(lambda v: v, axis_size=3)(jnp.ones(4))


def test_axis_size_alone_under_the_original_pmap(original_pmap):
    assert np.asarray(jax.pmap(lambda: lax.axis_index('i') * 2, axis_name='i', axis_size=3)()).tolist() == [0, 2, 4]


def test_outputs_carry_a_named_sharding_over_the_pmap_devices(capsys):
    out, total = jax.pmap(lambda v: (v * 2, lax.psum(v, 'i')), axis_name='i', out_axes=(0, None))(jnp.ones((4, 3)))
    assert out.sharding.spec == P('i') and total.sharding.spec == P()
    assert out.sharding.mesh.axis_names == ('i',)
    assert out.sharding.mesh.device_ids.tolist() == [0, 1, 2, 3]
    assert [s.device.id for s in out.addressable_shards] == [0, 1, 2, 3]
    assert out.addressable_shards[2].data.shape == (1, 3)
    # The mapped axis may be another one: out_axes=1 splits dimension 1.
    t = jax.pmap(lambda v: v, axis_name='i', out_axes=1, devices=jax.devices()[4:])(jnp.ones((4, 2)))
    assert t.shape == (2, 4) and t.sharding.spec == P(None, 'i')
    assert t.sharding.mesh.device_ids.tolist() == [4, 5, 6, 7]
    # ... and feeding an output back into the same pmap is no resharding.
    f = jax.pmap(lambda v: v + 1, axis_name='i')
    assert np.asarray(f(f(jnp.zeros(4)))).tolist() == [2.0] * 4


def test_inputs_on_other_devices_are_refused_not_resharded():
    mesh8 = jax.make_mesh((8,), ('d',))
    w = jax.device_put(jnp.zeros(8), NamedSharding(mesh8, P('d')))

    def add(x, w):
        return x + w.sum()
    with pytest.raises(ValueError) as e:
        jax.pmap(add, in_axes=(0, None))(jnp.ones(4), w)
    assert str(e.value) == ('Received incompatible devices for jitted computation. Got argument w of add with shape '
                            'float32[8] and device ids [0, 1, 2, 3, 4, 5, 6, 7] on platform CPU and explicit input '
                            'sharding with device ids [0, 1, 2, 3] on platform CPU')
    assert 'jax.device_put it onto the pmap\'s devices' in e.value._spmd_hint
    # On the pmap's own devices (8 of them), it is used as is.
    assert np.asarray(jax.pmap(add, in_axes=(0, None))(jnp.ones(8), w)).tolist() == [1.0] * 8


def test_inputs_on_other_devices_are_resharded_by_the_original_pmap(original_pmap):
    w = jax.device_put(jnp.zeros(8), NamedSharding(jax.make_mesh((8,), ('d',)), P('d')))
    assert np.asarray(jax.pmap(lambda x, w: x + w.sum(), in_axes=(0, None))(jnp.ones(4), w)).tolist() == [1.0] * 4


def test_device_put_replicated_and_sharded_work_and_warn_as_deprecated():
    with pytest.warns(DeprecationWarning, match=r'^jax.device_put_replicated is deprecated; use jax.device_put '
                                                r'instead\. See https://docs.jax.dev/en/latest/migrate_pmap.html'):
        put_replicated = jax.device_put_replicated
    r = put_replicated({'w': jnp.arange(2.0)}, jax.devices()[:4])
    assert np.asarray(r['w']).tolist() == [[0.0, 1.0]] * 4
    assert r['w'].sharding.spec == P('_device_put_replicated')
    with pytest.warns(DeprecationWarning, match=r'^jax.device_put_sharded is deprecated'):
        from jax import device_put_sharded
    s = device_put_sharded([jnp.array(k) for k in range(4)], jax.devices()[:4])
    assert np.asarray(s).tolist() == [0, 1, 2, 3]
    # Both feed a pmap over the same devices.
    assert np.asarray(jax.pmap(lambda a, b: a.sum() + b)(r['w'], s)).tolist() == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match=r'must have consistent shape and dtype, but got float32\[2\] and float32\[3\]'):
        device_put_sharded([jnp.ones(2), jnp.ones(3)], jax.devices()[:2])
    assert jax.__version__.startswith('0.8.1')
