"""jax.random over spmdsim's counter-based generator (the random_bits
primitive): a key gives the same numbers on every run, device and schedule,
and keys may be traced (per-device keys passed into pmap).

A key is an int32[2] array, PRNGKey(s) = [s >> 32, s & 0xffffffff] as in JAX.
The numbers differ from JAX's threefry stream; their distributions do not.
"""

import math

import numpy as _np

import jax.numpy as jnp
from jax import lax
from jax._src import core
from jax._src.core import bind1

_SPLIT, _FOLD, _UNIFORM, _NORMAL_A, _NORMAL_B, _INT, _PERM, _BITS = range(1, 9)


def _bits(key, shape, stream, data=None):
    operands = (key,) if data is None else (key, data)
    return bind1('random_bits', *operands, shape=tuple(int(d) for d in shape), stream=stream)


def _check_key(key, name):
    aval = core.aval_of(key)
    if aval.dtype != _np.int32 or not aval.shape or aval.shape[-1] != 2:
        raise TypeError(f'jax.random.{name} expects a PRNG key (jax.random.PRNGKey), got an array of shape '
                        f'{aval.shape} and dtype {aval.dtype.name}')
    if aval.shape != (2,):
        raise ValueError(f'jax.random.{name} accepts a single key, but was given a key array of shape '
                         f'{aval.shape[:-1]} != (). Use jax.vmap for batching.')
    return key


def _shape(shape):
    if shape is None:
        return ()
    return (int(shape),) if isinstance(shape, (int, _np.integer)) else tuple(int(d) for d in shape)


def PRNGKey(seed):
    if isinstance(seed, core.Tracer):
        s = lax.convert_element_type(seed, _np.int32)
        return jnp.stack([jnp.zeros((), _np.int32), s])
    seed = int(seed)
    hi = (seed >> 32) & 0xffffffff
    lo = seed & 0xffffffff
    return jnp.asarray(_np.array([hi, lo], dtype=_np.uint32).view(_np.int32))


key = PRNGKey


def key_data(keys):
    return keys


def split(key, num=2):
    _check_key(key, 'split')
    shape = (num, 2) if isinstance(num, (int, _np.integer)) else tuple(num) + (2,)
    return _bits(key, shape, _SPLIT)


def fold_in(key, data):
    _check_key(key, 'fold_in')
    return _bits(key, (2,), _FOLD, lax.convert_element_type(jnp.asarray(data), _np.int32))


def bits(key, shape=(), dtype=None):
    _check_key(key, 'bits')
    return _bits(key, _shape(shape), _BITS)


def _unit(key, shape, stream):
    """Floats in [0, 1) with 24 random bits each."""
    b = lax.convert_element_type(jnp.floor_divide(_bits(key, shape, stream), 128), _np.float32)
    return jnp.multiply(b, _np.float32(1.0 / (1 << 24)))


def uniform(key, shape=(), dtype=jnp.float32, minval=0.0, maxval=1.0):
    _check_key(key, 'uniform')
    u = _unit(key, _shape(shape), _UNIFORM)
    out = jnp.add(jnp.multiply(u, jnp.subtract(maxval, minval)), minval)
    return lax.convert_element_type(out, dtype)


def normal(key, shape=(), dtype=jnp.float32):
    """Box-Muller on two independent streams."""
    _check_key(key, 'normal')
    shape = _shape(shape)
    u1 = jnp.add(_unit(key, shape, _NORMAL_A), _np.float32(0.5 / (1 << 24)))
    u2 = _unit(key, shape, _NORMAL_B)
    r = jnp.sqrt(jnp.multiply(-2.0, jnp.log(u1)))
    return lax.convert_element_type(jnp.multiply(r, jnp.cos(jnp.multiply(2.0 * math.pi, u2))), dtype)


def randint(key, shape, minval, maxval, dtype=jnp.int32):
    _check_key(key, 'randint')
    span = jnp.maximum(jnp.subtract(maxval, minval), 1)
    out = jnp.add(jnp.remainder(_bits(key, _shape(shape), _INT), span), minval)
    return lax.convert_element_type(out, dtype)


def bernoulli(key, p=0.5, shape=None):
    _check_key(key, 'bernoulli')
    if shape is None:
        shape = core.aval_of(jnp._as_array(p)).shape
    return jnp.less(uniform(key, shape), p)


def permutation(key, x, axis=0, independent=False):
    _check_key(key, 'permutation')
    if isinstance(x, (int, _np.integer)):
        return jnp.argsort(_bits(key, (int(x),), _PERM))
    x = jnp._as_array(x)
    n = core.aval_of(x).shape[axis]
    return jnp.take(x, jnp.argsort(_bits(key, (n,), _PERM)), axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    _check_key(key, 'choice')
    n = int(a) if isinstance(a, (int, _np.integer)) else core.aval_of(jnp._as_array(a)).shape[axis]
    shape = _shape(shape)
    if p is not None:
        raise NotImplementedError('jax.random.choice with p=: spmdsim draws uniformly')
    if replace:
        index = randint(key, shape, 0, n)
    else:
        count = 1
        for d in shape:
            count *= d
        if count > n:
            raise ValueError(f'Cannot take a larger sample (size {count}) than population (size {n}) when '
                             "'replace=False'")
        index = jnp.reshape(permutation(key, n)[:count], shape)
    return index if isinstance(a, (int, _np.integer)) else jnp.take(jnp._as_array(a), index, axis=axis)


def truncated_normal(key, lower, upper, shape=(), dtype=jnp.float32):
    return jnp.clip(normal(key, shape, dtype), lower, upper)


def categorical(key, logits, axis=-1, shape=None):
    _check_key(key, 'categorical')
    logits = jnp._as_array(logits)
    u = _unit(key, core.aval_of(logits).shape, _UNIFORM)
    gumbel = jnp.negative(jnp.log(jnp.negative(jnp.log(jnp.add(u, _np.float32(0.5 / (1 << 24)))))))
    return jnp.argmax(jnp.add(logits, gumbel), axis=axis)
