"""jax.flatten_util.ravel_pytree: a pytree of arrays as one flat vector, and
the function that puts a vector back into that tree."""

import numpy as np

import jax.numpy as jnp
from jax._src import tree_util


def ravel_pytree(pytree):
    leaves, treedef = tree_util.tree_flatten(pytree)
    arrays = [jnp.asarray(x) for x in leaves]
    shapes = [a.shape for a in arrays]
    dtypes = [a.dtype for a in arrays]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    if arrays:
        flat_dtype = jnp.result_type(*dtypes)
        flat = jnp.concatenate([jnp.ravel(a).astype(flat_dtype) for a in arrays])
    else:
        flat_dtype = jnp.float32
        flat = jnp.zeros((0,), flat_dtype)

    def unravel_pytree(vector):
        vector = jnp.asarray(vector)
        if vector.shape != (sum(sizes),):
            raise ValueError(f'The unravel function expected an array of shape {(sum(sizes),)}, got shape '
                             f'{vector.shape}.')
        if vector.dtype != flat_dtype:
            raise TypeError(f'The unravel function expected an array of dtype {flat_dtype}, got dtype '
                            f'{vector.dtype}.')
        parts, start = [], 0
        for shape, dtype, size in zip(shapes, dtypes, sizes):
            parts.append(jnp.reshape(vector[start:start + size], shape).astype(dtype))
            start += size
        return treedef.unflatten(parts)
    return flat, unravel_pytree
