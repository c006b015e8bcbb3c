"""Batching rules of the numeric primitives: elementwise math, reductions,
layout, indexing, dot_general and random bits. Each returns its outputs over the
whole batch (batch axis 0) and which are batched; the primitive's own
parameters are shifted by one axis for the batch in front."""

import numpy as np

from jax._src import core
from jax._src.batching.interpreter import bind1, defbatch, materialize, move_axis, normalize, shape_of, with_rank

_UNARY = ('neg', 'abs', 'sign', 'exp', 'log', 'log1p', 'expm1', 'sqrt', 'rsqrt', 'square', 'sin', 'cos', 'tan',
          'tanh', 'sinh', 'cosh', 'asin', 'acos', 'atan', 'logistic', 'floor', 'ceil', 'round', 'not',
          'is_inf', 'is_finite', 'reciprocal', 'integer_pow', 'erf', 'erf_inv', 'convert_element_type', 'stop_gradient',
          'random_unit')
_BINARY = ('add', 'sub', 'mul', 'div', 'floor_div', 'rem', 'pow', 'max', 'min', 'eq', 'ne', 'lt', 'le', 'gt', 'ge',
           'and', 'or', 'xor', 'atan2', 'select_n')


@defbatch(*_UNARY)
def _elementwise_unary(eq, values, batched):
    return [bind1(eq.primitive, values[0], **eq.params)], [True]


@defbatch(*_BINARY)
def _elementwise(eq, values, batched):
    """Operands broadcast as numpy does: a batched one gets size-1 axes after
    its batch axis, so its example lines up with the others' trailing axes."""
    rank = eq.out_avals[0].ndim
    operands = [with_rank(v, rank) if b else v for v, b in zip(values, batched)]
    return [bind1(eq.primitive, *operands, **eq.params)], [True]


@defbatch('randint_bits')
def _same_shape_operands(eq, values, batched):
    """Operands that must share a shape: every one batched."""
    return [bind1(eq.primitive, *[materialize(v, b, eq.axis) for v, b in zip(values, batched)], **eq.params)], [True]


# --- reductions and scans along axes -----------------------------------------------------

@defbatch('reduce_sum', 'reduce_prod', 'reduce_max', 'reduce_min', 'reduce_or', 'reduce_and', 'argmax', 'argmin')
def _reduction(eq, values, batched):
    rank = len(shape_of(values[0])) - 1
    axes = tuple(normalize(a, rank) + 1 for a in eq.params['axes'])
    return [bind1(eq.primitive, values[0], **{**eq.params, 'axes': axes})], [True]


@defbatch('cumsum', 'cumprod')
def _cumulative(eq, values, batched):
    rank = len(shape_of(values[0])) - 1
    return [bind1(eq.primitive, values[0], **{**eq.params, 'axis': normalize(eq.params['axis'], rank) + 1})], [True]


@defbatch('rev')
def _rev(eq, values, batched):
    rank = len(shape_of(values[0])) - 1
    return [bind1('rev', values[0], dimensions=tuple(normalize(d, rank) + 1 for d in eq.params['dimensions']))], [True]


@defbatch('sort')
def _sort(eq, values, batched):
    operands = [materialize(v, b, eq.axis) for v, b in zip(values, batched)]
    outs = core.bind('sort', *operands, **{**eq.params, 'dimension': int(eq.params['dimension']) + 1})
    return outs, [True] * len(outs)


# --- layout --------------------------------------------------------------------------------

@defbatch('reshape')
def _reshape(eq, values, batched):
    return [bind1('reshape', values[0], new_sizes=(eq.axis.size,) + tuple(eq.params['new_sizes']))], [True]


@defbatch('squeeze')
def _squeeze(eq, values, batched):
    return [bind1('squeeze', values[0], dimensions=tuple(int(d) + 1 for d in eq.params['dimensions']))], [True]


@defbatch('transpose')
def _transpose(eq, values, batched):
    perm = (0,) + tuple(normalize(a, len(eq.params['permutation'])) + 1 for a in eq.params['permutation'])
    return [bind1('transpose', values[0], permutation=perm)], [True]


@defbatch('broadcast_in_dim')
def _broadcast_in_dim(eq, values, batched):
    return [bind1('broadcast_in_dim', values[0], shape=(eq.axis.size,) + tuple(eq.params['shape']),
                  broadcast_dimensions=(0,) + tuple(int(d) + 1 for d in eq.params['broadcast_dimensions']))], [True]


@defbatch('concatenate')
def _concatenate(eq, values, batched):
    rank = eq.out_avals[0].ndim
    operands = [materialize(v, b, eq.axis) for v, b in zip(values, batched)]
    return [bind1('concatenate', *operands, dimension=normalize(eq.params['dimension'], rank) + 1)], [True]


@defbatch('sharding_constraint')
def _sharding_constraint(eq, values, batched):
    """The batch axis is laid out whole on every device (JAX's rule without
    spmd_axis_name): an unsharded entry in front of the spec."""
    return [bind1('sharding_constraint', values[0], **{**eq.params, 'spec': ('',) + tuple(eq.params['spec'])})], [True]


# --- dot_general ---------------------------------------------------------------------------------

@defbatch('dot_general')
def _dot_general(eq, values, batched):
    """One batched product: the batch axis is one more dot_general batch axis
    when both operands have it, otherwise a free axis of the operand that has
    it, moved to the front of the result where it did not land there."""
    (x, y), (bx, by) = values, batched
    shifted = lambda axes: tuple(d + 1 for d in axes)
    params = dict(eq.params)
    if bx:
        params['lhs_contracting'], params['lhs_batch'] = shifted(params['lhs_contracting']), shifted(params['lhs_batch'])
    if by:
        params['rhs_contracting'], params['rhs_batch'] = shifted(params['rhs_contracting']), shifted(params['rhs_batch'])
    nb = len(params['lhs_batch'])
    if bx and by:
        params['lhs_batch'], params['rhs_batch'] = (0,) + params['lhs_batch'], (0,) + params['rhs_batch']
        return [bind1('dot_general', x, y, **params)], [True]
    out = bind1('dot_general', x, y, **params)
    if bx:  # the lhs's first free axis: just after the batch axes
        return [move_axis(out, nb, 0)], [True]
    lhs_free = len(shape_of(x)) - len(params['lhs_contracting']) - nb
    return [move_axis(out, nb + lhs_free, 0)], [True]  # the rhs's first free axis


# --- indexing --------------------------------------------------------------------------------

_WHOLE_AXIS = (1, 0, 0, 0, 0)  # an index item (see primitives.cc): a slice with no start, stop or step


@defbatch('slice')
def _slice(eq, values, batched):
    params = dict(eq.params)
    params['start_indices'] = (0,) + tuple(params['start_indices'])
    params['limit_indices'] = (eq.axis.size,) + tuple(params['limit_indices'])
    if params.get('strides') is not None:
        params['strides'] = (1,) + tuple(params['strides'])
    return [bind1('slice', values[0], **params)], [True]


@defbatch('split')
def _split(eq, values, batched):
    rank = len(shape_of(values[0])) - 1
    outs = core.bind('split', values[0], **{**eq.params, 'axis': normalize(eq.params['axis'], rank) + 1})
    return outs, [True] * len(outs)


@defbatch('dynamic_slice')
def _dynamic_slice(eq, values, batched):
    """The examples' axis is one more whole axis when the starts are the
    same for every example; when they differ, each example's window is read
    with take (JAX writes a gather)."""
    import jax
    from jax import lax
    x, starts = materialize(values[0], batched[0], eq.axis), values[1:]
    sizes = tuple(eq.params['slice_sizes'])
    if not any(batched[1:]):
        return [bind1('dynamic_slice', x, np.int32(0), *starts, slice_sizes=(eq.axis.size,) + sizes)], [True]
    windows = jax.vmap(lambda v, *s: lax._windows_by_take(v, sizes, *s), in_axes=(0,) + tuple(
        0 if b else None for b in batched[1:]), axis_size=eq.axis.size)
    return [windows(x, *starts)], [True]


@defbatch('dynamic_update_slice')
def _dynamic_update_slice(eq, values, batched):
    import jax
    from jax import lax
    x, u = materialize(values[0], batched[0], eq.axis), materialize(values[1], batched[1], eq.axis)
    starts = values[2:]
    if not any(batched[2:]):
        return [bind1('dynamic_update_slice', x, u, np.int32(0), *starts)], [True]
    update = jax.vmap(lax._window_update_by_select, in_axes=(0, 0) + tuple(0 if b else None for b in batched[2:]),
                      axis_size=eq.axis.size)
    return [update(x, u, *starts)], [True]


@defbatch('index')
def _index(eq, values, batched):
    return [bind1('index', values[0], items=_WHOLE_AXIS + tuple(eq.params['items']))], [True]


def _selected_rank(items, rank):
    """The rank of x[items] for x of `rank` (items as primitives.cc encodes them)."""
    kinds = [items[i] for i in range(0, len(items), 5)]
    consumed = sum(1 for k in kinds if k in (0, 1))
    return sum(1 for k in kinds if k in (1, 2)) + rank - consumed


@defbatch('index_update')
def _index_update(eq, values, batched):
    (x, v), (bx, bv) = values, batched
    x = materialize(x, bx, eq.axis)
    items = tuple(eq.params['items'])
    if bv:
        v = with_rank(v, _selected_rank(items, len(shape_of(x)) - 1))
    return [bind1('index_update', x, v, **{**eq.params, 'items': _WHOLE_AXIS + items})], [True]


@defbatch('take')
def _take(eq, values, batched):
    """x's slices at `indices` along one axis. With both batched, each
    example reads its own slice: the examples' axes are flattened into one
    and each index offset by its example's start, one take as before."""
    (x, i), (bx, bi) = values, batched
    rank = len(shape_of(x)) - bx
    axis = normalize(eq.params['axis'], rank)
    if not bi:
        return [bind1('take', x, i, axis=axis + 1)], [True]
    if not bx:
        # The indices' batch axis lands where `axis` was: moved to the front.
        return [move_axis(bind1('take', x, i, axis=axis), axis, 0)], [True]
    n, size = eq.axis.size, shape_of(x)[axis + 1]
    x = move_axis(x, axis + 1, 1)
    flat = bind1('reshape', x, new_sizes=(n * size,) + shape_of(x)[2:])
    i = _clamped(i, size)
    starts = np.arange(n, dtype=core.aval_of(i).dtype).reshape((n,) + (1,) * (len(shape_of(i)) - 1)) * size
    out = bind1('take', flat, bind1('add', i, starts), axis=0)
    # (n, *indices, *x's axes but `axis`): x's leading axes go back before the indices'.
    lead, index_rank = axis, len(shape_of(i)) - 1
    if lead:
        order = [0] + list(range(1 + index_rank, 1 + index_rank + lead)) + list(range(1, 1 + index_rank)) + \
            list(range(1 + index_rank + lead, len(shape_of(out))))
        out = bind1('transpose', out, permutation=tuple(order))
    return [out], [True]


def _clamped(i, size):
    """take's index rule: a negative index counts from the end, then each
    is clamped into the axis (so no example reads its neighbour's slice)."""
    dt = core.aval_of(i).dtype
    wrapped = bind1('select_n', bind1('lt', i, dt.type(0)), i, bind1('add', i, dt.type(size)))
    return bind1('max', bind1('min', wrapped, dt.type(size - 1)), dt.type(0))


# --- random bits ----------------------------------------------------------------------------
# The threefry kernels take a stack of keys (*batch, 2) and give each key's
# draws, as JAX's key arrays do.

@defbatch('threefry_split', 'threefry_bits')
def _per_key(eq, values, batched):
    return [bind1(eq.primitive, values[0], **eq.params)], [True]


@defbatch('threefry_fold_in')
def _fold_in(eq, values, batched):
    (key, data), (bk, _) = values, batched
    return [bind1('threefry_fold_in', materialize(key, bk, eq.axis), data)], [True]
