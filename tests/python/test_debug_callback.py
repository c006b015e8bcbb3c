"""jax.debug.callback: the function is called with concrete values, once per
device from inside a pmap (on the host, after the devices' run, in device
order), at once outside any trace; the calls made before a deadlock still
happen (issue 14)."""

import numpy as np
import pytest

import _spmd
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

pytestmark = pytest.mark.spmd(devices=4)


def test_once_per_device_with_its_values_in_device_order():
    calls = []

    def step(x):
        loss = lax.pmean(x * 2, 'i')
        jax.debug.callback(lambda d, v, l, tag: calls.append((tag, int(d), float(v), float(l))),
                           lax.axis_index('i'), x, loss, tag='train')
        return loss
    out = jax.pmap(step, axis_name='i')(jnp.arange(4.0))
    assert np.asarray(out).tolist() == [3.0] * 4
    assert calls == [('train', 0, 0.0, 3.0), ('train', 1, 1.0, 3.0), ('train', 2, 2.0, 3.0), ('train', 3, 3.0, 3.0)]
    # Every call of a loop, each device's in program order.
    calls.clear()

    def loop(x):
        return lax.fori_loop(0, 3, lambda k, v: (jax.debug.callback(lambda k, d: calls.append((int(d), int(k))), k,
                                                                   lax.axis_index('i')), v + 1)[1], x)
    jax.pmap(loop, axis_name='i')(jnp.zeros(2))
    assert calls == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]


def test_jit_shard_map_vmap_and_outside_any_trace():
    calls = []
    record = lambda *xs: calls.append(tuple(np.asarray(x).tolist() for x in xs))

    @jax.jit
    def f(x):
        jax.debug.callback(record, x.sum(), 7)  # a Python value is passed as is
        return x + 1
    assert np.asarray(f(jnp.ones(3))).tolist() == [2.0] * 3
    assert calls == [(3.0, 7)]
    jax.debug.callback(record, 1, jnp.arange(2))  # no trace: called at once
    assert calls[-1] == (1, [0, 1])
    mesh = jax.make_mesh((2,), ('d',))
    jax.shard_map(lambda b: (jax.debug.callback(record, lax.axis_index('d'), b), b)[1], mesh=mesh, in_specs=P('d'),
                  out_specs=P('d'))(jnp.arange(4.0))
    assert calls[-2:] == [(0, [0.0, 1.0]), (1, [2.0, 3.0])]
    calls.clear()
    jax.vmap(lambda v: (jax.debug.callback(record, v), v)[1])(jnp.arange(3))
    assert calls == [(0,), (1,), (2,)]
    # Under grad the callback sees the forward values and changes nothing.
    g = jax.grad(lambda v: (jax.debug.callback(record, v), v * v)[1])(3.0)
    assert float(g) == 6.0 and calls[-1] == (3.0,)


def test_calls_before_a_deadlock_happen_before_its_report():
    seen = []

    def step(x):
        jax.debug.callback(lambda d: seen.append(int(d)), lax.axis_index('i'))
        return lax.cond(lax.axis_index('i') == 1, lambda v: v, lambda v: lax.psum(v, 'i'), x)
    with pytest.raises(_spmd.SpmdError) as e:
        jax.pmap(step, axis_name='i')(jnp.arange(4.0))
    assert e.value.kind == 'Deadlock'
    assert seen == [0, 1, 2, 3]


def test_an_error_in_the_callback_reaches_the_program():
    def boom(v):
        raise RuntimeError(f'bad value {float(v)}')
    with pytest.raises(RuntimeError, match=r'^bad value 0\.0$'):
        jax.pmap(lambda x: (jax.debug.callback(boom, x), x)[1])(jnp.arange(2.0))
    with pytest.raises(TypeError, match='requires a callable'):
        jax.debug.callback(3, 1)


def test_the_values_are_ordinary_host_arrays():
    # Issue 36, finding 18: print(v), v > 1 and v * 2 raised DeviceOwnershipError (the device's own buffer).
    seen = []

    def show(v, w):
        seen.append((str(v), bool(v > 1), (v * 2).tolist(), v.shape, str(w.dtype), (w + v).tolist()))
        seen.append(v)

    jax.pmap(lambda x: (jax.debug.callback(show, x, x.astype(jnp.bfloat16) * 2), x)[1])(jnp.arange(4.0))
    assert seen[0::2] == [(str(float(d)), d > 1, 2.0 * d, (), 'bfloat16', 3.0 * d) for d in range(4)]
    kept = seen[1::2]
    assert np.asarray(jnp.stack(kept)).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert float(sum(kept)) == 6.0
