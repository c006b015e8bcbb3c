"""Every primitive's gradient against central finite differences: float64
with jax_enable_x64, and float32 with float32's tolerances. Each function is
differentiated in reverse mode (jax.grad) and forward mode (jax.jvp)."""

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

from autodiff_check import check_grad

_rng = np.random.default_rng(42)
POS = _rng.uniform(0.5, 2.0, (2, 3))     # positive: log, sqrt, pow, ...
UNIT = _rng.uniform(-0.8, 0.8, (2, 3))   # inside (-1, 1): arcsin, arccos
ANY = _rng.uniform(-2.0, 2.0, (2, 3))
VEC = _rng.uniform(-2.0, 2.0, (4,))
MAT = _rng.uniform(-1.0, 1.0, (3, 4))
B = _rng.uniform(-1.0, 1.0, (4, 2))

CASES = {
    # elementwise
    'neg': (lambda x: -x, ANY), 'abs': (jnp.abs, ANY), 'exp': (jnp.exp, ANY), 'log': (jnp.log, POS),
    'log1p': (jnp.log1p, POS), 'expm1': (jnp.expm1, ANY), 'sqrt': (jnp.sqrt, POS), 'rsqrt': (lax.rsqrt, POS),
    'square': (jnp.square, ANY), 'reciprocal': (jnp.reciprocal, POS), 'sin': (jnp.sin, ANY), 'cos': (jnp.cos, ANY),
    'tan': (jnp.tan, UNIT), 'tanh': (jnp.tanh, ANY), 'sinh': (jnp.sinh, ANY), 'cosh': (jnp.cosh, ANY),
    'arcsin': (jnp.arcsin, UNIT), 'arccos': (jnp.arccos, UNIT), 'arctan': (jnp.arctan, ANY),
    'logistic': (jax.nn.sigmoid, ANY), 'log2': (jnp.log2, POS), 'power_const': (lambda x: x ** 3, ANY),
    'add': (lambda x: x + x[::-1], ANY), 'sub': (lambda x: x - 2 * x[::-1], ANY), 'mul': (lambda x: x * x[::-1], ANY),
    'div': (lambda x: x / (x[::-1] + 3.0), POS), 'pow': (lambda x: x ** x[::-1], POS),
    'maximum': (lambda x: jnp.maximum(x, x[::-1] * 0.5), ANY), 'minimum': (lambda x: jnp.minimum(x, 0.3), ANY),
    'rem': (lambda x: lax.rem(x, 0.7), POS), 'arctan2': (lambda x: jnp.arctan2(x, x[::-1] + 3.0), ANY),
    'broadcast_add': (lambda x: x + x[0], ANY), 'scalar_mul': (lambda x: 2.5 * x, ANY),
    'where': (lambda x: jnp.where(x > 0, x ** 2, -x), ANY), 'clip': (lambda x: jnp.clip(x, -1.0, 1.0), ANY),
    'astype': (lambda x: x * jnp.arange(6).reshape(2, 3).astype(x.dtype) + (x > 0).astype(x.dtype), ANY),
    # reductions
    'sum': (lambda x: jnp.sum(x, axis=0), ANY), 'sum_all': (jnp.sum, ANY), 'mean': (lambda x: jnp.mean(x, 1), ANY),
    'max': (lambda x: jnp.max(x, axis=1), ANY), 'min': (jnp.min, ANY), 'prod': (lambda x: jnp.prod(x, axis=1), ANY),
    'prod_with_zero': (lambda x: jnp.prod(x.at[0, 1].set(0.0), axis=1), ANY),
    'var': (lambda x: jnp.var(x, axis=0), ANY), 'std': (jnp.std, ANY), 'norm': (jnp.linalg.norm, ANY),
    'cumsum': (lambda x: jnp.cumsum(x, axis=1), ANY), 'cumprod': (lambda x: jnp.cumprod(x, axis=1), POS),
    'cumprod_with_zero': (lambda x: jnp.cumprod(x.at[0, 1].set(0.0), axis=1) * x, ANY),
    'cumprod_axis0': (lambda x: jnp.cumprod(x, axis=0), ANY),
    'logsumexp': (lambda x: jax.nn.logsumexp(x, axis=1), ANY),
    # layout and indexing
    'reshape': (lambda x: x.reshape(3, 2) * jnp.arange(6.0).reshape(3, 2), ANY), 'transpose': (lambda x: x.T @ x, ANY),
    'broadcast_to': (lambda x: jnp.broadcast_to(x[0], (4, 3)) * jnp.arange(12.0).reshape(4, 3), ANY),
    'concatenate': (lambda x: jnp.concatenate([x, 2 * x[:, :1]], axis=1), ANY),
    'stack': (lambda x: jnp.stack([x[0], x[1] ** 2]), ANY), 'flip': (lambda x: jnp.flip(x, 1) * x, ANY),
    'slice': (lambda x: x[1:, ::-2] * x[0, 0], ANY), 'int_index': (lambda x: x[1] * x[0, 2], ANY),
    'take': (lambda x: x[:, jnp.array([0, 2, 2, 1])], ANY), 'take_axis0': (lambda x: jnp.take(x, jnp.array([1, 1, 0]), axis=0), ANY),
    'at_set': (lambda x: x.at[0, 1:].set(x[1, :2] ** 2), ANY), 'at_add': (lambda x: x.at[:, 0].add(x[:, 1] * 3), ANY),
    'at_mul': (lambda x: x.at[1].multiply(x[0]), ANY),
    'at_max': (lambda x: x.at[0, 1:].max(x[1, :2] * 0.5) * x, ANY), 'at_min': (lambda x: x.at[:, 0].min(x[:, 2] + 0.1), ANY), 'roll': (lambda x: jnp.roll(x, 1, axis=1) * x, ANY),
    'pad': (lambda x: jnp.pad(x, 1) ** 2, ANY), 'tile': (lambda x: jnp.tile(x, (2, 1)), ANY),
    'dynamic_slice': (lambda x: lax.dynamic_slice(x, (1, 1), (1, 2)), ANY),
    'dynamic_update_slice': (lambda x: lax.dynamic_update_slice(x, x[:1, :2] * 5, (1, 1)), ANY),
    'sort': (lambda x: jnp.sort(x, axis=1) * jnp.arange(6.0).reshape(2, 3), ANY),
    'sort_axis0': (lambda x: jnp.sort(x, axis=0) * jnp.arange(6.0).reshape(2, 3), ANY),
    'sort_carries': (lambda x: lax.sort((x[0], x[1] ** 2), num_keys=1)[1], ANY),
    'argsort_take': (lambda x: x[1][jnp.argsort(x[0])] * jnp.arange(3.0), ANY),
    'median': (lambda x: jnp.median(x, axis=1), ANY),
    # products
    'matmul': (lambda x: x @ x.T, ANY), 'vec_mat': (lambda v: v @ B, VEC), 'mat_vec': (lambda m: m @ VEC, MAT),
    'dot_1d': (lambda v: jnp.dot(v, v), VEC), 'batched': (lambda x: jnp.matmul(x.reshape(2, 3, 1), x.reshape(2, 1, 3)), ANY),
    'einsum': (lambda m: jnp.einsum('ij,jk->ik', m, B), MAT), 'outer': (lambda v: jnp.outer(v, v), VEC),
    # jax.nn
    'relu': (jax.nn.relu, ANY), 'gelu': (jax.nn.gelu, ANY), 'softmax': (lambda x: jax.nn.softmax(x, axis=-1), ANY),
    'log_softmax': (jax.nn.log_softmax, ANY), 'softplus': (jax.nn.softplus, ANY), 'silu': (jax.nn.silu, ANY),
    'cross_entropy': (lambda x: -jnp.sum(jax.nn.one_hot(jnp.array([2, 0]), 3) * jax.nn.log_softmax(x)), ANY),
}


@pytest.fixture
def x64():
    jax.config.update('jax_enable_x64', True)
    yield
    jax.config.update('jax_enable_x64', False)


@pytest.mark.parametrize('name', sorted(CASES))
def test_float64_against_finite_differences(name, x64):
    f, x = CASES[name]
    check_grad(f, x, dtype=np.float64, rtol=1e-6, atol=1e-7, h=1e-6)


@pytest.mark.parametrize('name', sorted(CASES))
def test_float32_against_finite_differences(name):
    f, x = CASES[name]
    check_grad(f, x, dtype=np.float32, rtol=2e-2, atol=2e-2, h=1e-2)


def test_a_converted_input_gets_its_own_dtype_back(x64):
    g = jax.grad(lambda x: jnp.sum(x.astype(jnp.float32) * 2))(jnp.ones(3, dtype=jnp.float64))
    assert g.dtype == jnp.float64
    assert g.tolist() == [2.0, 2.0, 2.0]
