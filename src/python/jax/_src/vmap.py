"""jax.vmap: the function traced once on one example, then its program
batched: each equation rewritten by its primitive's batching rule into
equations over the whole batch (jax._src.batching), as in JAX. The
function's Python runs once (its side effects happen once, a print inside
shows tracers); the batched equations are bound wherever vmap was called:
eagerly at top level, or recorded into the enclosing pmap's / jit's /
grad's program, so a vmap inside a pmap runs on every device and is
differentiable.

Collectives over the vmapped axis (psum, pmean, pmax, pmin, all_gather,
psum_scatter, all_to_all, ppermute, axis_index) become array operations
across the batch with JAX's semantics; control flow whose predicate differs
between examples runs as JAX batches it (a cond as a select over every
branch, a while loop until every example's condition is false).
"""

import functools

from jax._src import api, batching, core, tree_util

def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    if not callable(fun):
        raise TypeError(f'vmap requires a callable as its first argument, got {fun!r}')
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, tuple, dict))) or isinstance(in_axes, bool):
        raise TypeError('vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional '
                        f'arguments passed to the function, but got {in_axes}.')
    api._check_axes_leaves(in_axes, 'in_axes', 'vmap')
    api._check_axes_leaves(out_axes, 'out_axes', 'vmap')
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(f'vmap axis_name must be a string, got {axis_name!r}')

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            msg = ('vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional '
                   f'arguments passed to the function, but got len(in_axes)={len(in_axes)}, len(args)={len(args)}.')
            if kwargs:
                msg += (f' Note that the function was called with keyword arguments {sorted(kwargs)}, which the '
                        'entries of a tuple in_axes never correspond to: keyword arguments are always mapped along '
                        'their leading axis (axis 0).')
            raise ValueError(msg)
        kw_names = sorted(kwargs)
        leaves, tree = tree_util.tree_flatten(args + tuple(kwargs[k] for k in kw_names))
        axes = tree_util.broadcast_prefix(in_axes, tree_util.tree_structure(args), 'vmap in_axes')
        axes += [0] * (len(leaves) - len(axes))  # keyword arguments: axis 0, as in JAX
        names = api._leaf_names(fun, list(range(len(args))), tree, kw_names)
        avals = [core.aval_of(l) for l in leaves]
        axes = [None if a is None else _normalize_in_axis(a, v, name) for a, v, name in zip(axes, avals, names)]
        n = _mapped_size(fun, avals, axes, names, axis_size)

        lane_avals = []
        for v, a in zip(avals, axes):
            shape = list(v.shape)
            if a is not None:
                del shape[a]
            lane_avals.append(core.ShapedArray(shape, v.dtype, v.weak_type))

        def flat_fun(*xs):
            values = tree.unflatten(list(xs))
            return fun(*values[:len(args)], **dict(zip(kw_names, values[len(args):])))
        bound = core.bound_axes() + ([(axis_name, n)] if axis_name is not None else [])
        program, out_tree, captured = core.trace_function(flat_fun, lane_avals, 'vmap', names, bound, info_from=fun)
        inputs = [leaf if a is None else _to_front(leaf, a) for leaf, a in zip(leaves, axes)]
        flags = [a is not None for a in axes] + [False] * len(captured)
        outs, out_flags = batching.batch_program(program, inputs + list(captured), flags, batching.Axis(axis_name, n))
        flat_out = tree_util.broadcast_prefix(out_axes, out_tree, 'vmap out_axes')
        paths = tree_util.tree_paths(out_tree)
        return out_tree.unflatten([_place(o, b, a, n, axis_name, path)
                                   for o, b, a, path in zip(outs, out_flags, flat_out, paths)])
    return batched


def _normalize_in_axis(a, aval, name):
    if not -aval.ndim <= a < aval.ndim:
        raise ValueError(f'vmap was requested to map its argument along axis {a}, which implies that its rank '
                         f'should be at least {max(a + 1, -a)}, but is only {aval.ndim} (its shape is {aval.shape})')
    return a % aval.ndim


def _mapped_size(fun, avals, axes, names, axis_size):
    sizes = [(v.shape[a], a, name, v) for v, a, name in zip(avals, axes, names) if a is not None]
    distinct = {s for s, _, _, _ in sizes} | ({int(axis_size)} if axis_size is not None else set())
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        raise ValueError('vmap must have at least one non-None value in in_axes or axis_size must be specified')
    # JAX's message: the sizes, most common first, with an example of each.
    lines = ['vmap got inconsistent sizes for array axes to be mapped:']
    if axis_size is not None:
        lines.append(f'  * the `axis_size` argument was {axis_size};')
    counts = {}
    for s, a, name, v in sizes:
        counts.setdefault(s, []).append((a, name, v))
    for i, (s, group) in enumerate(sorted(counts.items(), key=lambda kv: -len(kv[1]))):
        a, name, v = group[0]
        where = f'axis {a} of argument {name} of type {v.str_short()}'
        lines.append(f'  * one axis had size {s}: {where};' if len(group) == 1 else
                     f'  * {"most" if i == 0 else "some"} axes ({len(group)} of them) had size {s}, e.g. {where};')
    err = ValueError('\n'.join(lines)[:-1])
    err._spmd_hint = ('every mapped axis must have the same size (the batch); an argument every example shares '
                      'takes in_axes=None')
    raise err


def _to_front(x, axis):
    import jax.numpy as jnp
    x = jnp.asarray(x)
    return batching.interpreter.move_axis(x, axis, 0)


def _place(value, batched, axis, n, axis_name, path):
    """An output as vmap returns it: the examples along out_axes, a value
    the same for every example broadcast (or returned once for out_axes=None)."""
    import jax.numpy as jnp
    if batched:
        if axis is None:
            if axis_name is not None:
                raise ValueError(f'vmap has mapped output (axis_name={axis_name}) but out_axes is None')
            raise ValueError(f'at vmap out_axes{path}, got axis spec None but output was batched on axis 0')
        rank = core.aval_of(value).ndim
        return batching.interpreter.move_axis(value, 0, int(axis) % rank)
    if axis is None:
        return value
    value = jnp.asarray(value)
    rank = core.aval_of(value).ndim + 1
    return batching.interpreter.move_axis(batching.interpreter.materialize(value, False, batching.Axis(None, n)), 0,
                                          int(axis) % rank)
