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
    return 0.5 * x * (1 + lax.erf(x / math.sqrt(2)))


tanh = jnp.tanh


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, shifted by the (finite) maximum so
    that it neither overflows nor loses the small terms; `where` masks."""
    a = jnp.asarray(a)
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(jnp.result_type(a, 1.0))
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        b = jnp.asarray(b)
        a = jnp.where(b != 0, a, -jnp.inf)
    m = jnp.max(a, axis=axis, keepdims=True, where=where, initial=-jnp.inf)
    m = lax.stop_gradient(jnp.where(jnp.isfinite(m), m, 0))
    e = jnp.exp(a - m)
    if b is not None:
        e = e * b
    total = jnp.sum(e, axis=axis, keepdims=True, where=where)
    sign = jnp.sign(total)
    out = jnp.log(jnp.abs(total)) + m
    if not keepdims:
        out = jnp.squeeze(out, axis=axis) if axis is not None else jnp.reshape(out, ())
        sign = jnp.squeeze(sign, axis=axis) if axis is not None else jnp.reshape(sign, ())
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, jnp.nan, out)
    return out


def softmax(x, axis=-1, where=None, initial=-jnp.inf):
    x = jnp.asarray(x)
    x_max = jnp.max(x, axis, keepdims=True, where=where, initial=initial)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, keepdims=True, where=where)
    return result if where is None else jnp.where(where, result, 0)


def log_softmax(x, axis=-1, where=None):
    x = jnp.asarray(x)
    x_max = jnp.max(x, axis, keepdims=True, where=where, initial=-jnp.inf)
    x_safe = x if where is None else jnp.where(where, x, -jnp.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    result = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, keepdims=True, where=where))
    return result if where is None else jnp.where(where, result, -jnp.inf)


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


# --- the rest of JAX's activations ---------------------------------------------------

def identity(x):
    return jnp.asarray(x)


def log_sigmoid(x):
    return -softplus(-jnp.asarray(x))


def soft_sign(x):
    x = jnp.asarray(x)
    return x / (jnp.abs(x) + 1)


def squareplus(x, b=4):
    x = jnp.asarray(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def sparse_plus(x):
    x = jnp.asarray(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    return 0.5 * jnp.clip(jnp.asarray(x) + 1.0, 0.0, 2.0)


def mish(x):
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


def hard_tanh(x):
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def hard_sigmoid(x):
    return relu6(jnp.asarray(x) + 3.0) / 6.0


def hard_silu(x):
    x = jnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def celu(x, alpha=1.0):
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def glu(x, axis=-1):
    x = jnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f'axis size must be divisible by 2: got {size}')
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    x = jnp.asarray(x)
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    mask = jnp.ones(x.shape, bool) if where is None else jnp.broadcast_to(jnp.asarray(where), x.shape)
    count = jnp.sum(mask, axis=axis, keepdims=keepdims, dtype=lse.dtype)
    return lse - jnp.log(count)


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)), accurate on both sides of log 2 (Maechler's split)."""
    x = jnp.asarray(x)
    return jnp.where(x < math.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    x = jnp.asarray(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        # E[x^2] - E[x]^2, as JAX computes it (not jnp.var's centred form)
        variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
    return jnp.subtract(x, jnp.asarray(mean)) * lax.rsqrt(jnp.asarray(variance) + epsilon)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None):
    """softmax(Q K^T * scale + bias, masked) V over inputs of shape
    [batch, seq, heads, head_dim] (or without the batch), keys and values may
    have fewer heads (grouped-query attention)."""
    query, key, value = jnp.asarray(query), jnp.asarray(key), jnp.asarray(value)
    squeeze = query.ndim == 3
    if squeeze:
        query, key, value = query[None], key[None], value[None]
    if query.ndim != 4:
        raise ValueError(f'query must have rank 3 or 4, got shape {query.shape}')
    if local_window_size is not None or query_seq_lengths is not None or key_value_seq_lengths is not None:
        raise NotImplementedError('spmdsim\'s dot_product_attention does not take local_window_size or sequence '
                                  'lengths yet; build the mask yourself and pass mask=')
    b, t, n, h = query.shape
    s, k = key.shape[1], key.shape[2]
    if n % k:
        raise ValueError(f'the number of query heads ({n}) must be a multiple of the key heads ({k})')
    key = jnp.repeat(key, n // k, axis=2)
    value = jnp.repeat(value, n // k, axis=2)
    scale = 1.0 / math.sqrt(h) if scale is None else scale
    logits = jnp.einsum('btnh,bsnh->bnts', query, key) * jnp.asarray(scale, query.dtype)
    if bias is not None:
        logits = logits + jnp.asarray(bias).astype(logits.dtype)
    big_neg = jnp.finfo(logits.dtype).min
    if mask is not None:
        logits = jnp.where(jnp.asarray(mask), logits, big_neg)
    if is_causal:
        causal = jnp.tril(jnp.ones((t, s), bool))
        logits = jnp.where(causal, logits, big_neg)
    probs = softmax(logits.astype(jnp.float32), axis=-1).astype(value.dtype)
    out = jnp.einsum('bnts,bsnh->btnh', probs, value)
    return out[0] if squeeze else out


from jax.nn import initializers  # noqa: E402
