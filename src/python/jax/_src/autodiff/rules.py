"""Differentiation rules: the registry, and the rules of numeric primitives
(elementwise math, reductions, layout, indexing, dot_general).

A rule comes in two forms, as JAX gives each primitive a JVP and (for linear
ones) a transpose:
  jvp(eqn, primals_in, tangents_in, primals_out) -> tangents_out
  vjp(eqn, cts_out, primals_in, primals_out, active_in) -> cts_in
A tangent or cotangent of None is zero; a vjp rule may return None for an
input that is not active. Rules compute with core.bind, so what they emit is
differentiable again.
"""

import math

import numpy as np

from jax._src import core
from jax._src.autodiff.engine import Eqn, add_any, zeros

_JVP = {}
_VJP = {}


def defrules(name, jvp, vjp):
    _JVP[name] = jvp
    _VJP[name] = vjp


# A layout annotation is linear and leaves values as they are: tangents and
# cotangents pass through it.
defrules('sharding_constraint', lambda eq, primals, tangents, outs: [tangents[0]],
         lambda eq, cts, primals, outs, active: [cts[0]])


def not_implemented(primitive, hint=None):
    err = NotImplementedError(f"Differentiation rule for '{primitive}' not implemented")
    err._spmd_hint = hint or (f"spmdsim has no gradient for '{primitive}'; wrap the value in "
                              'jax.lax.stop_gradient if no gradient should flow through it')
    return err


def jvp(eq, primals_in, tangents, primals_out):
    rule = _JVP.get(eq.primitive)
    if rule is None:
        raise not_implemented(eq.primitive)
    return rule(eq, primals_in, tangents, primals_out)


def vjp(eq, cts, primals_in, primals_out, active_in):
    rule = _VJP.get(eq.primitive)
    if rule is None:
        raise not_implemented(eq.primitive)
    return rule(eq, cts, primals_in, primals_out, active_in)


# --- helpers ------------------------------------------------------------------

def p(name, *args, **params):
    return core.bind1(name, *args, **params)


def shape_of(x):
    return tuple(core.aval_of(x).shape)


def dtype_of(x):
    return core.aval_of(x).dtype


def unbroadcast(ct, shape):
    """Sums the cotangent of a broadcast operand back to the operand's shape."""
    cs = shape_of(ct)
    shape = tuple(shape)
    if cs == shape:
        return ct
    lead = len(cs) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and cs[lead + i] != 1)
    r = p('reduce_sum', ct, axes=axes) if axes else ct
    return p('reshape', r, new_sizes=shape) if shape_of(r) != shape else r


def expand(t, shape):
    """A tangent broadcast to the output's shape (numpy's rules)."""
    ts = shape_of(t)
    shape = tuple(shape)
    if ts == shape:
        return t
    lead = len(shape) - len(ts)
    return p('broadcast_in_dim', t, shape=shape, broadcast_dimensions=tuple(range(lead, len(shape))))


def neg(x):
    return p('neg', x)


def mul(a, b):
    return p('mul', a, b)


def div(a, b):
    return p('div', a, b)


def sub(a, b):
    return p('sub', a, b)


def where(pred, on_true, on_false):
    return p('select_n', pred, on_false, on_true)


def slice_axis(x, axis, start, stop):
    items = []
    for d in range(len(shape_of(x))):
        items += (1, start, stop, 0, 3) if d == axis else (1, 0, 0, 0, 0)
    return p('index', x, items=tuple(items))


def sum_tangents(terms, shape):
    out = None
    for t in terms:
        if t is not None:
            out = add_any(out, expand(t, shape))
    return out


# --- elementwise --------------------------------------------------------------

def _unary(derivative):
    def jvp_rule(eq, primals, tangents, outs):
        return [mul(tangents[0], derivative(primals[0], outs[0]))]

    def vjp_rule(eq, cts, primals, outs, active):
        return [mul(cts[0], derivative(primals[0], outs[0]))]
    return jvp_rule, vjp_rule


def _one_minus_square(x, y):
    return sub(1.0, mul(y, y))


_UNARY = {
    'neg': lambda x, y: -1.0,
    'abs': lambda x, y: p('sign', x),
    'exp': lambda x, y: y,
    'log': lambda x, y: div(1.0, x),
    'log1p': lambda x, y: div(1.0, p('add', x, 1.0)),
    'expm1': lambda x, y: p('add', y, 1.0),
    'sqrt': lambda x, y: div(0.5, y),
    'rsqrt': lambda x, y: div(mul(-0.5, y), x),
    'square': lambda x, y: mul(2.0, x),
    'reciprocal': lambda x, y: neg(mul(y, y)),
    'sin': lambda x, y: p('cos', x),
    'cos': lambda x, y: neg(p('sin', x)),
    'tan': lambda x, y: p('add', 1.0, mul(y, y)),
    'tanh': _one_minus_square,
    'sinh': lambda x, y: p('cosh', x),
    'cosh': lambda x, y: p('sinh', x),
    'asin': lambda x, y: p('rsqrt', sub(1.0, mul(x, x))),
    'acos': lambda x, y: neg(p('rsqrt', sub(1.0, mul(x, x)))),
    'atan': lambda x, y: div(1.0, p('add', 1.0, mul(x, x))),
    'logistic': lambda x, y: mul(y, sub(1.0, y)),
    'erf': lambda x, y: mul(2.0 / math.sqrt(math.pi), p('exp', neg(mul(x, x)))),
    'erf_inv': lambda x, y: mul(math.sqrt(math.pi) / 2.0, p('exp', mul(y, y))),
}
for _name, _d in _UNARY.items():
    defrules(_name, *_unary(_d))


def _integer_pow_partial(eq, x):
    """JAX's: y * x ** (y - 1); None (a zero) for y == 0."""
    y = eq.params['y']
    return None if y == 0 else mul(np.asarray(y, dtype_of(x)), p('integer_pow', x, y=y - 1))


def _integer_pow_jvp(eq, primals, tangents, outs):
    d = _integer_pow_partial(eq, primals[0])
    return [None if d is None else mul(tangents[0], d)]


def _integer_pow_vjp(eq, cts, primals, outs, active):
    d = _integer_pow_partial(eq, primals[0])
    return [None if d is None else mul(cts[0], d)]


defrules('integer_pow', _integer_pow_jvp, _integer_pow_vjp)


def _balanced(x, y, z):
    """max/min's partial in x: 1 where x alone is the result, 1/2 at a tie (JAX's rule)."""
    return where(p('eq', x, z), where(p('eq', y, z), 0.5, 1.0), 0.0)


def _trunc(q):
    return mul(p('sign', q), p('floor', p('abs', q)))


def _pow_dx(x, y, z):
    return where(p('eq', y, 0), 0.0, mul(y, p('pow', x, sub(y, 1))))


def _pow_dy(x, y, z):
    zero = p('eq', x, 0.0)
    return where(zero, 0.0, mul(p('log', where(zero, 1.0, x)), z))


def _atan2_denominator(x, y):
    return p('add', mul(x, x), mul(y, y))


_BINARY = {
    'mul': (lambda x, y, z: y, lambda x, y, z: x),
    'div': (lambda x, y, z: div(1.0, y), lambda x, y, z: neg(div(z, y))),
    'pow': (_pow_dx, _pow_dy),
    'max': (_balanced, lambda x, y, z: _balanced(y, x, z)),
    'min': (_balanced, lambda x, y, z: _balanced(y, x, z)),
    'rem': (lambda x, y, z: 1.0, lambda x, y, z: neg(_trunc(div(x, y)))),
    'atan2': (lambda x, y, z: div(y, _atan2_denominator(x, y)), lambda x, y, z: neg(div(x, _atan2_denominator(x, y)))),
}


def _binary(partials):
    def jvp_rule(eq, primals, tangents, outs):
        x, y = primals
        z = outs[0]
        terms = [None if t is None else mul(t, d(x, y, z)) for t, d in zip(tangents, partials)]
        return [sum_tangents(terms, shape_of(z))]

    def vjp_rule(eq, cts, primals, outs, active):
        x, y = primals
        z = outs[0]
        return [unbroadcast(mul(cts[0], d(x, y, z)), shape_of(v)) if a else None
                for v, d, a in zip(primals, partials, active)]
    return jvp_rule, vjp_rule


for _name, _partials in _BINARY.items():
    defrules(_name, *_binary(_partials))


def _add_jvp(eq, primals, tangents, outs):
    return [sum_tangents(tangents, shape_of(outs[0]))]


def _add_vjp(eq, cts, primals, outs, active):
    return [unbroadcast(cts[0], shape_of(v)) if a else None for v, a in zip(primals, active)]


def _sub_jvp(eq, primals, tangents, outs):
    tx, ty = tangents
    return [sum_tangents([tx, None if ty is None else neg(ty)], shape_of(outs[0]))]


def _sub_vjp(eq, cts, primals, outs, active):
    x, y = primals
    return [unbroadcast(cts[0], shape_of(x)) if active[0] else None,
            unbroadcast(neg(cts[0]), shape_of(y)) if active[1] else None]


defrules('add', _add_jvp, _add_vjp)
defrules('sub', _sub_jvp, _sub_vjp)


def _select_jvp(eq, primals, tangents, outs):
    _, tf, tt = tangents
    if tf is None and tt is None:
        return [None]
    return [expand(where(primals[0], 0.0 if tt is None else tt, 0.0 if tf is None else tf), shape_of(outs[0]))]


def _select_vjp(eq, cts, primals, outs, active):
    pred, f, t = primals
    ct = cts[0]
    return [None,
            unbroadcast(where(pred, 0.0, ct), shape_of(f)) if active[1] else None,
            unbroadcast(where(pred, ct, 0.0), shape_of(t)) if active[2] else None]


defrules('select_n', _select_jvp, _select_vjp)


def _convert_jvp(eq, primals, tangents, outs):
    return [tangents[0]]


def _convert_vjp(eq, cts, primals, outs, active):
    return [cts[0]]


defrules('convert_element_type', _convert_jvp, _convert_vjp)


# --- linear layout ops -----------------------------------------------------------

def _linear(transpose):
    """A primitive linear in its one operand: its tangent is the primitive
    applied to the tangent, its cotangent the transpose applied to the
    cotangent."""
    def jvp_rule(eq, primals, tangents, outs):
        return [core.bind1(eq.primitive, tangents[0], *primals[1:], **eq.params)]

    def vjp_rule(eq, cts, primals, outs, active):
        return [transpose(eq, cts[0], primals[0])] + [None] * (len(primals) - 1)
    return jvp_rule, vjp_rule


def _reduce_sum_t(eq, ct, x):
    s = shape_of(x)
    axes = {a % len(s) for a in eq.params['axes']}
    return p('broadcast_in_dim', ct, shape=s, broadcast_dimensions=tuple(d for d in range(len(s)) if d not in axes))


def _broadcast_t(eq, ct, x):
    s = shape_of(x)
    dims = eq.params['broadcast_dimensions']
    out_shape = eq.params['shape']
    summed = [d for d in range(len(out_shape)) if d not in dims]
    summed += [dims[i] for i, n in enumerate(s) if n == 1 and out_shape[dims[i]] != 1]
    r = p('reduce_sum', ct, axes=tuple(sorted(summed))) if summed else ct
    return p('reshape', r, new_sizes=s)


def _transpose_t(eq, ct, x):
    perm = eq.params['permutation']
    inverse = [0] * len(perm)
    for i, d in enumerate(perm):
        inverse[d] = i
    return p('transpose', ct, permutation=tuple(inverse))



defrules('reduce_sum', *_linear(_reduce_sum_t))
defrules('broadcast_in_dim', *_linear(_broadcast_t))
defrules('reshape', *_linear(lambda eq, ct, x: p('reshape', ct, new_sizes=shape_of(x))))
defrules('transpose', *_linear(_transpose_t))
defrules('squeeze', *_linear(lambda eq, ct, x: p(
    'broadcast_in_dim', ct, shape=shape_of(x),
    broadcast_dimensions=tuple(d for d in range(len(shape_of(x))) if d not in eq.params['dimensions']))))
defrules('rev', *_linear(lambda eq, ct, x: p('rev', ct, dimensions=eq.params['dimensions'])))
# JAX's: a running sum's transpose is the running sum the other way.
defrules('cumsum', *_linear(lambda eq, ct, x: p('cumsum', ct, **{**eq.params,
                                                                 'reverse': not eq.params.get('reverse', False)})))
def _split_jvp(eq, primals, tangents, outs):
    return core.bind('split', tangents[0], **eq.params)


def _split_vjp(eq, cts, primals, outs, active):
    """The pieces' cotangents put back together (zeros for a piece without one)."""
    parts = [zeros(core.aval_of(o)) if c is None else c for c, o in zip(cts, outs)]
    return [p('concatenate', *parts, dimension=eq.params['axis'] % len(shape_of(primals[0])))]


defrules('split', _split_jvp, _split_vjp)


def _slice_t(eq, ct, x):
    """A slice's cotangent: added into zeros at the window (JAX pads it)."""
    strides = eq.params.get('strides') or (1,) * len(eq.params['start_indices'])
    items = tuple(v for s, l, k in zip(eq.params['start_indices'], eq.params['limit_indices'], strides)
                  for v in (1, s, l, k, 7))
    return p('index_update', zeros(core.aval_of(x)), ct, items=items, mode='add')


defrules('slice', *_linear(_slice_t))


# dynamic_slice(x, *starts) is linear in x, dynamic_update_slice(x, u, *starts)
# in (x, u); the starts are integers. JAX's transposes: the window written
# into zeros, and the window cut out of the cotangent.
def _dynamic_slice_jvp(eq, primals, tangents, outs):
    return [p('dynamic_slice', tangents[0], *primals[1:], **eq.params)]


def _dynamic_slice_vjp(eq, cts, primals, outs, active):
    x, starts = primals[0], primals[1:]
    return [p('dynamic_update_slice', zeros(core.aval_of(x)), cts[0], *starts)] + [None] * len(starts)


def _dynamic_update_slice_jvp(eq, primals, tangents, outs):
    x, u, starts = primals[0], primals[1], primals[2:]
    tx = zeros(core.aval_of(x)) if tangents[0] is None else tangents[0]
    tu = zeros(core.aval_of(u)) if tangents[1] is None else tangents[1]
    return [p('dynamic_update_slice', tx, tu, *starts)]


def _dynamic_update_slice_vjp(eq, cts, primals, outs, active):
    x, u, starts = primals[0], primals[1], primals[2:]
    ct = cts[0]
    ct_x = p('dynamic_update_slice', ct, zeros(core.aval_of(u)), *starts) if active[0] else None
    ct_u = p('dynamic_slice', ct, *starts, slice_sizes=shape_of(u)) if active[1] else None
    return [ct_x, ct_u] + [None] * len(starts)


defrules('dynamic_slice', _dynamic_slice_jvp, _dynamic_slice_vjp)
defrules('dynamic_update_slice', _dynamic_update_slice_jvp, _dynamic_update_slice_vjp)
defrules('index', *_linear(lambda eq, ct, x: p('index_update', zeros(core.aval_of(x)), ct,
                                               items=eq.params['items'], mode='add')))


def _scatter_add_axis(ct, indices, s, axis):
    n = s[axis]
    ishape = shape_of(indices)
    m = int(np.prod(ishape, dtype=np.int64))
    idx = p('reshape', indices, new_sizes=(m, 1))
    idx = where(p('lt', idx, 0), p('add', idx, n), idx)
    idx = p('max', p('min', idx, n - 1), 0)
    onehot = p('convert_element_type', p('eq', idx, np.arange(n, dtype=np.int32).reshape(1, n)),
               new_dtype=dtype_of(ct).name, weak_type=False)
    pre, post = s[:axis], s[axis + 1:]
    flat = p('reshape', ct, new_sizes=pre + (m,) + post)
    k = len(pre)
    summed = p('dot_general', flat, onehot, lhs_contracting=(k,), rhs_contracting=(0,), lhs_batch=(),
               rhs_batch=())  # pre + post + (n,)
    rank = k + len(post) + 1
    back = tuple(range(k)) + (rank - 1,) + tuple(range(k, rank - 1))
    return p('transpose', summed, permutation=back) if back != tuple(range(rank)) else summed


def _take_jvp(eq, primals, tangents, outs):
    return [None if tangents[0] is None else p('take', tangents[0], primals[1], **eq.params)]


def _take_vjp(eq, cts, primals, outs, active):
    x, indices = primals
    s = shape_of(x)
    return [_scatter_add_axis(cts[0], indices, s, eq.params['axis'] % len(s)), None]


defrules('take', _take_jvp, _take_vjp)


# --- sort: every operand moves with the keys' permutation -----------------------

def _sort_iota(shape, d):
    """0, 1, ..., n-1 along dimension d, as int32 of `shape`."""
    line = np.arange(shape[d], dtype=np.int32).reshape([-1 if i == d else 1 for i in range(len(shape))])
    return np.ascontiguousarray(np.broadcast_to(line, shape))


def _along(t, perm, d):
    """np.take_along_axis(t, perm, d): each lane along d gathered by its own
    indices, as one take over the flattened lanes."""
    shape = shape_of(t)
    nd = len(shape)
    n = shape[d]
    order = tuple(i for i in range(nd) if i != d) + (d,)
    moved = p('transpose', t, permutation=order)
    moved_perm = p('transpose', perm, permutation=order)
    moved_shape = shape_of(moved)
    total = int(np.prod(shape, dtype=np.int64))
    rows = total // n if n else 0
    offsets = (np.arange(rows, dtype=np.int32) * n).reshape(moved_shape[:-1] + (1,))
    flat_index = p('reshape', p('add', moved_perm, offsets), new_sizes=(total,))
    gathered = p('take', p('reshape', moved, new_sizes=(total,)), flat_index, axis=0)
    back = tuple(int(i) for i in np.argsort(order))
    return p('transpose', p('reshape', gathered, new_sizes=moved_shape), permutation=back)


def _sort_permutation(eq, keys):
    shape = shape_of(keys)
    d = eq.params['dimension'] % len(shape)
    return core.bind('sort', keys, _sort_iota(shape, d), dimension=d, num_keys=1)[1], d


def _sort_jvp(eq, primals, tangents, outs):
    perm, d = _sort_permutation(eq, primals[0])
    return [None if t is None else _along(t, perm, d) for t in tangents]


def _sort_vjp(eq, cts, primals, outs, active):
    perm, d = _sort_permutation(eq, primals[0])
    # The transpose of a gather by a permutation gathers by its inverse.
    inverse = core.bind('sort', perm, _sort_iota(shape_of(perm), d), dimension=d, num_keys=1)[1]
    return [None if ct is None or not act else _along(ct, inverse, d) for ct, act in zip(cts, active)]


defrules('sort', _sort_jvp, _sort_vjp)


def _concatenate_jvp(eq, primals, tangents, outs):
    ts = [zeros(core.aval_of(x)) if t is None else t for x, t in zip(primals, tangents)]
    return [p('concatenate', *ts, **eq.params)]


def _concatenate_vjp(eq, cts, primals, outs, active):
    axis = eq.params['dimension'] % len(shape_of(primals[0]))
    out, start = [], 0
    for x, a in zip(primals, active):
        n = shape_of(x)[axis]
        out.append(slice_axis(cts[0], axis, start, start + n) if a else None)
        start += n
    return out


defrules('concatenate', _concatenate_jvp, _concatenate_vjp)


# --- reductions -------------------------------------------------------------------

def _kept_broadcast(y, x, axes):
    s = shape_of(x)
    axes = {a % len(s) for a in axes}
    return p('broadcast_in_dim', y, shape=s, broadcast_dimensions=tuple(d for d in range(len(s)) if d not in axes))


def _chooser_weights(eq, x, y):
    """Where the max (min) was taken, 1/count: ties share the gradient, as in JAX."""
    axes = eq.params['axes']
    hit = p('convert_element_type', p('eq', x, _kept_broadcast(y, x, axes)), new_dtype=dtype_of(x).name,
            weak_type=False)
    counts = p('reduce_sum', hit, axes=axes)
    return div(hit, _kept_broadcast(counts, x, axes))


def _chooser_jvp(eq, primals, tangents, outs):
    return [p('reduce_sum', mul(tangents[0], _chooser_weights(eq, primals[0], outs[0])), axes=eq.params['axes'])]


def _chooser_vjp(eq, cts, primals, outs, active):
    x = primals[0]
    return [mul(_kept_broadcast(cts[0], x, eq.params['axes']), _chooser_weights(eq, x, outs[0]))]


defrules('reduce_max', _chooser_jvp, _chooser_vjp)
defrules('reduce_min', _chooser_jvp, _chooser_vjp)


def _product_of_others(x, axes):
    """For each element, the product of the other elements it was reduced
    with: exclusive products from both ends, so zeros need no division."""
    s = shape_of(x)
    nd = len(s)
    axes = sorted({a % nd for a in axes})
    kept = [d for d in range(nd) if d not in axes]
    perm = tuple(kept + axes)
    xt = p('transpose', x, permutation=perm)
    ts = shape_of(xt)
    k = int(np.prod([s[a] for a in axes], dtype=np.int64))
    lead = tuple(ts[:len(kept)])
    flat = p('reshape', xt, new_sizes=lead + (k,))
    last = len(lead)
    ones = p('broadcast_in_dim', np.ones((), dtype=dtype_of(x)), shape=lead + (1,), broadcast_dimensions=())

    def exclusive(v):
        inclusive = p('cumprod', v, axis=last, reverse=False)
        return p('concatenate', ones, slice_axis(inclusive, last, 0, k - 1), dimension=last)
    left = exclusive(flat)
    right = p('rev', exclusive(p('rev', flat, dimensions=(last,))), dimensions=(last,))
    others = p('reshape', mul(left, right), new_sizes=ts)
    inverse = [0] * nd
    for i, d in enumerate(perm):
        inverse[d] = i
    return p('transpose', others, permutation=tuple(inverse))


def _prod_jvp(eq, primals, tangents, outs):
    return [p('reduce_sum', mul(tangents[0], _product_of_others(primals[0], eq.params['axes'])),
              axes=eq.params['axes'])]


def _prod_vjp(eq, cts, primals, outs, active):
    x = primals[0]
    return [mul(_kept_broadcast(cts[0], x, eq.params['axes']), _product_of_others(x, eq.params['axes']))]


defrules('reduce_prod', _prod_jvp, _prod_vjp)


def _shifted(v, axis, s, fill):
    """v moved s places along axis, the first s filled with `fill`."""
    shape = list(shape_of(v))
    n = shape[axis]
    shape[axis] = min(s, n)
    pad = p('broadcast_in_dim', np.asarray(fill, dtype=dtype_of(v)), shape=tuple(shape), broadcast_dimensions=())
    return pad if s >= n else p('concatenate', pad, slice_axis(v, axis, 0, n - s), dimension=axis)


def _linear_recurrence(a, b, axis, reverse=False):
    """h_i = a_i h_(i-1) + b_i along axis (h before the first is 0), or from
    the other end: pairs of steps composed by doubling, log2(n) rounds of
    elementwise products, with no division (zeros in a are fine)."""
    if reverse:
        flip = lambda v: p('rev', v, dimensions=(axis,))
        return flip(_linear_recurrence(flip(a), flip(b), axis))
    n = shape_of(a)[axis]
    s = 1
    while s < n:
        b = p('add', mul(a, _shifted(b, axis, s, 0)), b)
        a = mul(a, _shifted(a, axis, s, 1))
        s *= 2
    return b


def _cumprod_jvp(eq, primals, tangents, outs):
    # y_i = x_i y_(i-1): dy_i = x_i dy_(i-1) + y_(i-1) t_i, no division, so
    # zeros in x get JAX's values.
    x = primals[0]
    axis = eq.params['axis'] % len(shape_of(x))
    before = _shifted(outs[0], axis, 1, 1)  # y_(i-1), 1 before the first
    return [_linear_recurrence(x, mul(before, tangents[0]), axis)]


def _cumprod_vjp(eq, cts, primals, outs, active):
    # dx_j = y_(j-1) g_j with g_j = ct_j + x_(j+1) g_(j+1): the transpose of
    # the recurrence above, run from the end.
    x = primals[0]
    axis = eq.params['axis'] % len(shape_of(x))
    g = _linear_recurrence(_shifted_back(x, axis), cts[0], axis, reverse=True)
    return [mul(_shifted(outs[0], axis, 1, 1), g)]


def _shifted_back(v, axis):
    """v moved one place back along axis (v_(i+1) at i), 0 at the end."""
    flip = lambda u: p('rev', u, dimensions=(axis,))
    return flip(_shifted(flip(v), axis, 1, 0))


def _from_the_end(rule, primals_at):
    """A cumprod rule for reverse=True: the forward rule on the axis flipped,
    its results flipped back. The rule's first three arguments after eq are
    lists of values (primals, tangents, outputs or cotangents); `primals_at`
    says which holds the primals."""
    def wrapped(eq, *args):
        if not eq.params.get('reverse', False):
            return rule(eq, *args)
        axis = eq.params['axis'] % len(shape_of(args[primals_at][0]))
        flip = lambda v: None if v is None else p('rev', v, dimensions=(axis,))
        values = [[flip(v) for v in group] for group in args[:3]]
        forward = Eqn(eq.primitive, eq.inputs, eq.outputs, {**eq.params, 'reverse': False}, eq.loc)
        return [flip(v) for v in rule(forward, *values, *args[3:])]
    return wrapped


# jvp(eq, primals, tangents, outs); vjp(eq, cts, primals, outs, active)
defrules('cumprod', _from_the_end(_cumprod_jvp, 0), _from_the_end(_cumprod_vjp, 1))


# --- dot_general and indexed updates --------------------------------------------------

def _dot_general_jvp(eq, primals, tangents, outs):
    x, y = primals
    tx, ty = tangents
    return [sum_tangents([None if tx is None else p('dot_general', tx, y, **eq.params),
                          None if ty is None else p('dot_general', x, ty, **eq.params)], shape_of(outs[0]))]


def _free(rank, contracting, batch):
    return [d for d in range(rank) if d not in contracting and d not in batch]


def _operand_cotangent(ct, other, own, params, own_side):
    """The cotangent of one operand of out = dot_general(x, y): ct contracted
    with the other operand over the other's free axes, batched over the batch
    axes. The product's axes are the batch axes, own's free axes, then own's
    contracted axes in the order of their partners in the other operand; a
    transpose puts them in own's order (as JAX's transpose rule records it)."""
    other_side = 'rhs' if own_side == 'lhs' else 'lhs'
    c_own, c_other = params[own_side + '_contracting'], params[other_side + '_contracting']
    b_own, b_other = params[own_side + '_batch'], params[other_side + '_batch']
    nb = len(b_own)
    f_own = _free(len(shape_of(own)), c_own, b_own)
    f_other = _free(len(shape_of(other)), c_other, b_other)
    # ct's axes: the batch axes, lhs's free axes, then rhs's.
    first = nb + len(f_own) if own_side == 'lhs' else nb
    dims = dict(lhs_contracting=tuple(range(first, first + len(f_other))), rhs_contracting=tuple(f_other),
                lhs_batch=tuple(range(nb)), rhs_batch=tuple(b_other))
    extra = {k: params[k] for k in ('precision', 'preferred_element_type') if k in params}
    g = p('dot_general', ct, other, **dims, **extra)
    partners = [c_own[j] for j in np.argsort(c_other, kind='stable')]
    order = tuple(int(d) for d in np.argsort(list(b_own) + f_own + partners, kind='stable'))
    if order != tuple(range(len(order))):
        g = p('transpose', g, permutation=order)
    if dtype_of(g) != dtype_of(own):
        g = p('convert_element_type', g, new_dtype=np.dtype(dtype_of(own)).name, weak_type=False)
    return g


def _dot_general_vjp(eq, cts, primals, outs, active):
    x, y = primals
    return [_operand_cotangent(cts[0], y, x, eq.params, 'lhs') if active[0] else None,
            _operand_cotangent(cts[0], x, y, eq.params, 'rhs') if active[1] else None]


defrules('dot_general', _dot_general_jvp, _dot_general_vjp)


def _index_update_jvp(eq, primals, tangents, outs):
    x, v = primals
    tx, tv = tangents
    mode = eq.params['mode']
    if mode in ('set', 'add'):
        tx = zeros(core.aval_of(x)) if tx is None else tx
        if tv is None:  # a constant written: no tangent where it lands
            return [p('index_update', tx, 0.0, **eq.params) if mode == 'set' else tx]
        return [p('index_update', tx, tv, **eq.params)]
    if mode == 'mul':
        # y = x with x[i] *= v: dy = dx with dx[i] *= v, plus x[i] * dv at i
        dy = None if tx is None else p('index_update', tx, v, **eq.params)
        if tv is not None:
            part = p('index_update', zeros(core.aval_of(x)), mul(p('index', x, items=eq.params['items']), tv),
                     items=eq.params['items'], mode='add')
            dy = add_any(dy, part)
        return [dy]
    if mode in ('min', 'max'):
        mask_x, mask_v, count, sel_shape = _extremal_winners(eq, x, v, outs[0])
        dy = None if tx is None else mul(tx, mask_x)
        if tv is not None:
            dy = add_any(dy, p('index_update', zeros(core.aval_of(x)), mul(expand(tv, sel_shape), mask_v),
                               items=eq.params['items'], mode='add'))
        return [None if dy is None else div(dy, count)]
    raise not_implemented(f'index_update (x.at[...].{mode})')


def _extremal_winners(eq, x, v, out):
    """For x.at[i].min/max(v): which of x (mask_x) and of the written
    values (mask_v) equal the result, and how many do at each position. The
    tangent is the winners' average, as JAX splits it between ties."""
    items = eq.params['items']
    dt = dtype_of(out).name
    mask_x = p('convert_element_type', p('eq', x, out), new_dtype=dt, weak_type=False)
    selected = p('index', out, items=items)
    sel_shape = shape_of(selected)
    mask_v = p('convert_element_type', p('eq', expand(p('convert_element_type', v, new_dtype=dt, weak_type=False),
                                                      sel_shape), selected), new_dtype=dt, weak_type=False)
    count = p('add', mask_x, p('index_update', zeros(core.aval_of(out)), mask_v, items=items, mode='add'))
    return mask_x, mask_v, count, sel_shape


def _index_update_vjp(eq, cts, primals, outs, active):
    x, v = primals
    ct = cts[0]
    items = eq.params['items']
    mode = eq.params['mode']
    selected = p('index', ct, items=items)
    if mode == 'set':
        return [p('index_update', ct, 0.0, items=items, mode='set') if active[0] else None,
                unbroadcast(selected, shape_of(v)) if active[1] else None]
    if mode == 'add':
        return [ct if active[0] else None, unbroadcast(selected, shape_of(v)) if active[1] else None]
    if mode == 'mul':
        return [p('index_update', ct, v, items=items, mode='mul') if active[0] else None,
                unbroadcast(mul(selected, p('index', x, items=items)), shape_of(v)) if active[1] else None]
    if mode in ('min', 'max'):
        mask_x, mask_v, count, _ = _extremal_winners(eq, x, v, outs[0])
        shared = div(ct, count)
        return [mul(shared, mask_x) if active[0] else None,
                unbroadcast(mul(p('index', shared, items=items), mask_v), shape_of(v)) if active[1] else None]
    raise not_implemented(f'index_update (x.at[...].{mode})')


defrules('index_update', _index_update_jvp, _index_update_vjp)
