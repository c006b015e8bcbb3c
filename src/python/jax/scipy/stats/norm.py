"""jax.scipy.stats.norm: the normal distribution's densities and quantiles."""

import math

import jax.numpy as jnp
from jax import lax

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _standardize(x, loc, scale):
    x, loc, scale = jnp.asarray(x), jnp.asarray(loc), jnp.asarray(scale)
    dt = jnp.result_type(x, loc, scale, 1.0)
    return (x.astype(dt) - loc.astype(dt)) / scale.astype(dt), scale.astype(dt)


def logpdf(x, loc=0, scale=1):
    z, scale = _standardize(x, loc, scale)
    return -0.5 * z * z - _LOG_SQRT_2PI - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z, _ = _standardize(x, loc, scale)
    return 0.5 * (1 + lax.erf(z / math.sqrt(2)))


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z, _ = _standardize(x, loc, scale)
    return 0.5 * (1 - lax.erf(z / math.sqrt(2)))


def ppf(q, loc=0, scale=1):
    q = jnp.asarray(q)
    dt = jnp.result_type(q, 1.0)
    return jnp.asarray(loc, dt) + jnp.asarray(scale, dt) * math.sqrt(2) * lax.erf_inv(2 * q.astype(dt) - 1)
