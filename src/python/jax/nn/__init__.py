"""jax.nn: activations and helpers, over jax.numpy as in JAX."""

import math

import jax.numpy as jnp
from jax import lax
from jax._src import dtypes
from jax._src.autodiff import custom_jvp


# relu and relu6 have JAX's derivative: 0 at the kinks (maximum's own rule
# would split the gradient of a tie, giving 1/2 at 0).
@custom_jvp
def relu(x):
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: jnp.where(x > 0, g, 0))


@custom_jvp
def relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: jnp.where((x > 0) & (x < 6), g, 0))


def sigmoid(x):
    return lax.logistic(jnp.asarray(x) if not isinstance(x, jnp.ndarray) else x)


def silu(x):
    return x * sigmoid(x)


swish = silu


def softplus(x):
    return jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0)


def leaky_relu(x, negative_slope=0.01):
    return jnp.where(x >= 0, x, negative_slope * x)


def elu(x, alpha=1.0):
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.minimum(x, 0)))


def gelu(x, approximate=True):
    if approximate:
        c = math.sqrt(2 / math.pi)
        return 0.5 * x * (1 + jnp.tanh(c * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _erf(x):
    # Abramowitz-Stegun 7.1.26 is not exact enough; JAX computes erf in XLA.
    raise NotImplementedError('jax.nn.gelu(approximate=False) needs erf, which spmdsim does not have yet')


tanh = jnp.tanh


def logsumexp(a, axis=None, keepdims=False):
    m = jnp.max(a, axis=axis, keepdims=True)
    m = lax.stop_gradient(jnp.where(jnp.isfinite(m), m, 0))
    out = jnp.log(jnp.sum(jnp.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else jnp.squeeze(out, axis=axis) if axis is not None else jnp.reshape(out, ())


def softmax(x, axis=-1):
    unnormalized = jnp.exp(x - lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True)))
    return unnormalized / jnp.sum(unnormalized, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    shifted = x - lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    x = jnp.asarray(x)
    classes = jnp.arange(num_classes)
    nd = x.ndim + 1
    axis = axis % nd
    expanded = jnp.expand_dims(x, axis)
    shape = [1] * nd
    shape[axis] = num_classes
    eq = jnp.equal(expanded, jnp.reshape(classes, shape))
    return eq.astype(dtype or dtypes.default_float())
