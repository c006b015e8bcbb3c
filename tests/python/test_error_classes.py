"""spmdsim's errors are also the Python classes JAX raises for the same
mistake, so a program's own `except` clauses behave as under JAX."""

import pytest

import _spmd
import jax
import jax.numpy as jnp


def test_an_unbound_axis_name_is_a_name_error_as_in_jax():
    with pytest.raises(NameError) as e:
        jax.pmap(lambda x: jax.lax.psum(x, 'j'), axis_name='i')(jnp.ones(jax.device_count()))
    assert isinstance(e.value, _spmd.SpmdError)
    assert e.value.kind == 'AxisNameError'
    assert e.value.message.startswith("psum: unbound axis name: 'j'")


def test_split_errors_are_value_errors_as_in_jax():
    n = jax.device_count()
    with pytest.raises(ValueError) as e:
        jax.pmap(lambda x: x)(jnp.ones((n + 1, 2)))
    assert e.value.kind == 'DeviceCountError'
    with pytest.raises(ValueError) as e:
        jax.pmap(lambda x, y: x + y)(jnp.ones((n, 2)), jnp.ones((n - 1, 2)))
    assert e.value.kind == 'InputSplitError'
