"""jax.random with JAX's Threefry-2x32 generator and JAX's algorithms on top
of it (src/program/threefry.cc), so a program draws the numbers it draws
under JAX: keys, split, fold_in, bits, uniform, randint, bernoulli,
permutation, choice are JAX's bit for bit; normal, truncated_normal and
categorical go through erfinv / log, equal to JAX's within float32 rounding.

spmdsim has no unsigned dtypes: a key is JAX's uint32[2] held as int32[2]
(the same 64 bits; np.asarray(key).view(np.uint32) shows JAX's numbers), and
bits() returns uint32 values as int32 bit patterns. jax_threefry_partitionable
(JAX's default since 0.5: on) chooses JAX's counter layout, as in JAX.
"""

import math

import numpy as _np

import jax.numpy as jnp
from jax import lax
from jax._src import core, dtypes
from jax._src.config import config
from jax._src.core import bind1

_SIGN = _np.int32(-2 ** 31)


def _partitionable():
    return bool(config.read('jax_threefry_partitionable'))


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


def _bits(key, shape, width=32):
    return bind1('threefry_bits', key, shape=tuple(shape), width=width, partitionable=_partitionable())


def PRNGKey(seed):
    """JAX's threefry_seed: [seed >> 32, seed & 0xffffffff] as uint32 words."""
    if isinstance(seed, core.Tracer):
        aval = core.aval_of(seed)
        if aval.shape or aval.dtype.kind not in 'iu':
            raise TypeError(f'PRNG key seed must be an integer scalar; got {seed!r}.')
        low = lax.convert_element_type(seed, _np.int32)
        high = jnp.zeros((), _np.int32) if aval.dtype.itemsize <= 4 else \
            lax.convert_element_type(jnp.right_shift(seed, 32), _np.int32)
        return jnp.stack([high, low])
    if isinstance(seed, (float, _np.floating)) or (hasattr(seed, 'dtype') and _np.dtype(seed.dtype).kind == 'f'):
        raise TypeError(f'PRNG key seed must be an integer; got {seed!r}')
    seed = int(seed)
    if not config.read('jax_enable_x64'):
        if not -2 ** 31 <= seed < 2 ** 32:
            raise OverflowError(f'Python int {seed} too large to convert to int32')
        high, low = 0, seed & 0xffffffff  # a 32-bit seed: the high word is its (logical) shift, 0
    else:
        high, low = (seed >> 32) & 0xffffffff, seed & 0xffffffff
    return jnp.asarray(_np.array([high, low], dtype=_np.uint32).view(_np.int32))


key = PRNGKey


def key_data(keys):
    return keys


def wrap_key_data(key_bits_array, *, impl=None):
    return jnp.asarray(_np.asarray(key_bits_array).astype(_np.uint32).view(_np.int32)) \
        if not isinstance(key_bits_array, core.Tracer) else key_bits_array


def split(key, num=2):
    _check_key(key, 'split')
    shape = (int(num),) if isinstance(num, (int, _np.integer)) else tuple(int(d) for d in num)
    return bind1('threefry_split', key, shape=shape, partitionable=_partitionable())


def fold_in(key, data):
    _check_key(key, 'fold_in')
    if isinstance(data, (_np.ndarray, _np.generic)) and _np.asarray(data).dtype.kind == 'u':
        # 32 bits of unsigned data (flax's jnp.uint32 of a name's hash): the
        # same bits as int32, which is what threefry folds in.
        data = _np.asarray(data).astype(_np.uint32).view(_np.int32)
    data = jnp.asarray(data)
    if data.dtype.kind not in 'iu':
        data = lax.convert_element_type(data, _np.int32)
    return bind1('threefry_fold_in', key, data)


def bits(key, shape=(), dtype=None):
    _check_key(key, 'bits')
    name = 'uint32' if dtype is None else _np.dtype(dtype).name
    widths = {'uint8': 8, 'uint16': 16, 'uint32': 32, 'uint64': 64}
    if name not in widths:
        raise ValueError(f'dtype argument to `bits` must be an unsigned int dtype, got {name}')
    width = widths[name]
    if width == 64 and not config.read('jax_enable_x64'):
        width = 32  # as JAX: uint64 is uint32 without x64
    return _bits(key, _shape(shape), width)


def _uniform(key, shape, dtype, minval, maxval):
    dtype = _np.dtype(dtypes.canonicalize(dtype))
    if dtype.kind != 'f':
        raise TypeError('uniform only accepts floating point dtypes.')
    wide = dtype == _np.float64
    unit = bind1('random_unit', _bits(key, shape, 64 if wide else 32))
    if not wide:
        unit = lax.convert_element_type(unit, dtype) if dtype != _np.float32 else unit
    lo = lax.convert_element_type(jnp.asarray(minval), dtype)
    hi = lax.convert_element_type(jnp.asarray(maxval), dtype)
    return jnp.maximum(lo, jnp.add(jnp.multiply(unit, jnp.subtract(hi, lo)), lo))


def uniform(key, shape=(), dtype=jnp.float32, minval=0.0, maxval=1.0):
    _check_key(key, 'uniform')
    return _uniform(key, _shape(shape), dtype, minval, maxval)


def normal(key, shape=(), dtype=jnp.float32):
    """JAX's: sqrt(2) * erfinv(u), u uniform in (-1, 1)."""
    _check_key(key, 'normal')
    dt = _np.dtype(dtypes.canonicalize(dtype))
    lo = _np.nextafter(_np.array(-1.0, dt), _np.array(0.0, dt))
    u = _uniform(key, _shape(shape), dt, lo, 1.0)
    return jnp.multiply(_np.array(_np.sqrt(2), dt), lax.erf_inv(u))


def truncated_normal(key, lower, upper, shape=None, dtype=jnp.float32):
    _check_key(key, 'truncated_normal')
    dt = _np.dtype(dtypes.canonicalize(dtype))
    lower, upper = jnp.asarray(lower, dt), jnp.asarray(upper, dt)
    if shape is None:
        shape = _np.broadcast_shapes(lower.shape, upper.shape)
    sqrt2 = _np.array(_np.sqrt(2), dt)
    a, b = lax.erf(jnp.divide(lower, sqrt2)), lax.erf(jnp.divide(upper, sqrt2))
    u = _uniform(key, _shape(shape), dt, a, b)
    # JAX clips to the next floats inside (lower, upper); here to the bounds.
    return jnp.clip(jnp.multiply(sqrt2, lax.erf_inv(u)), lower, upper)


def _int_bounds(value, dtype):
    info = _np.iinfo(dtype)
    v = jnp.asarray(value)
    if v.dtype.kind not in 'iu':
        v = lax.convert_element_type(v, dtype)
    return jnp.clip(v, info.min, info.max).astype(dtype)


def randint(key, shape, minval, maxval, dtype=jnp.int32):
    _check_key(key, 'randint')
    dt = _np.dtype(dtypes.canonicalize(dtype))
    if dt.kind not in 'iu':
        raise TypeError(f'randint only accepts integer dtypes, got {dt}')
    shape = _shape(shape)
    lo = jnp.broadcast_to(_int_bounds(minval, dt), shape)
    hi = jnp.broadcast_to(_int_bounds(maxval, dt), shape)
    k1, k2 = split(key)
    width = 64 if dt.itemsize == 8 else 32
    return bind1('randint_bits', _bits(k1, shape, width), _bits(k2, shape, width), lo, hi)


def bernoulli(key, p=0.5, shape=None):
    _check_key(key, 'bernoulli')
    p = jnp.asarray(p) if not isinstance(p, core.Array) else p
    if p.dtype.kind != 'f':
        p = lax.convert_element_type(p, _np.float32)
    shape = tuple(p.shape) if shape is None else _shape(shape)
    return jnp.less(_uniform(key, shape, p.dtype, 0.0, 1.0), p)


def _shuffle(key, x, axis):
    """JAX's: sort by fresh 32-bit keys, ceil(3 ln n / ln(2^32 - 1)) times."""
    size = int(_np.prod(core.aval_of(x).shape))
    rounds = int(_np.ceil(3 * _np.log(max(1, size)) / _np.log(_np.iinfo(_np.uint32).max)))
    for _ in range(rounds):
        key, subkey = split(key)
        # Unsigned order on int32 bit patterns: flip the sign bit.
        sort_keys = jnp.bitwise_xor(_bits(subkey, core.aval_of(x).shape), _SIGN)
        _, x = lax.sort((sort_keys, x), dimension=axis, num_keys=1)
    return x


def permutation(key, x, axis=0, independent=False):
    _check_key(key, 'permutation')
    if not _np.ndim(x) and not isinstance(x, core.Array):
        return _shuffle(key, jnp.arange(int(x)), 0)
    x = jnp.asarray(x)
    if not x.ndim:
        if x.dtype.kind not in 'iu':
            raise TypeError('x must be an integer or at least 1-dimensional')
        return _shuffle(key, jnp.arange(int(x)), 0)
    axis = axis % x.ndim
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    return jnp.take(x, _shuffle(key, jnp.arange(x.shape[axis]), 0), axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    _check_key(key, 'choice')
    scalar = isinstance(a, (int, _np.integer)) or not _np.ndim(a)
    arr = None if scalar else jnp.asarray(a)
    n = int(a) if scalar else arr.shape[axis]
    shape = _shape(shape)
    count = int(_np.prod(shape)) if shape else 1
    if p is not None:
        p = jnp.asarray(p)
        if replace:
            cumulative = jnp.cumsum(p)
            r = jnp.multiply(cumulative[-1], jnp.subtract(1, _uniform(key, shape, cumulative.dtype, 0.0, 1.0)))
            index = jnp.sum(jnp.less(jnp.expand_dims(cumulative, tuple(range(len(shape)))),
                                     jnp.expand_dims(r, -1)), axis=-1).astype(_np.int32)
        else:
            raise NotImplementedError('jax.random.choice with p= and replace=False: spmdsim draws it with '
                                      'replacement only')
        return index if scalar else jnp.take(arr, index, axis=axis)
    if replace:
        index = randint(key, shape, 0, n)
        return index if scalar else jnp.take(arr, index, axis=axis)
    if count > n:
        raise ValueError(f"Cannot take a larger sample (size {count}) than population (size {n}) when "
                         "'replace=False'")
    permuted = permutation(key, n if scalar else arr, axis)
    taken = permuted[(slice(None),) * axis + (slice(count),)] if not scalar else permuted[:count]
    return jnp.reshape(taken, shape) if scalar or arr.ndim == 1 else taken


def gumbel(key, shape=(), dtype=jnp.float32):
    _check_key(key, 'gumbel')
    dt = _np.dtype(dtypes.canonicalize(dtype))
    u = _uniform(key, _shape(shape), dt, _np.finfo(dt).tiny, 1.0)
    return jnp.negative(jnp.log(jnp.negative(jnp.log(u))))


def categorical(key, logits, axis=-1, shape=None):
    _check_key(key, 'categorical')
    logits = jnp.asarray(logits)
    axis = axis % logits.ndim
    batch = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    shape = batch if shape is None else _shape(shape)
    prefix = shape[:len(shape) - len(batch)]
    logits_shape = list(shape[len(shape) - len(batch):])
    logits_shape.insert(axis, logits.shape[axis])
    g = gumbel(key, (*prefix, *logits_shape), logits.dtype)
    expanded = jnp.reshape(logits, (1,) * len(prefix) + logits.shape)
    return jnp.argmax(jnp.add(g, expanded), axis=axis + len(prefix))


def exponential(key, shape=(), dtype=jnp.float32):
    _check_key(key, 'exponential')
    dt = _np.dtype(dtypes.canonicalize(dtype))
    u = _uniform(key, _shape(shape), dt, 0.0, 1.0)
    return jnp.negative(jnp.log1p(jnp.negative(u)))
