"""jax.lax: primitives, collectives and structured control flow.

Collectives and control flow are recorded into the traced program; every
device then runs them in C++, meeting at spmdsim's rendezvous, which checks
that all devices brought the same collective and reports deadlocks exactly.
"""

import builtins
import enum
import operator

import numpy as np

import _spmd
from jax._src import core, dtypes, source_info, tree_util
from jax._src.core import bind, bind1


# --- elementwise ------------------------------------------------------------

def _unary(name):
    def f(x):
        return bind1(name, x)
    f.__name__ = name
    return f


neg = _unary('neg')
abs = _unary('abs')
sign = _unary('sign')
exp = _unary('exp')
log = _unary('log')
log1p = _unary('log1p')
expm1 = _unary('expm1')
sqrt = _unary('sqrt')
rsqrt = _unary('rsqrt')
square = _unary('square')
sin = _unary('sin')
cos = _unary('cos')
tan = _unary('tan')
tanh = _unary('tanh')
erf = _unary('erf')
erf_inv = _unary('erf_inv')
sinh = _unary('sinh')
cosh = _unary('cosh')
asin = _unary('asin')
acos = _unary('acos')
atan = _unary('atan')
logistic = _unary('logistic')
floor = _unary('floor')
ceil = _unary('ceil')


class RoundingMethod(enum.IntEnum):
    """lax.RoundingMethod: how round takes halves."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """lax.round: halves away from zero unless told otherwise (jnp.round
    takes them to even)."""
    return bind1('round', x, rounding_method=int(RoundingMethod(rounding_method)))


bitwise_not = _unary('not')
is_finite = _unary('is_finite')


def _binary(name):
    def f(x, y):
        return bind1(name, x, y)
    f.__name__ = name
    return f


add = _binary('add')
sub = _binary('sub')
mul = _binary('mul')
div = _binary('div')
rem = _binary('rem')
pow = _binary('pow')
max = _binary('max')
min = _binary('min')
eq = _binary('eq')
ne = _binary('ne')
lt = _binary('lt')
le = _binary('le')
gt = _binary('gt')
ge = _binary('ge')
bitwise_and = _binary('and')
bitwise_or = _binary('or')
bitwise_xor = _binary('xor')
atan2 = _binary('atan2')


def select(pred, on_true, on_false):
    return bind1('select_n', pred, on_false, on_true)


def convert_element_type(x, new_dtype):
    new_dtype = dtypes.canonicalize(new_dtype)
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        # As JAX: a Python scalar is converted as the program is traced (a literal, no equation).
        return core.python_scalar(x, new_dtype, False)
    if isinstance(x, core.Array):
        aval = core.aval_of(x)
        if aval.dtype == new_dtype and not aval.weak_type:
            return x  # as JAX: nothing to convert, no equation
    return bind1('convert_element_type', x, new_dtype=new_dtype.name, weak_type=False)


def reshape(x, new_sizes, dimensions=None):
    new_sizes = tuple(int(d) for d in new_sizes)
    if dimensions is None and isinstance(x, core.Array) and core.aval_of(x).shape == new_sizes:
        return x  # as JAX: already that shape
    if dimensions is not None:
        x = transpose(x, dimensions)
    return bind1('reshape', x, new_sizes=new_sizes)


def transpose(x, permutation):
    permutation = tuple(int(p) for p in permutation)
    if isinstance(x, core.Array) and permutation == tuple(range(len(core.aval_of(x).shape))):
        return x  # as JAX: the identity permutation records nothing
    return bind1('transpose', x, permutation=permutation)


class Precision(enum.Enum):
    """lax.Precision: accepted wherever JAX takes `precision=`; XLA:CPU (and
    so spmdsim) computes float32 products in full precision for all three."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {'bfloat16': cls.DEFAULT, 'default': cls.DEFAULT, 'tensorfloat32': cls.HIGH, 'high': cls.HIGH,
                 'float32': cls.HIGHEST, 'highest': cls.HIGHEST}
        return names.get(value.lower()) if isinstance(value, str) else None

    def __str__(self):
        return self.name


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    """lax.dot_general: the result's axes are the batch dimensions, then lhs's
    free ones, then rhs's, as in JAX; one dot_general equation, run as one
    (batched) BLAS product."""
    return dot(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
               preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def dot(lhs, rhs, *args, dimension_numbers=None, precision=None, preferred_element_type=None, out_sharding=None):
    """lax.dot (JAX 0.8's, which took over dot_general): without
    dimension_numbers, a plain matrix-matrix, matrix-vector or vector-vector
    product."""
    import jax.numpy as jnp
    if len(args) > 2:
        raise TypeError('Too many positional arguments passed to jax.lax.dot.')
    if args:  # the old positional (precision, preferred_element_type)
        precision = args[0]
        preferred_element_type = args[1] if len(args) > 1 else preferred_element_type
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    ls, rs = core.aval_of(lhs).shape, core.aval_of(rhs).shape
    if dimension_numbers is None:
        if 1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]:
            dimension_numbers = (((len(ls) - 1,), (0,)), ((), ()))
        else:
            raise ValueError('jax.lax.dot: dimension_numbers must be specified when not performing simple '
                             'un-batched matrix-matrix, matrix-vector, or vector-vector products; '
                             f'got lhs_shape={ls} rhs_shape={rs}')
    (lc, rc), (lb, rb) = dimension_numbers
    params = dict(lhs_contracting=_index_tuple(lc), rhs_contracting=_index_tuple(rc),
                  lhs_batch=_index_tuple(lb), rhs_batch=_index_tuple(rb))
    if preferred_element_type is not None:
        params['preferred_element_type'] = dtypes.canonicalize(preferred_element_type).name
    if precision is not None:
        params['precision'] = _precision_text(precision)
    return bind1('dot_general', lhs, rhs, **params)


def dot_dimension_numbers(params):
    """A dot_general equation's params as JAX's dimension_numbers."""
    return ((params['lhs_contracting'], params['rhs_contracting']), (params['lhs_batch'], params['rhs_batch']))


def _index_tuple(dims):
    return tuple(int(d) for d in dims) if isinstance(dims, (tuple, list, np.ndarray)) else (int(dims),)


def _precision_text(precision):
    """canonicalize_precision's result as JAX prints it: a pair."""
    def one(p):
        try:
            return f'Precision.{Precision(p).name}'
        except ValueError:
            raise ValueError(f'jax.lax.Precision must be one of the enum values or their names, got {p!r}') from None
    pair = tuple(precision) if isinstance(precision, (tuple, list)) else (precision, precision)
    if len(pair) != 2:
        raise ValueError(f'precision argument must be None, a string or a Precision, or a pair of them, got {precision!r}')
    return f'({one(pair[0])}, {one(pair[1])})'


def squeeze(array, dimensions):
    """lax.squeeze: the named axes of size 1 removed."""
    shape = core.aval_of(array).shape
    dims = tuple(sorted(int(d) % len(shape) if -len(shape) <= int(d) < len(shape) else int(d) for d in dimensions))
    for d in dims:
        if not 0 <= d < len(shape) or shape[d] != 1:
            raise ValueError(f'cannot select an axis to squeeze out which has size not equal to one, got '
                             f'shape={shape} and dimensions={dims}')
    if not dims and isinstance(array, core.Array):
        return array
    return bind1('squeeze', array, dimensions=dims)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    return bind1('broadcast_in_dim', x, shape=tuple(int(d) for d in shape),
                 broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions))


def broadcast(x, sizes):
    nd = len(core.aval_of(x).shape)
    return broadcast_in_dim(x, tuple(sizes) + core.aval_of(x).shape, tuple(range(len(sizes), len(sizes) + nd)))


def concatenate(operands, dimension):
    return bind1('concatenate', *operands, dimension=int(dimension))


def stop_gradient(x):
    """x, through which autodiff sends no gradient."""
    def stop(leaf):
        aval = core.aval_of(leaf)
        if aval.dtype.kind != 'f':
            return leaf
        return bind1('stop_gradient', leaf)
    return tree_util.tree_map(stop, x)


def _reduce(name):
    def f(x, axes):
        return bind1(name, x, axes=tuple(int(a) for a in axes))
    f.__name__ = name
    return f


reduce_sum = _reduce('reduce_sum')
reduce_prod = _reduce('reduce_prod')
reduce_max = _reduce('reduce_max')
reduce_min = _reduce('reduce_min')
reduce_or = _reduce('reduce_or')
reduce_and = _reduce('reduce_and')


# --- collectives ----------------------------------------------------------------

def _axes_param(axis_name):
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f'axis_name must be a string or a tuple of strings, got {n!r}')
    return tuple(names)


def _groups_params(axis_index_groups):
    if axis_index_groups is None:
        return {}
    groups = [list(g) for g in axis_index_groups]
    sizes = {len(g) for g in groups}
    if len(sizes) != 1:
        raise ValueError(f'axis_index_groups must all be the same size, got sizes {sorted(sizes)}')
    return {'axis_index_groups': tuple(int(i) for g in groups for i in g), 'group_size': sizes.pop()}


def _axis_size_of(axes, axis_index_groups):
    if axis_index_groups is not None:
        return len(axis_index_groups[0])
    size = 1
    for name in axes:
        size *= axis_size(name)
    return size


def _reduction(name):
    def collective(x, axis_name, *, axis_index_groups=None):
        axes = _axes_param(axis_name)
        leaves, tree = tree_util.tree_flatten(x)
        out = list(leaves)
        arrays = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, (int, float)) and not isinstance(leaf, bool) and name in ('psum', 'pmean'):
                # JAX folds collectives of Python constants: psum(1, 'i') is the axis size.
                n = _axis_size_of(axes, axis_index_groups)
                out[i] = leaf * n if name == 'psum' else float(leaf)
            else:
                arrays.append(i)
        if arrays:
            results = bind(name, *[leaves[i] for i in arrays], axes=axes, **_groups_params(axis_index_groups))
            for i, r in zip(arrays, results):
                out[i] = r
        return tree.unflatten(out)
    collective.__name__ = name
    return collective


psum = _reduction('psum')
pmean = _reduction('pmean')
pmax = _reduction('pmax')
pmin = _reduction('pmin')


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    axes = _axes_param(axis_name)
    return tree_util.tree_map(
        lambda leaf: bind1('all_gather', leaf, axes=axes, axis=int(axis), tiled=bool(tiled),
                           **_groups_params(axis_index_groups)), x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    axes = _axes_param(axis_name)
    return tree_util.tree_map(
        lambda leaf: bind1('psum_scatter', leaf, axes=axes, scatter_dimension=int(scatter_dimension),
                           tiled=bool(tiled), **_groups_params(axis_index_groups)), x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    axes = _axes_param(axis_name)
    return tree_util.tree_map(
        lambda leaf: bind1('all_to_all', leaf, axes=axes, split_axis=int(split_axis), concat_axis=int(concat_axis),
                           tiled=bool(tiled), **_groups_params(axis_index_groups)), x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the mapped axis `axis_name` with array dimension `axis` (whose
    size must be the axis size): all_to_all splitting and concatenating along
    `axis`, as JAX defines it."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pvary(x, axis_name):
    """Marks x as varying over `axis_name` (JAX's check_vma bookkeeping):
    the values are unchanged; the names must be bound."""
    for name in _axes_param(axis_name):
        axis_size(name)
    return x


pbroadcast = pvary


def pshuffle(x, axis_name, perm):
    """Device i receives device perm[i]'s value."""
    return ppermute(x, axis_name, [(int(src), i) for i, src in enumerate(perm)])


def _device_index(value, pair, perm):
    try:
        return operator.index(value)
    except TypeError:
        err = TypeError(f'ppermute perm entries must be integer device indices, got {value!r} '
                        f'({type(value).__name__}) in the pair {pair} of perm={list(perm)}')
        err._spmd_hint = 'a device index along the axis is an int in 0..size-1: int(...), or // where / was meant'
        raise err from None


def _permutation_pairs(perm):
    """perm as (source, destination) pairs of Python ints. JAX indexes a list
    with each entry, so a float is its TypeError; a pair of another length
    its unpacking ValueError."""
    pairs = []
    for pair in perm:
        pair = tuple(pair)
        if len(pair) != 2:
            err = ValueError(f'ppermute perm entries must be (source, destination) pairs, got {pair} in '
                             f'perm={list(perm)}')
            err._spmd_hint = 'each entry sends one device\'s value to another: a ring is [(i, (i + 1) % n) for i in range(n)]'
            raise err
        pairs.append(tuple(_device_index(v, pair, perm) for v in pair))
    return pairs


def _check_permutation(perm):
    """As JAX checks when it traces a ppermute: each device sends at most one
    value and receives at most one."""
    for what, index, verb in (('sources', 0, 'send'), ('destinations', 1, 'receive')):
        seen = {}
        for pair in perm:
            seen.setdefault(int(pair[index]), []).append(int(pair[1 - index]))
        repeated = {k: v for k, v in seen.items() if len(v) > 1}
        if repeated:
            k, others = next(iter(repeated.items()))
            err = ValueError(f'ppermute {what} must be unique, got perm={list(perm)}: device {k} would {verb} '
                             f'{"to" if index == 0 else "from"} devices {others}')
            err._spmd_hint = ('a ppermute sends each device\'s value to at most one device and each device receives '
                              'at most one value; a ring is [(i, (i + 1) % n) for i in range(n)]')
            raise err


def ppermute(x, axis_name, perm):
    axes = _axes_param(axis_name)
    perm = _permutation_pairs(perm)
    _check_permutation(perm)
    flat = [index for pair in perm for index in pair]
    return tree_util.tree_map(lambda leaf: bind1('ppermute', leaf, axes=axes, perm=tuple(flat)), x)


def axis_index(axis_name):
    return bind1('axis_index', axes=_axes_param(axis_name))


def axis_size(axis_name):
    for name, size in reversed(core.bound_axes()):
        if name == axis_name:
            return size
    # Let the primitive report the unbound name as a traced collective would.
    bind1('axis_index', axes=_axes_param(axis_name))
    raise NameError(f'unbound axis name: {axis_name}')


# --- control flow -----------------------------------------------------------------

def _check_same_outputs(what, progs):
    """The branches' outputs agree but for weak types (JAX's typematch; the
    cond's result is weak only where every branch's is)."""
    strong = lambda prog: [a[:2] for a in prog.out_avals]
    first_prog, first_tree = progs[0][0], progs[0][1]
    for i, (prog, tree, _) in enumerate(progs[1:], 1):
        if tree != first_tree or strong(prog) != strong(first_prog):
            raise TypeError(
                f'{what} branches must have equal output types: branch 0 returns '
                f'{_describe(first_tree, first_prog.out_avals)} but branch {i} returns '
                f'{_describe(tree, prog.out_avals)}')


def _describe(tree, avals):
    parts = [core.ShapedArray(*a).str_short() for a in avals]
    return f'{tree} with leaves ({", ".join(parts)})'


def _run_branches(what, index, branches, operands):
    leaves, in_tree = tree_util.tree_flatten(tuple(operands))
    avals = [core.aval_of(l) for l in leaves]
    # Weak types of the operands do not reach the branches' signatures.
    progs = []
    for b in branches:
        def flat_fun(*xs, b=b):
            return b(*in_tree.unflatten(list(xs)))
        progs.append(core.trace_function(flat_fun, avals, what))
    _check_same_outputs(what, progs)
    # Each branch is traced once (as in JAX: its Python runs once). Its
    # program takes the operands, then the outer values it captured; the cond
    # takes every branch's captures once, and each branch's slots say which.
    captured, seen, counts, slots = [], {}, [], []
    for _, _, caps in progs:
        counts.append(len(caps))
        for c in caps:
            if id(c) not in seen:
                seen[id(c)] = len(captured)
                captured.append(c)
            slots.append(seen[id(c)])
    outs = bind('cond', index, *leaves, *captured, branches=tuple(p for p, _, _ in progs), capture_counts=tuple(counts),
                capture_slots=tuple(slots), source=what)
    return progs[0][1].unflatten(outs)


def _eager():
    """Under jax.disable_jit, control flow runs as Python on concrete values, as in JAX."""
    from jax._src.config import config
    return config.read('jax_disable_jit') and core.current_trace() is None


def cond(pred, true_fun, false_fun, *operands, operand=None):
    if operand is not None:
        operands = (operand,)
    p = core.aval_of(pred)
    if p.shape != ():
        raise TypeError(f'Pred must be a scalar, got {pred} of shape {p.shape}.')
    if p.dtype.kind not in 'biu':
        raise TypeError('Pred type must be either boolean or number.')
    if _eager() and core.is_concrete(pred):
        taken = bool(pred)
        _spmd.record_decision('lax.cond', int(taken), source_info.current_location())
        return true_fun(*operands) if taken else false_fun(*operands)
    index = convert_element_type(pred, np.int32) if p.dtype == np.bool_ else convert_element_type(ne(pred, 0), np.int32)
    return _run_branches('lax.cond', index, [false_fun, true_fun], operands)


def switch(index, branches, *operands):
    branches = list(branches)
    if not branches:
        raise ValueError('Empty branch sequence')
    if _eager() and core.is_concrete(index):
        i = int(np.clip(int(index), 0, len(branches) - 1))
        _spmd.record_decision('lax.switch', i, source_info.current_location())
        return branches[i](*operands)
    index = convert_element_type(index, np.int32)
    return _run_branches('lax.switch', index, branches, operands)


def while_loop(cond_fun, body_fun, init_val):
    if _eager() and not any(isinstance(l, core.Tracer) for l in tree_util.tree_leaves(init_val)):
        loc = source_info.current_location()
        val = init_val
        while True:
            go = bool(cond_fun(val))
            _spmd.record_decision('lax.while_loop', int(go), loc)
            if not go:
                return val
            val = body_fun(val)
    return _while('lax.while_loop', cond_fun, body_fun, init_val)


def _while(what, cond_fun, body_fun, init_val, trip_count=None):
    """A while equation; `trip_count` when the number of iterations is known
    at trace time (a fori_loop with static bounds, a scan), which reverse-mode
    autodiff needs."""
    leaves, tree = tree_util.tree_flatten(init_val)
    avals = [core.aval_of(l) for l in leaves]
    # As JAX (_promote_weak_typed_inputs): a weak carry stays weak unless the
    # body gives it another dtype; then it starts in the promoted dtype and
    # both functions are traced again (JAX's Python runs twice then too).
    def trace_both():
        cond = core.trace_function(lambda *xs: cond_fun(tree.unflatten(list(xs))), avals, what)
        cond_out = [core.ShapedArray(*a) for a in cond[0].out_avals]
        if len(cond_out) != 1 or cond_out[0].shape != () or cond_out[0].dtype != np.bool_:
            raise TypeError(f'cond_fun must return a boolean scalar, but got output type(s) {cond_out}.')
        return cond, core.trace_function(lambda *xs: body_fun(tree.unflatten(list(xs))), avals, what)
    (cond_prog, _, cond_caps), (body_prog, body_tree, body_caps) = trace_both()
    if len(body_prog.out_avals) == len(avals):
        promoted = [convert_element_type(l, dtypes.result_type(l, dtypes.dtype(dtype)))
                    if a.weak_type and (a.shape, a.dtype.name) != (tuple(shape), dtype) else l
                    for l, a, (shape, dtype, _) in zip(leaves, avals, body_prog.out_avals)]
        if any(p is not l for p, l in zip(promoted, leaves)):
            leaves = promoted
            avals = [core.aval_of(l) for l in leaves]
            (cond_prog, _, cond_caps), (body_prog, body_tree, body_caps) = trace_both()
    out_avals = [core.ShapedArray(*a) for a in body_prog.out_avals]
    if body_tree != tree or [a.shape for a in out_avals] != [a.shape for a in avals] or \
            [a.dtype for a in out_avals] != [a.dtype for a in avals]:
        raise TypeError(f'{what}: body_fun output and input must have identical types, got input '
                        f'{_describe(tree, [(a.shape, a.dtype.name, a.weak_type) for a in avals])} and output '
                        f'{_describe(body_tree, body_prog.out_avals)}')
    outs = bind('while', *cond_caps, *body_caps, *leaves, cond_jaxpr=cond_prog, body_jaxpr=body_prog,
                cond_nconsts=len(cond_caps), body_nconsts=len(body_caps), source=what,
                **({} if trip_count is None else {'trip_count': int(trip_count)}))
    return tree.unflatten(outs)


def _strong(aval):
    return core.ShapedArray(aval.shape, aval.dtype, False)


def fori_loop(lower, upper, body_fun, init_val):
    if _eager() and all(core.is_concrete(v) for v in (lower, upper)):
        count = builtins.max(int(upper) - int(lower), 0)
        _spmd.record_decision('lax.fori_loop', count, source_info.current_location())
        val = init_val
        for i in range(int(lower), int(upper)):
            val = body_fun(i, val)
        return val
    # As JAX lowers it: the carry is (i, upper, x), so every device knows its
    # trip count on entry, and a count that differs between devices is one
    # decision the deadlock report names.
    dt = np.int32

    def c(state):
        i, hi, _ = state
        return lt(i, hi)

    def b(state):
        i, hi, val = state
        return add(i, np.int32(1)), hi, body_fun(i, val)
    state = (convert_element_type(lower, dt), convert_element_type(upper, dt), init_val)
    trips = None
    if all(core.is_concrete(v) for v in (lower, upper)):
        trips = builtins.max(int(upper) - int(lower), 0)
    _, _, out = _while('lax.fori_loop', c, b, state, trips)
    return out


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    xs_leaves, xs_tree = tree_util.tree_flatten(xs)
    lengths = {core.aval_of(x).shape[0] for x in xs_leaves if core.aval_of(x).shape}
    if any(not core.aval_of(x).shape for x in xs_leaves):
        raise ValueError('scan got value with no leading axis to scan over')
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError(f'scan got values with different leading axis sizes: {sorted(lengths)}')
    if not lengths:
        raise ValueError('scan got no values to scan over and `length` not provided.')
    n = lengths.pop()

    def x_at(i):
        return xs_tree.unflatten([dynamic_index_in_dim(x, i, 0, keepdims=False, allow_negative_indices=False)
                                  for x in xs_leaves])

    def step(carry, x):
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f'scan body output must be a pair (carry, y), got {tree_util.tree_structure(out)}')
        return out
    # The shapes of the per-step outputs, from one abstract trace of the body.
    carry_leaves, carry_tree = tree_util.tree_flatten(init)
    probe_avals = [_strong(core.aval_of(l)) for l in carry_leaves] + \
        [_strong(core.ShapedArray(core.aval_of(x).shape[1:], core.aval_of(x).dtype)) for x in xs_leaves]
    ncarry = len(carry_leaves)

    def probe(*flat):
        c = carry_tree.unflatten(list(flat[:ncarry]))
        x = xs_tree.unflatten(list(flat[ncarry:]))
        return step(c, x)[1]
    program, y_tree, _ = core.trace_function(probe, probe_avals, 'lax.scan')
    ys0 = y_tree.unflatten([_zeros((n,) + tuple(a[0]), a[1]) for a in program.out_avals])

    def body(i, state):
        carry, ys = state
        k = sub(np.int32(n - 1), i) if reverse else i
        carry, y = step(carry, x_at(k))
        ys = tree_util.tree_map(lambda buf, v: dynamic_update_index_in_dim(buf, v, k, 0, allow_negative_indices=False),
                                    ys, y)
        return carry, ys
    return fori_loop(0, n, body, (init, ys0))


def _zeros(shape, dtype):
    import jax.numpy as jnp
    return jnp.zeros(shape, dtype)


def map(f, xs):
    return scan(lambda c, x: (c, f(x)), (), xs)[1]


# --- slicing -------------------------------------------------------------------------

def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts operand (an array, or a sequence sorted together by its first
    `num_keys`; spmdsim sorts by one key) along `dimension`, stably."""
    single = not isinstance(operand, (tuple, list))
    operands = (operand,) if single else tuple(operand)
    if not operands:
        raise TypeError('lax.sort needs at least one operand')
    rank = len(core.aval_of(operands[0]).shape)
    if not -rank <= dimension < rank:
        raise ValueError(f'dimension {dimension} is out of bounds for an array of rank {rank}')
    outs = bind('sort', *operands, dimension=dimension % rank, num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """Each element its index along `dimension`: an equation of the program,
    made by the device that runs it (not a host constant)."""
    dt = dtypes.canonicalize(dtype)
    if not dtypes.issubdtype(dt, np.number):
        raise TypeError(f'iota does not accept dtype {dt.name}. Accepted dtypes are subtypes of integer, floating, '
                        'complexfloating.')
    shape = core.concrete_shape(shape)
    if builtins.any(d < 0 for d in shape):
        raise TypeError(f'iota shape must have every element be nonnegative, got {shape}.')
    if isinstance(dimension, core.Tracer):
        raise core._concretization_error(dimension, TypeError, 'dimension argument of lax.broadcasted_iota',
                                         'broadcasted_iota')
    dimension = int(dimension)
    if not 0 <= dimension < len(shape):
        raise ValueError(f'iota dimension must be between 0 and len(shape), got dimension={dimension} for '
                         f'shape={shape}')
    return bind1('iota', dtype=dt.name, shape=shape, dimension=dimension)


def integer_pow(x, y):
    """lax.integer_pow: x ** y for a static integer y, one equation, run as
    JAX's unrolled multiplications (x ** 2 is x * x, not a call to pow)."""
    if int(y) != y:
        raise TypeError(f'integer_pow needs an integer exponent, got {y!r}')
    return bind1('integer_pow', x, y=int(y))


def _per_axis(flag, rank):
    return list(flag) if isinstance(flag, (list, tuple)) else [bool(flag)] * rank


def cumsum(operand, axis=0, reverse=False):
    """lax.cumsum: running sums along axis, from its end when reverse."""
    return bind1('cumsum', operand, axis=_cumulative_axis(operand, axis), reverse=bool(reverse))


def cumprod(operand, axis=0, reverse=False):
    """lax.cumprod: running products along axis, from its end when reverse."""
    return bind1('cumprod', operand, axis=_cumulative_axis(operand, axis), reverse=bool(reverse))


def _cumulative_axis(operand, axis):
    rank = len(core.aval_of(operand).shape)
    if int(axis) < 0:
        raise ValueError('XLA operations do not allow negative axes')  # JAX's text (jnp.cumsum takes them)
    if int(axis) >= rank:
        raise ValueError(f'axis {axis} is out of bounds for array of dimension {rank}')
    return int(axis)


def split(operand, sizes, axis=0):
    """lax.split: operand cut along axis into pieces of `sizes` (a negative
    axis counted from the end, as JAX records it)."""
    rank = len(core.aval_of(operand).shape)
    axis = int(axis) + rank if -rank <= int(axis) < 0 else int(axis)
    return bind('split', operand, sizes=tuple(int(s) for s in sizes), axis=axis)


def rev(operand, dimensions):
    """lax.rev: the operand with the named axes reversed."""
    return bind1('rev', operand, dimensions=tuple(int(d) for d in dimensions))


def slice(operand, start_indices, limit_indices, strides=None):
    """lax.slice: the window [start, limit) of every axis, every strides-th
    element (JAX's TypeErrors for windows that do not fit)."""
    params = dict(start_indices=tuple(int(i) for i in start_indices),
                  limit_indices=tuple(int(i) for i in limit_indices))
    if strides is not None:
        params['strides'] = tuple(int(s) for s in strides)
    return bind1('slice', operand, **params)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """lax.slice_in_dim: lax.slice along one axis (None and negative indices
    as Python's)."""
    shape = core.aval_of(operand).shape
    axis = int(axis)
    n = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(operand, starts, limits, strides)


def _window_starts(what, operand, start_indices, allow_negative_indices):
    """The start indices as int32 scalars, a negative one counted from the
    end as JAX's _dynamic_slice_indices does (a static one folded, a traced
    one through a select); XLA's clamping is the primitive's."""
    shape = core.aval_of(operand).shape
    if len(start_indices) != len(shape):
        raise TypeError(f'{what}: {len(start_indices)} start indices for an operand of rank {len(shape)}')
    out = []
    for start, dim, neg in zip(start_indices, shape, _per_axis(allow_negative_indices, len(shape))):
        if isinstance(start, (int, np.integer)) and not isinstance(start, (bool, np.bool_)):
            if start < 0 and not neg:
                raise ValueError(f'Index {start} is out of bounds for dimension {dim} if allow_negative_indices=False')
            out.append(np.int32(start + dim if start < 0 else start))
            continue
        if neg:  # JAX's order: the test on the start as given, the sum in int32
            start = select(lt(start, np.int32(0)), add(convert_element_type(start, np.int32), np.int32(dim)), start)
        out.append(convert_element_type(start, np.int32))
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """lax.dynamic_slice: the window of slice_sizes at traced start indices,
    each clamped so the window fits (XLA's rule)."""
    shape = core.aval_of(operand).shape
    if len(slice_sizes) != len(shape):
        raise TypeError(f'dynamic_slice: {len(start_indices)} start indices and {len(slice_sizes)} slice sizes for '
                        f'an operand of rank {len(shape)}')
    for ax, (size, dim) in enumerate(zip(slice_sizes, shape)):
        if int(size) > dim:
            raise TypeError(f'dynamic_slice: slice size {int(size)} exceeds the operand\'s size {dim} along axis {ax}')
    starts = _window_starts('dynamic_slice', operand, start_indices, allow_negative_indices)
    return bind1('dynamic_slice', operand, *starts, slice_sizes=tuple(int(s) for s in slice_sizes))


def _windows_by_take(operand, slice_sizes, *starts):
    """dynamic_slice written with take (each start clamped, an iota of the
    window): the batching rule's form when the starts differ between
    examples, which JAX writes as a gather."""
    import jax.numpy as jnp
    out = operand
    for ax, (start, size, dim) in enumerate(zip(starts, slice_sizes, core.aval_of(operand).shape)):
        if size == dim:
            continue
        start = max(min(start, np.int32(dim - size)), np.int32(0))
        out = bind1('take', out, add(jnp.arange(size, dtype=np.int32), start), axis=ax)
    return out


def _window_update_by_select(operand, update, *starts):
    """dynamic_update_slice written with take and select: the batching rule's
    form when the starts differ between examples (JAX's scatter)."""
    import jax.numpy as jnp
    shape, ushape = core.aval_of(operand).shape, core.aval_of(update).shape
    gathered, inside = update, None
    for ax, (start, size, dim) in enumerate(zip(starts, ushape, shape)):
        s = max(min(start, np.int32(dim - size)), np.int32(0))
        offset = sub(jnp.arange(dim, dtype=np.int32), s)
        gathered = bind1('take', gathered, max(min(offset, np.int32(size - 1)), np.int32(0)), axis=ax)
        here = jnp.logical_and(ge(offset, np.int32(0)), lt(offset, np.int32(size)))
        here = reshape(here, [dim if d == ax else 1 for d in range(len(shape))])
        inside = here if inside is None else jnp.logical_and(inside, here)
    if inside is None:
        return update
    return select(jnp.broadcast_to(inside, shape), gathered, operand)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *, allow_negative_indices=True):
    shape = core.aval_of(operand).shape
    starts = [np.int32(0)] * len(shape)
    sizes = list(shape)
    starts[axis], sizes[axis] = start_index, slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    if keepdims:
        return out
    shape = list(core.aval_of(out).shape)
    del shape[axis]
    return reshape(out, shape)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """lax.dynamic_update_slice: operand with `update` written at traced
    start indices, each clamped so the window fits (XLA's rule)."""
    shape = core.aval_of(operand).shape
    ushape = core.aval_of(update).shape
    if len(start_indices) != len(shape) or len(ushape) != len(shape):
        raise TypeError(f'dynamic_update_slice: update of shape {ushape} and {len(start_indices)} start indices for '
                        f'an operand of shape {shape}')
    for ax, (size, dim) in enumerate(zip(ushape, shape)):
        if size > dim:
            raise TypeError(f'dynamic_update_slice: update size {size} exceeds the operand\'s size {dim} along '
                            f'axis {ax}')
    update = convert_element_type(update, core.aval_of(operand).dtype)
    starts = _window_starts('dynamic_update_slice', operand, start_indices, allow_negative_indices)
    return bind1('dynamic_update_slice', operand, update, *starts)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *, allow_negative_indices=True):
    starts = [np.int32(0)] * len(core.aval_of(operand).shape)
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    ushape = list(core.aval_of(update).shape)
    if len(ushape) == len(core.aval_of(operand).shape) - 1:
        ushape.insert(axis, 1)
        update = reshape(update, ushape)
    return dynamic_update_slice_in_dim(operand, update, index, axis, allow_negative_indices=allow_negative_indices)


def with_sharding_constraint(x, shardings):
    from jax._src.sharding import with_sharding_constraint as constrain
    return constrain(x, shardings)


from jax.lax._windows import reduce_window  # noqa: E402,F401
from jax.lax._convolution import (  # noqa: E402,F401
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated, conv_with_general_padding,
    padtype_to_pads)
