"""Fixtures shared by spmdsim's own pytest suites."""

import pytest

import jax


@pytest.fixture
def original_pmap():
    """The original jax.pmap (jax_pmap_shmap_merge off), e.g. for nested pmaps,
    restored to the default (the new pmap, JAX >= 0.8) after the test."""
    jax.config.update('jax_pmap_shmap_merge', False)
    yield
    jax.config.update('jax_pmap_shmap_merge', True)
