"""Batching rules of the collectives.

Over other axes (a pmap's, a mesh's, an outer vmap's) a collective runs as
before on the batched value, its array axes shifted by one. Over the vmapped
axis the examples are the members: the collective becomes array operations
across the batch axis, with JAX's semantics. A reduction or an all_gather
over it is the same for every example (unbatched, so out_axes=None may
return it); over the vmapped axis and others (psum(x, ('devices', 'batch')))
it reduces over both.
"""

import numpy as np

from jax._src import core
from jax._src.autodiff.engine import fit as _fit
from jax._src.batching.interpreter import bind1, defbatch, lane_mask, materialize, move_axis, normalize, shape_of

_REDUCE = {'psum': 'reduce_sum', 'pmean': 'reduce_sum', 'pmax': 'reduce_max', 'pmin': 'reduce_min'}


def _split_axes(eq):
    axes = tuple(eq.params['axes'])
    name = eq.axis.name
    return axes, (name is not None and name in axes), tuple(a for a in axes if a != name)


def _not_supported(eq, what):
    return NotImplementedError(f'{eq.primitive} {what}: spmdsim runs it over the vmapped axis {eq.axis.name!r} alone, '
                               'or over pmap and mesh axes')


def _groups(eq):
    flat, size = eq.params['axis_index_groups'], int(eq.params['group_size'])
    return [list(flat[k:k + size]) for k in range(0, len(flat), size)]


def _by_group(eq, x):
    """x's examples in group order, (groups, group size, ...), and for each
    example the index of its group."""
    groups = _groups(eq)
    members = np.asarray([i for g in groups for i in g], dtype=np.int32)
    if sorted(members.tolist()) != list(range(eq.axis.size)):
        raise ValueError(f'{eq.primitive}: axis_index_groups {groups} must cover every index of the vmapped axis '
                         f'{eq.axis.name!r} (size {eq.axis.size}) once')
    group_of = np.zeros(eq.axis.size, dtype=np.int32)
    for k, g in enumerate(groups):
        group_of[g] = k
    stacked = bind1('take', x, members, axis=0)
    return bind1('reshape', stacked, new_sizes=(len(groups), len(groups[0])) + shape_of(x)[1:]), group_of


@defbatch('psum', 'pmean', 'pmax', 'pmin')
def _reduction(eq, values, batched):
    axes, over_batch, others = _split_axes(eq)
    groups = 'axis_index_groups' in eq.params
    if not over_batch:
        outs = core.bind(eq.primitive, *values, **eq.params)
        return outs, list(batched)
    if groups and others:
        raise _not_supported(eq, f'with axis_index_groups over the axes {axes}')
    outs, flags = [], []
    for x, b, aval in zip(values, batched, eq.out_avals):
        if others:
            x = core.bind1(eq.primitive, x, axes=others)
        if eq.primitive in ('psum', 'pmean'):
            x = _fit(x, aval)  # a sum of booleans counts in int32, a mean of integers is a float
        if groups:
            stacked, group_of = _by_group(eq, materialize(x, b, eq.axis))
            total = bind1(_REDUCE[eq.primitive], stacked, axes=(1,))
            if eq.primitive == 'pmean':
                total = bind1('div', total, np.asarray(shape_of(stacked)[1], dtype=core.aval_of(total).dtype))
            outs.append(_fit(bind1('take', total, group_of, axis=0), aval))
            flags.append(True)
            continue
        if not b:
            # Every example brings the same value: psum multiplies it.
            total = bind1('mul', x, eq.axis.size) if eq.primitive == 'psum' else x
        else:
            total = bind1(_REDUCE[eq.primitive], x, axes=(0,))
            if eq.primitive == 'pmean':
                total = bind1('div', total, eq.axis.size)
        outs.append(_fit(total, aval))
        flags.append(False)
    return outs, flags


@defbatch('all_gather')
def _all_gather(eq, values, batched):
    (x,), (b,) = values, batched
    axes, over_batch, others = _split_axes(eq)
    tiled = bool(eq.params.get('tiled', False))
    rank = len(shape_of(x)) - b
    axis = normalize(eq.params['axis'], rank + (0 if tiled else 1))
    if not over_batch:
        return [bind1('all_gather', x, **{**eq.params, 'axis': axis + 1})], [True]
    x = materialize(x, b, eq.axis)
    if 'axis_index_groups' in eq.params:
        if others:
            raise _not_supported(eq, f'with axis_index_groups over the axes {axes}')
        stacked, group_of = _by_group(eq, x)
        gathered = bind1('take', stacked, group_of, axis=0)  # (examples, group size, ...)
        return [_merged(move_axis(gathered, 1, axis + 1), axis + 1, tiled)], [True]
    position = axes.index(eq.axis.name)
    if others and 0 < position < len(axes) - 1:
        raise _not_supported(eq, f'over {axes} with the vmapped axis between others')
    # The members along a new axis at `axis`, in the order of `axes`
    # (row-major over them); tiled merges that axis into the next.
    if others:
        x = bind1('all_gather', x, axes=others, axis=axis + 1, tiled=False)
        x = _merged(move_axis(x, 0, axis + (1 if position else 0)), axis, True)
    else:
        x = move_axis(x, 0, axis)
    return [_merged(x, axis, tiled)], [False]


def _merged(x, axis, merge):
    """x with its axes `axis` and `axis + 1` made one, when `merge`."""
    if not merge:
        return x
    shape = list(shape_of(x))
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return bind1('reshape', x, new_sizes=tuple(shape))


def _require_batch_alone(eq):
    axes, over_batch, others = _split_axes(eq)
    if others:
        raise _not_supported(eq, f'over the axes {axes}, the vmapped axis with others')
    if 'axis_index_groups' in eq.params:
        raise _not_supported(eq, 'with axis_index_groups')
    return over_batch


@defbatch('ppermute')
def _ppermute(eq, values, batched):
    (x,), (b,) = values, batched
    if not _split_axes(eq)[1]:
        return [bind1('ppermute', x, **eq.params)], [True]
    _require_batch_alone(eq)
    x = materialize(x, b, eq.axis)
    flat = eq.params['perm']
    source = {int(flat[k + 1]): int(flat[k]) for k in range(0, len(flat), 2)}
    n = eq.axis.size
    moved = bind1('take', x, np.asarray([source.get(i, 0) for i in range(n)], dtype=np.int32), axis=0)
    if len(source) == n:
        return [moved], [True]
    # An example no member sends to gets zeros, as on devices.
    received = lane_mask(len(shape_of(x)), [i in source for i in range(n)])
    zeros = np.zeros((), dtype=core.aval_of(x).dtype)
    return [bind1('select_n', received, zeros, moved)], [True]


@defbatch('psum_scatter')
def _psum_scatter(eq, values, batched):
    (x,), (b,) = values, batched
    rank = len(shape_of(x)) - b
    d = normalize(eq.params['scatter_dimension'], rank)
    if not _split_axes(eq)[1]:
        return [bind1('psum_scatter', x, **{**eq.params, 'scatter_dimension': d + 1})], [True]
    _require_batch_alone(eq)
    total = bind1('reduce_sum', materialize(x, b, eq.axis), axes=(0,))
    total = _fit(total, eq.out_avals[0])
    if eq.params.get('tiled', False):
        # Example i's chunk is the i-th of n along the scatter dimension.
        shape = list(shape_of(total))
        shape[d:d + 1] = [eq.axis.size, shape[d] // eq.axis.size]
        total = bind1('reshape', total, new_sizes=tuple(shape))
    return [move_axis(total, d, 0)], [True]


@defbatch('all_to_all')
def _all_to_all(eq, values, batched):
    """Example j receives, from every example i, i's j-th piece along
    split_axis, placed at position i along concat_axis: one transpose of the
    batch (a reshape around it when tiled)."""
    (x,), (b,) = values, batched
    rank = len(shape_of(x)) - b
    split, concat = normalize(eq.params['split_axis'], rank), normalize(eq.params['concat_axis'], rank)
    if not _split_axes(eq)[1]:
        return [bind1('all_to_all', x, **{**eq.params, 'split_axis': split + 1, 'concat_axis': concat + 1})], [True]
    _require_batch_alone(eq)
    x = materialize(x, b, eq.axis)
    n, shape = eq.axis.size, shape_of(x)[1:]
    tiled = bool(eq.params.get('tiled', False))
    # Name every axis: 'i' the sending example, 'j' the piece's receiver, k the example's axis k.
    if tiled:
        source = ['i'] + [a for k in range(rank) for a in ((('j', k) if k == split else k,) +
                                                             ((k,) if k == split else ()))]
        pieces = list(shape)
        pieces[split:split + 1] = [n, shape[split] // n]
        x = bind1('reshape', x, new_sizes=(n,) + tuple(pieces))
        target = [('j', split)]
        for k in range(rank):
            target += ['i', k] if k == concat else [k]
    else:
        source = ['i'] + [('j', k) if k == split else k for k in range(rank)]
        rest = [k for k in range(rank) if k != split]
        rest.insert(concat, 'i')
        target = [('j', split)] + rest
    out = bind1('transpose', x, permutation=tuple(source.index(a) for a in target))
    if tiled:
        out = _merged(out, 1 + concat, True)
    return [out], [True]


@defbatch('axis_index')
def _axis_index(eq, values, batched):
    """Row-major over the axes: the vmapped one's index is the example's."""
    n = eq.axis.size
    index = np.int32(0)
    for a in eq.params['axes']:
        if a == eq.axis.name:
            mine, size = bind1('iota', dtype='int32', shape=(n,), dimension=0), n
        else:
            mine, size = core.bind1('axis_index', axes=(a,)), dict(core.bound_axes())[a]
        index = bind1('add', bind1('mul', index, np.int32(size)), mine)
    return [index], [True]
