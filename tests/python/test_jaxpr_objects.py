"""jax.make_jaxpr's result walked as JAX's ClosedJaxpr (issue 34): .jaxpr,
.eqns with .primitive.name, .params (sub-programs as ClosedJaxprs), .invars
and .outvars with avals, as debugging code that counts collectives uses."""

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

pytestmark = pytest.mark.spmd(devices=8)


def names(closed):
    return [e.primitive.name for e in closed.eqns]


def test_equations_primitives_params_and_variables():
    def step(w, x):
        return lax.psum(jnp.sin(x @ w), 'i'), lax.axis_index('i')
    closed = jax.make_jaxpr(jax.pmap(step, axis_name='i', in_axes=(None, 0)))(jnp.ones((3, 2)), jnp.ones((4, 5, 3)))
    assert isinstance(closed, jax.core.ClosedJaxpr) and closed.consts == [] and closed.jaxpr.constvars == []
    assert names(closed) == ['xla_pmap'] and closed.eqns is not closed.eqns  # a fresh list each time, as a view
    (pmap,) = closed.eqns
    assert pmap.params['axis_name'] == 'i' and pmap.params['axis_size'] == 4
    inner = pmap.params['call_jaxpr']
    assert isinstance(inner, jax.extend.core.ClosedJaxpr)
    assert names(inner) == ['dot_general', 'sin', 'psum', 'axis_index']
    assert inner.eqns[0].params['dimension_numbers'] == (((1,), (0,)), ((), ()))
    assert inner.eqns[0].params['preferred_element_type'] == np.dtype(np.float32)
    assert sum(e.primitive.name == 'psum' for e in inner.eqns) == 1
    psum = inner.eqns[2]
    assert psum.params['axes'] == ('i',) and psum.invars[0] is inner.eqns[1].outvars[0]
    assert [(v.aval.shape, v.aval.dtype) for v in closed.jaxpr.invars] == [((3, 2), np.float32), ((4, 5, 3), np.float32)]
    assert [v.aval.shape for v in inner.jaxpr.outvars] == [(5, 2), ()]
    assert str(closed.jaxpr) == str(closed)


def test_literals_and_branches():
    closed = jax.make_jaxpr(lambda x: lax.cond(x > 0, lambda v: v * 2.0, jnp.cos, x))(1.0)
    gt = closed.eqns[0]
    assert gt.primitive.name == 'gt' and isinstance(gt.invars[1], jax.core.Literal)
    assert gt.invars[1].val.tolist() == 0 and gt.outvars[0].aval.dtype == np.bool_
    cond = closed.eqns[-1]
    assert cond.primitive.name == 'cond'
    assert [names(b) for b in cond.params['branches']] == [['cos'], ['mul']]


def test_closed_over_arrays_are_constvars_as_in_jax():
    w = jnp.arange(6.0).reshape(2, 3)
    b = jnp.ones(3)
    closed = jax.make_jaxpr(lambda x: (x @ w + b) * b + 2.0)(jnp.ones((4, 2)))
    # real JAX 0.8.1's first line; a scalar stays a literal
    assert str(closed).splitlines()[0] == '{ lambda a:f32[2,3] b:f32[3]; c:f32[4,2]. let'
    assert [v.aval.shape for v in closed.jaxpr.constvars] == [(2, 3), (3,)]
    assert [np.asarray(c).tolist() for c in closed.consts] == [np.asarray(w).tolist(), [1.0, 1.0, 1.0]]
    assert closed.eqns[0].invars[1] is closed.jaxpr.constvars[0]
    assert repr(closed.jaxpr.constvars[1]).endswith(':float32[3]')
