"""jax.numpy.linalg: norms (what data-parallel training code uses: gradient
norms and clipping)."""

import jax.numpy as jnp


def norm(x, ord=None, axis=None, keepdims=False):
    x = jnp._as_array(x)
    if ord not in (None, 2, 'fro') or (ord == 2 and (axis is None and x.ndim > 1)):
        raise NotImplementedError(f'jnp.linalg.norm with ord={ord!r}: spmdsim computes the 2-norm / Frobenius norm')
    if x.dtype.kind in 'biu':
        x = x.astype(jnp.float32)
    return jnp.sqrt(jnp.sum(jnp.square(jnp.abs(x)), axis=axis, keepdims=keepdims))
