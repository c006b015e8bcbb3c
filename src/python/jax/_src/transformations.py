"""jax.vmap, jax.eval_shape, jax.checkpoint.

vmap maps the function over the batch by calling it on each slice and
stacking the results: exact, and inside a pmap it records one copy of the
function's equations per slice. An axis_name for collectives over the batch
is not supported.
"""

import functools

import numpy as np

from jax._src import core, tree_util


def _flat_axes(in_axes, args):
    tree = tree_util.tree_structure(args)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError('vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional '
                         f'arguments passed to the function, but got len(in_axes)={len(in_axes)}, '
                         f'len(args)={len(args)}')
    return tree_util.broadcast_prefix(in_axes, tree, 'vmap in_axes')


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    if axis_name is not None:
        raise NotImplementedError('jax.vmap with axis_name: spmdsim runs collectives over pmap axes only; '
                                  'use jax.pmap for a named axis')

    @functools.wraps(fun)
    def batched(*args):
        import jax.numpy as jnp
        leaves, tree = tree_util.tree_flatten(args)
        axes = _flat_axes(in_axes, args)
        sizes = {core.aval_of(l).shape[a] for l, a in zip(leaves, axes) if a is not None}
        if axis_size is not None:
            sizes.add(int(axis_size))
        if len(sizes) > 1:
            raise ValueError(f'vmap got inconsistent sizes for the mapped axes: {sorted(sizes)}')
        if not sizes:
            raise ValueError('vmap must have at least one non-None value in in_axes')
        n = sizes.pop()

        def slice_at(i):
            out = []
            for leaf, a in zip(leaves, axes):
                if a is None:
                    out.append(leaf)
                else:
                    x = jnp.asarray(leaf)
                    out.append(x[(slice(None),) * (a % x.ndim) + (i,)])
            return tree.unflatten(out)
        results = [fun(*slice_at(i)) for i in range(n)]
        out_leaves = [tree_util.tree_leaves(r) for r in results]
        out_tree = tree_util.tree_structure(results[0])
        flat_out_axes = tree_util.broadcast_prefix(out_axes, out_tree, 'vmap out_axes')
        stacked = []
        for k, a in enumerate(flat_out_axes):
            column = [jnp.asarray(ls[k]) for ls in out_leaves]
            stacked.append(column[0] if a is None else jnp.stack(column, axis=a))
        return out_tree.unflatten(stacked)
    return batched


def eval_shape(fun, *args, **kwargs):
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    avals = [core.ShapedArray(core.aval_of(l).shape, core.aval_of(l).dtype) for l in leaves]

    def flat(*xs):
        a, k = tree.unflatten(list(xs))
        return fun(*a, **k)
    program, out_tree, _ = core.trace_function(flat, avals, 'jax.eval_shape')
    return out_tree.unflatten([ShapeDtypeStruct(tuple(a[0]), np.dtype(a[1])) for a in program.out_avals])


class ShapeDtypeStruct:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f'ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})'

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


def checkpoint(fun=None, **kwargs):
    """Rematerialization changes memory, not values: the function itself."""
    if fun is None:
        return lambda f: f
    return fun


remat = checkpoint


def named_call(fun, *, name=None):
    return fun
