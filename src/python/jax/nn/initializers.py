"""jax.nn.initializers: functions (key, shape, dtype) -> array, as flax and
equinox layers call them; the same draws as JAX's from the same key."""

import math
from typing import Protocol

import numpy as np

import jax.numpy as jnp
from jax import random
from jax._src import core, dtypes


def _default(dtype):
    return dtypes.default_float() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    return jnp.zeros(shape, _default(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    return jnp.ones(shape, _default(dtype))


def constant(value, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(shape, value, _default(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev, dtype)
    return init


def _axes_size(shape, axes):
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the in/out axes' sizes times the receptive field
    (every axis that is neither in, out nor batch)."""
    if len(shape) <= 1:
        raise ValueError(f'Can\'t compute input and output sizes of a {len(shape)}-dimensional weights tensor. Must '
                         'be at least 2D.')
    in_size, out_size = _axes_size(shape, in_axis), _axes_size(shape, out_axis)
    batch_size = _axes_size(shape, batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNCATED_STDDEV = .87962566103423978


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = tuple(int(d) for d in shape)
        dtype = _default(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {'fan_in': fan_in, 'fan_out': fan_out, 'fan_avg': (fan_in + fan_out) / 2,
                       'fan_geo_avg': (fan_in * fan_out) ** 0.5}.get(mode)
        if denominator is None:
            raise ValueError(f'invalid mode for variance scaling initializer: {mode}')
        variance = jnp.array(scale / denominator, dtype=dtype)
        if distribution == 'truncated_normal':
            stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == 'normal':
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == 'uniform':
            return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
        raise ValueError(f'invalid distribution for variance scaling initializer: {distribution}')
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, 'fan_avg', 'uniform', in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, 'fan_avg', 'truncated_normal', in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, 'fan_in', 'uniform', in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(1.0, 'fan_in', 'truncated_normal', in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, 'fan_in', 'uniform', in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(2.0, 'fan_in', 'truncated_normal', in_axis, out_axis, batch_axis, dtype)


def _orthogonal_matrix(key, n, m, dtype):
    """n x m with orthonormal rows (n <= m) or columns: the Q of a normal
    matrix's QR, signs fixed by R's diagonal (jax.random.orthogonal)."""
    z = random.normal(key, (max(n, m), min(n, m)), dtype)
    if not core.is_concrete(z):
        raise NotImplementedError('the orthogonal initializers need a QR decomposition, which spmdsim computes only '
                                  'outside jit/pmap: call the initializer (e.g. model.init) outside jit')
    q, r = np.linalg.qr(np.asarray(z, np.float64))
    x = q * np.sign(np.diagonal(r))[None, :]
    return jnp.asarray((x.T if n < m else x).astype(np.dtype(dtype) if dtype is not dtypes.bfloat16 else np.float32),
                       dtype)


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError('orthogonal initializer requires at least a 2D shape')
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = _orthogonal_matrix(key, n_rows, n_cols, dtype)
        rest = tuple(d for i, d in enumerate(shape) if i != column_axis % len(shape))
        q = jnp.moveaxis(jnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _default(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError('Delta orthogonal initializer requires a 3D, 4D or 5D shape.')
        if shape[-1] < shape[-2]:
            raise ValueError('`fan_in` must be less or equal than `fan_out`. ')
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype).at[centre].set(ortho)
    return init


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal

class Initializer(Protocol):
    """What flax's and equinox's type hints name: (key, shape, dtype) -> Array."""

    def __call__(self, key, shape, dtype=None): ...
