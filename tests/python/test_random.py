"""jax.random draws JAX's numbers: its Threefry-2x32 keys and bits, and its
algorithms for uniform, normal, randint, permutation. The expected values
are JAX's own (its random_test.py's testPRNGValues and testRngRandomBits,
with jax_threefry_partitionable off as those tests run; and the values its
docs long printed for normal and uniform)."""

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax, random

pytestmark = pytest.mark.spmd(devices=2)


def as_uint32(a):
    return np.asarray(a).view(np.uint32).tolist()


@pytest.fixture
def original_layout():
    jax.config.update('jax_threefry_partitionable', False)
    yield
    jax.config.update('jax_threefry_partitionable', True)


def test_jax_published_values(original_layout):
    key = random.PRNGKey(0)
    assert as_uint32(random.split(key, 4)) == [[2285895361, 1501764800], [1518642379, 4090693311],
                                               [433833334, 4221794875], [839183663, 3740430601]]
    assert as_uint32(random.fold_in(key, 4)) == [2285895361, 433833334]
    assert np.asarray(random.randint(key, (3, 3), 0, 8)).tolist() == [[2, 1, 3], [6, 1, 5], [6, 3, 4]]
    seed = random.PRNGKey(1701)
    assert as_uint32(random.bits(seed, (3,))) == [56197195, 4200222568, 961309823]
    assert np.asarray(random.bits(seed, (3,), 'uint8')).tolist() == [216, 115, 43]
    assert np.asarray(random.bits(seed, (3,), 'uint16')).tolist() == [41682, 1300, 55017]
    assert float(random.uniform(key)) == 0.41845703125
    np.testing.assert_allclose(float(random.normal(key)), -0.20584226, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(random.normal(random.PRNGKey(42), (3,))),
                               [0.18693547, -1.2806505, -1.5593132], rtol=1e-6)


def test_partitionable_layout_is_the_default_and_split_is_fold_in():
    assert jax.config.jax_threefry_partitionable is True
    key = random.PRNGKey(72)
    assert [as_uint32(random.fold_in(key, i)) for i in range(3)] == as_uint32(random.split(key, 3))
    # vmap of fold_in over the axis index is split, as in JAX's test.
    f = jax.vmap(lambda k, _: random.fold_in(k, lax.axis_index('batch')), in_axes=(None, 0), axis_name='batch')
    assert as_uint32(f(key, jnp.ones(3))) == as_uint32(random.split(key, 3))
    # Drawing all at once or element by element gives the same numbers.
    keys = random.split(random.PRNGKey(0), 3)
    one_by_one = [float(random.normal(k)) for k in keys]
    assert np.asarray(jax.vmap(random.normal)(keys)).tolist() == one_by_one


def test_distributions_keep_their_contracts():
    key = random.PRNGKey(3)
    u = np.asarray(random.uniform(key, (1000,), minval=2.0, maxval=3.0))
    assert u.dtype == np.float32 and u.min() >= 2.0 and u.max() < 3.0
    r = np.asarray(random.randint(key, (1000,), -3, 4))
    assert r.dtype == np.int32 and set(r.tolist()) == set(range(-3, 4))
    p = np.asarray(random.permutation(key, 20))
    assert sorted(p.tolist()) == list(range(20)) and p.tolist() != list(range(20))
    rows = np.asarray(random.permutation(key, jnp.arange(12).reshape(4, 3)))
    assert sorted(rows[:, 0].tolist()) == [0, 3, 6, 9] and (rows[:, 1] == rows[:, 0] + 1).all()
    c = np.asarray(random.choice(key, 5, (3,), replace=False))
    assert len(set(c.tolist())) == 3
    t = np.asarray(random.truncated_normal(key, -0.5, 0.5, (500,)))
    assert t.min() >= -0.5 and t.max() <= 0.5
    logits = jnp.log(jnp.array([0.0001, 0.0001, 0.9998]))
    assert np.asarray(random.categorical(key, logits, shape=(50,))).tolist().count(2) >= 48
    assert np.asarray(random.bernoulli(key, 0.0, (10,))).tolist() == [False] * 10
    n = np.asarray(random.normal(key, (20000,)))
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    # Keys traced inside a pmap draw each device's numbers, as outside.
    keys = random.split(random.PRNGKey(5), 2)
    inside = jax.pmap(lambda k: random.uniform(k, (2,)))(keys)
    assert np.asarray(inside).tolist() == [np.asarray(random.uniform(k, (2,))).tolist() for k in keys]
    with pytest.raises(ValueError, match='must be an unsigned int dtype'):
        random.bits(key, (2,), jnp.int32)
