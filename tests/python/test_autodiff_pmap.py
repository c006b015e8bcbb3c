"""Gradients inside and around pmap: collectives with JAX's transpose rules
(and JAX's values, including the scaling of psum's transpose), grad of a
pmap, pmap of a grad, nested pmaps, and a data-parallel training loop
against a numpy reference."""

from functools import partial
from typing import NamedTuple

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

from autodiff_check import numeric_grad

N = 4
X = np.random.default_rng(3).uniform(-1.0, 1.0, (N, 3)).astype(np.float32)
W = np.random.default_rng(4).uniform(0.5, 1.5, (N, 3)).astype(np.float32)


def per_device_grad(f):
    return np.asarray(jax.pmap(jax.grad(lambda x: jnp.sum(f(x))), axis_name='i')(X))


@pytest.mark.spmd(devices=N)
def test_psum_transpose_is_psum_jax_scaling():
    # d/dx_d of psum(x^2) on device d, as JAX computes it: the replicated
    # cotangent 1 is summed over the axis again, giving N * 2 x_d.
    g = per_device_grad(lambda x: lax.psum(x ** 2, 'i'))
    np.testing.assert_allclose(g, N * 2 * X, rtol=1e-6)


@pytest.mark.spmd(devices=N)
def test_pmean_transpose_is_pmean():
    g = per_device_grad(lambda x: lax.pmean(x ** 2, 'i'))
    np.testing.assert_allclose(g, 2 * X, rtol=1e-6)


@pytest.mark.spmd(devices=N)
def test_all_gather_transposes_to_psum_scatter():
    w = jnp.asarray(W)
    g = per_device_grad(lambda x: w * lax.all_gather(x, 'i'))
    np.testing.assert_allclose(g, N * W, rtol=1e-6)  # every device's cotangent of row d, summed


@pytest.mark.spmd(devices=N)
def test_psum_scatter_transposes_to_all_gather():
    def f(x):
        rows = jnp.stack([x * (k + 1) for k in range(N)])  # (N, 3)
        return lax.psum_scatter(rows, 'i') * lax.axis_index('i')
    g = per_device_grad(f)
    # cotangent of rows[k] on each device is axis_index == k: all_gather
    # gives each device [0, 1, 2, 3]; sum_k (k + 1) * k = 20
    np.testing.assert_allclose(g, np.full((N, 3), 20.0), rtol=1e-6)


@pytest.mark.spmd(devices=N)
def test_ppermute_transposes_to_the_inverse_permutation():
    ring = [(i, (i + 1) % N) for i in range(N)]
    g = per_device_grad(lambda x: lax.ppermute(x, 'i', ring) * (lax.axis_index('i') + 1))
    # device d's x lands on device d+1, whose weight is d+2
    np.testing.assert_allclose(g, np.repeat(((np.arange(N) + 1) % N + 1)[:, None], 3, 1), rtol=1e-6)


@pytest.mark.spmd(devices=N)
def test_all_to_all_transposes_with_axes_swapped():
    def f(x):
        blocks = jnp.stack([x * (k + 1) for k in range(N)])
        return lax.all_to_all(blocks, 'i', 0, 0) * (lax.axis_index('i') + 1)
    g = per_device_grad(f)
    # block k of device d goes to device k (weight k + 1): sum_k (k+1)^2 = 30
    np.testing.assert_allclose(g, np.full((N, 3), 30.0), rtol=1e-6)


@pytest.mark.spmd(devices=N)
def test_pmax_has_no_rule_as_in_jax():
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'pmax' not implemented"):
        per_device_grad(lambda x: lax.pmax(x, 'i'))


@pytest.mark.spmd(devices=N)
def test_grad_of_a_pmap_is_the_gradient_of_the_global_function():
    w = jnp.asarray(W)

    def global_fn(x):
        y = jax.pmap(lambda v: lax.psum(jnp.sin(v), 'i') * v, axis_name='i')(x)
        return jnp.sum(w * y)
    got = np.asarray(jax.grad(global_fn)(jnp.asarray(X)))
    expected = numeric_grad(lambda v: global_fn(jnp.asarray(v, dtype=jnp.float32)), X.astype(np.float64), 1e-2)
    np.testing.assert_allclose(got, expected, rtol=2e-2, atol=2e-2)


@pytest.mark.spmd(devices=N)
def test_grad_of_a_pmap_with_a_replicated_argument_sums_the_devices():
    def global_fn(s, x):
        return jnp.sum(jax.pmap(lambda v, s: v * s, axis_name='i', in_axes=(0, None))(x, s))
    g = jax.grad(global_fn)(2.0, jnp.asarray(X))
    assert float(g) == pytest.approx(float(np.sum(X)), rel=1e-5)


@pytest.mark.spmd(devices=N)
def test_nested_pmap_gradient(original_pmap):
    x = jnp.arange(8.0).reshape(2, 2, 2)
    inner = jax.pmap(lambda v: lax.psum(v * v, 'j'), axis_name='j')
    g = jax.pmap(jax.grad(lambda v: jnp.sum(inner(v))), axis_name='i', devices=jax.devices()[:2])(x)
    np.testing.assert_allclose(np.asarray(g), 2 * 2 * np.arange(8.0).reshape(2, 2, 2))


class Params(NamedTuple):
    w: jnp.ndarray
    b: jnp.ndarray


def _numpy_step(w, b, x, y, lr):
    pred = x @ w + b
    err = pred - y
    gw = 2 * x.T @ err / err.size
    gb = 2 * np.sum(err, axis=0) / err.size
    return w - lr * gw, b - lr * gb, np.mean(err ** 2)


@pytest.mark.spmd(devices=N)
def test_data_parallel_training_loop_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N * 8, 5)).astype(np.float32)
    true_w = rng.normal(size=(5, 2)).astype(np.float32)
    y = (x @ true_w + 0.3).astype(np.float32)
    params = Params(jnp.zeros((5, 2)), jnp.zeros((2,)))
    lr = 0.1

    def loss_fn(p, xb, yb):
        return jnp.mean((xb @ p.w + p.b - yb) ** 2)

    @partial(jax.pmap, axis_name='batch')
    def step(p, xb, yb):
        loss, grads = jax.value_and_grad(loss_fn)(p, xb, yb)
        grads = lax.pmean(grads, 'batch')
        return jax.tree_util.tree_map(lambda a, g: a - lr * g, p, grads), lax.pmean(loss, 'batch')
    replicated = jax.tree_util.tree_map(lambda p: jnp.stack([p] * N), params)  # not the deprecated device_put_replicated
    xs, ys = x.reshape(N, 8, 5), y.reshape(N, 8, 2)
    w, b = np.zeros((5, 2), np.float32), np.zeros(2, np.float32)
    for _ in range(20):
        replicated, loss = step(replicated, xs, ys)
        w, b, ref_loss = _numpy_step(w, b, x, y, lr)
        assert float(loss[0]) == pytest.approx(float(ref_loss), rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(np.asarray(replicated.w[0]), w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(replicated.b[3]), b, rtol=1e-5, atol=1e-5)
