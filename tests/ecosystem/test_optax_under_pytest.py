"""The pytest plugin in the test venv: a project's own tests that use optax
(and the venv's numpy 2) on spmdsim's jax, each with fresh devices."""

import _spmd
import numpy as np
import optax
import pytest

import jax
import jax.numpy as jnp


@pytest.mark.spmd(devices=4)
def test_pmapped_sgd_step_with_pmean_keeps_replicas_equal():
    opt = optax.sgd(0.5)
    params = jax.device_put_replicated({'w': jnp.ones((2,))}, jax.local_devices())
    state = jax.pmap(opt.init)(params)
    x = jnp.arange(8.0, dtype=jnp.float32).reshape(4, 2)

    def step(p, s, x):
        g = jax.grad(lambda p: jnp.sum(p['w'] * x))(p)
        g = jax.lax.pmean(g, 'd')
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s

    params, state = jax.pmap(step, axis_name='d')(params, state, x)
    # the mean over devices of x is [3, 4]: w = 1 - 0.5 * [3, 4]
    assert jax.device_count() == 4
    assert np.asarray(params['w']).tolist() == [[-0.5, -1.0]] * 4


def test_venv_numpy_is_numpy_2_and_arrays_convert():
    assert int(np.__version__.split('.')[0]) >= 2
    a = jnp.arange(6, dtype=jnp.float32).reshape(2, 3) * 2
    assert np.asarray(a).tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    assert np.asarray(a).strides == (12, 4)


def test_a_deadlock_in_a_test_is_reported_not_hung():
    def body(x):
        return jax.lax.cond(jax.lax.axis_index('d') == 1, lambda v: v, lambda v: jax.lax.psum(v, 'd'), x)
    with pytest.raises(_spmd.SpmdError) as e:
        jax.pmap(body, axis_name='d')(jnp.arange(float(jax.device_count())))
    assert e.value.kind == 'Deadlock'
