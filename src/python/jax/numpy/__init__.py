"""jax.numpy over spmdsim's primitives: numpy's names, JAX's dtype rules
(float32 by default, weakly typed Python scalars)."""

import builtins
import functools
import math
import operator

import numpy as _np

import _spmd

from jax import lax
from jax._src import core, dtypes
from jax._src.core import Array, ArrayImpl, Tracer, bind1

# dtypes and constants

class _ScalarMeta(type):
    """jnp.float32 and friends: usable as a dtype anywhere numpy takes one
    (np.dtype reads their `dtype`), and callable like JAX's, giving an Array."""

    def __call__(cls, x=0):
        return asarray(x, dtype=cls.dtype)

    def __repr__(cls):
        return f"<class 'jax.numpy.{cls.__name__}'>"

    def __instancecheck__(cls, x):
        return isinstance(x, cls.scalar_type) or (isinstance(x, Array) and x.dtype == cls.dtype)


def _scalar_type(name, np_type):
    return _ScalarMeta(name, (), {'dtype': _np.dtype(np_type), 'scalar_type': np_type})


bool_ = _scalar_type('bool_', _np.bool_)
int32 = _scalar_type('int32', _np.int32)
int64 = _scalar_type('int64', _np.int64)
float16 = _scalar_type('float16', _np.float16)
float32 = _scalar_type('float32', _np.float32)
float64 = _scalar_type('float64', _np.float64)
uint8 = _scalar_type('uint8', _np.uint8)


class _HostOnlyScalarMeta(_ScalarMeta):
    """jnp.uint32: spmdsim's arrays have no unsigned 32-bit dtype yet, so
    jnp.uint32(x) is numpy's uint32 value (exact, and what jax.random.fold_in
    takes, as flax folds names into keys); jnp.asarray of it is a TypeError."""

    def __call__(cls, x=0):
        return _np.asarray(x).astype(cls.dtype)[()]


uint32 = _HostOnlyScalarMeta('uint32', (), {'dtype': _np.dtype(_np.uint32), 'scalar_type': _np.uint32})
bfloat16 = dtypes.bfloat16
float_ = float64  # as in JAX: canonicalized to float32 unless jax_enable_x64
int_ = int64
dtype = _np.dtype
finfo = dtypes.finfo
iinfo = dtypes.iinfo
issubdtype = dtypes.issubdtype
generic = _np.generic
number = _np.number
inexact = _np.inexact
floating = _np.floating
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
complexfloating = _np.complexfloating
ndarray = Array
pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


def _aval(x):
    return core.aval_of(x)


def _is_tracer(x):
    return isinstance(x, Tracer)


# --- creation -------------------------------------------------------------

def asarray(a, dtype=None, copy=None):
    if isinstance(a, (Tracer, ArrayImpl)):
        return a if dtype is None or dtypes.dtype(dtype) == a.dtype else a.astype(dtype)
    if hasattr(type(a), '__jax_array__'):
        return asarray(a.__jax_array__(), dtype)
    if dtype is not None and dtypes.dtype(dtype) is dtypes.bfloat16:
        return lax.convert_element_type(asarray(a, _np.float32), dtypes.bfloat16)
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(l, Array) for l in _flat(a)):
        out = stack([asarray(x) for x in a])
        return out if dtype is None else out.astype(dtype)
    if isinstance(a, (bool, int, float)) and dtype is None:
        return ArrayImpl(core.to_spmd_array(a))  # checks the int fits, as JAX does
    arr = _np.asarray(a, dtype=dtype)
    return ArrayImpl(core.to_spmd_array(arr, dtypes.canonicalize(arr.dtype)))


def _flat(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


array = asarray


def _from_host(a, dtype):
    """The numpy array `a` as an spmdsim array of `dtype` (numpy has no
    bfloat16: such values are made in float32 and converted, as asarray does)."""
    dt = dtypes.canonicalize(dtype)
    if dt is dtypes.bfloat16:
        return lax.convert_element_type(ArrayImpl(core.to_spmd_array(a.astype(_np.float32))), dt)
    return ArrayImpl(core.to_spmd_array(a.astype(dt)))


def _creation(shape, dtype, fill):
    dt = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    shape = core.concrete_shape(shape)
    # One element broadcast to the shape, as JAX's lax.full: in a traced
    # function the array is an equation the device makes in its own arena, not
    # a program constant of the whole size held on the host.
    element = _from_host(_np.full((), fill, dtype=_np.float32 if dt is dtypes.bfloat16 else dt), dt)
    return lax.broadcast_in_dim(element, shape, ())


def zeros(shape, dtype=None):
    return _creation(shape, dtype, 0)


def ones(shape, dtype=None):
    return _creation(shape, dtype, 1)


def full(shape, fill_value, dtype=None):
    if _is_tracer(fill_value):
        return broadcast_to(asarray(fill_value, dtype), shape)
    if dtype is None and not isinstance(fill_value, float):
        dtype = asarray(fill_value).dtype
    return _creation(shape, dtype, fill_value)


empty = zeros


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def copy(a):
    return asarray(a)


def zeros_like(a, dtype=None):
    return zeros(_aval(a).shape, dtype or _aval(a).dtype)


empty_like = zeros_like


def ones_like(a, dtype=None):
    return ones(_aval(a).shape, dtype or _aval(a).dtype)


def full_like(a, fill_value, dtype=None):
    return full(_aval(a).shape, fill_value, dtype or _aval(a).dtype)


def _arange_dtype(bounds):
    """JAX's result_type of arange's bounds: the strong dtypes of numpy or jax
    values promoted together, a Python float making an integer result float."""
    strong = [_np.dtype(dtypes.canonicalize(v.dtype)) for v in bounds if hasattr(v, 'dtype')]
    has_float = builtins.any(isinstance(v, float) for v in bounds)
    if not strong:
        return dtypes.default_float() if has_float else dtypes.default_int()
    dt = dtypes.canonicalize(_np.result_type(*strong))
    return dtypes.default_float() if has_float and not dtypes.is_float(dt) else dt


def arange(start, stop=None, step=None, dtype=None):
    """As JAX: an iota equation for arange(n) and arange(0, n), so a traced
    program makes it on the device; other bounds give a constant."""
    for name, v in (('stop' if stop is None and step is None else 'start', start), ('stop', stop), ('step', step)):
        if _is_tracer(v):
            raise core._concretization_error(
                v, __import__('jax').errors.ConcretizationTypeError,
                f'jax.numpy.arange needs concrete bounds: got a traced value.\nIt arose in the jnp.arange argument '
                f'{name!r}', 'arange')
        if v is not None and _np.ndim(v) != 0:
            raise ValueError(f'jax.numpy.arange: arguments must be scalars; got {name}={v}')
    bounds = [v for v in (start, stop, step) if v is not None]
    dt = dtypes.canonicalize(dtype) if dtype is not None else _arange_dtype(bounds)
    if stop is None and step is None:
        return lax.broadcasted_iota(dt, (int(_np.ceil(start)),), 0)
    if step is None and start == 0:
        return lax.broadcasted_iota(dt, (int(_np.ceil(stop)),), 0)
    host_dt = _np.float32 if dt is dtypes.bfloat16 else dt
    return _from_host(_np.arange(start, stop, step, dtype=host_dt), dt)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """JAX's formula, as equations: start * (1 - i/div) + stop * (i/div), with
    the endpoint appended exactly."""
    num = core.concrete_shape(num)[0] if not isinstance(num, int) else num
    if num < 0:
        raise ValueError(f'Number of samples, {num}, must be non-negative.')
    start, stop = asarray(start), asarray(stop)
    if dtype is None:
        dtype = result_type(start, stop)
        if not dtypes.is_float(dtype):
            dtype = dtypes.default_float()
    dtype = dtypes.canonicalize(dtype)
    computation = dtype if dtypes.is_float(dtype) else dtypes.default_float()
    start, stop = start.astype(computation), stop.astype(computation)
    bounds_shape = list(broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to(start, bounds_shape), broadcast_to(stop, bounds_shape)
    axis = len(bounds_shape) + axis + 1 if axis < 0 else axis
    bounds_shape.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = (stop - start) / asarray(div, dtype=computation)
        iota_shape = [1] * len(bounds_shape)
        iota_shape[axis] = div
        step = reshape(lax.iota(computation, div), iota_shape) / asarray(div, dtype=computation)
        out = reshape(start, bounds_shape) * (1 - step) + reshape(stop, bounds_shape) * step
        if endpoint:
            out = concatenate([out, expand_dims(stop, axis)], axis)
    elif num == 1:
        delta = asarray(_np.nan if endpoint else stop - start, dtype=computation)
        out = reshape(start, bounds_shape)
    else:
        empty_shape = list(start.shape)
        empty_shape.insert(axis, 0)
        delta = full((), _np.nan, computation)
        out = zeros(empty_shape, computation)
    if not dtypes.is_float(dtype):
        out = floor(out)
    out = lax.convert_element_type(out, dtype)
    return (out, delta) if retstep else out


def eye(N, M=None, k=0, dtype=None):
    """As JAX: two iotas compared, so a traced program makes it on the device."""
    dt = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    if _is_tracer(k) or _np.ndim(k) != 0 or not dtypes.issubdtype(_np.asarray(k).dtype, _np.integer):
        raise ValueError(f'k must be a scalar integer; got {k}')
    if core.concrete_shape(N)[0] < 0 or (M is not None and core.concrete_shape(M)[0] < 0):
        raise ValueError(f'negative dimensions are not allowed, got {N} and {M}')
    rows, columns = _row_and_column_iotas(N, M)
    return lax.convert_element_type(equal(rows + _np.int32(k), columns), dt)


def tri(N, M=None, k=0, dtype=None):
    """As JAX's lax._tri: ones where the row index plus k reaches the column's."""
    dt = dtypes.canonicalize(dtype) if dtype is not None else dtypes.float32
    rows, columns = _row_and_column_iotas(N, M)
    return lax.convert_element_type(greater_equal(rows + _np.int32(k), columns), dt)


def _row_and_column_iotas(N, M):
    """Each element's row and column index in an N x M (M None: N x N) grid."""
    n = core.concrete_shape(N)[0]
    m = n if M is None else core.concrete_shape(M)[0]
    return lax.broadcasted_iota(dtypes.int32, (n, m), 0), lax.broadcasted_iota(dtypes.int32, (n, m), 1)


# --- elementwise ------------------------------------------------------------

def _unary(prim, float_only=False):
    def f(x):
        x = _operand(x)
        if float_only and _aval(x).dtype.kind in 'biu':
            x = lax.convert_element_type(x, dtypes.default_float())
        return bind1(prim, x)
    f.__name__ = prim
    return f


def _operand(x):
    if isinstance(x, (Tracer, ArrayImpl)):
        return x
    if isinstance(x, (bool, int, float)):
        return x
    if hasattr(type(x), '__jax_array__'):
        raise core.jax_array_not_converted(x)
    return asarray(x)


negative = _unary('neg')
absolute = abs = _unary('abs')
sign = _unary('sign')
exp = _unary('exp', True)
log = _unary('log', True)
log1p = _unary('log1p', True)
expm1 = _unary('expm1', True)
sqrt = _unary('sqrt', True)
square = _unary('square')
sin = _unary('sin', True)
cos = _unary('cos', True)
tan = _unary('tan', True)
tanh = _unary('tanh', True)
sinh = _unary('sinh', True)
cosh = _unary('cosh', True)
arcsin = _unary('asin', True)
arccos = _unary('acos', True)
arctan = _unary('atan', True)
floor = _unary('floor')
ceil = _unary('ceil')
def _round(a):
    """Halves to even, as numpy (lax.round's TO_NEAREST_EVEN); integers are
    already round."""
    x = _as_array(a)
    return x if _aval(x).dtype.kind in 'biu' else lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals=0):
    if decimals == 0:
        return _round(a)
    x = _as_array(a)
    if _aval(x).dtype.kind in 'biu':
        return x
    scale = 10.0 ** decimals
    return divide(_round(multiply(x, scale)), scale)


around = round
rint = _round
def isnan(x):
    """As JAX: x != x (true only for NaN; never for integers)."""
    x = _as_array(x)
    return bind1('ne', x, x)


isinf = _unary('is_inf')
isfinite = _unary('is_finite')
logical_not = _unary('not')
reciprocal = _unary('reciprocal', True)
fabs = absolute
bitwise_not = invert = logical_not


def positive(x):
    return _as_array(x)


def _via_float64(f):
    """log2/log10/exp2 as log/exp scaled in float64, so exact powers stay exact
    (log2(8) is 3.0), then back to the input's float type."""
    def g(x):
        x = _as_array(x)
        dt = _aval(x).dtype if _aval(x).dtype.kind == 'f' else dtypes.default_float()
        return lax.convert_element_type(f(lax.convert_element_type(x, _np.float64)), dt)
    return g


log2 = _via_float64(lambda x: divide(log(x), _np.float64(math.log(2.0))))
log10 = _via_float64(lambda x: divide(log(x), _np.float64(math.log(10.0))))
exp2 = _via_float64(lambda x: exp(multiply(x, _np.float64(math.log(2.0)))))


def _check_arraylike(name, *args):
    """JAX's check: numpy functions take arrays and scalars, not lists."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise TypeError(f'{name} requires ndarray or scalar arguments, got {type(a)} at position {i}.')


_NUMPY_NAMES = {'sub': 'subtract', 'mul': 'multiply', 'div': 'true_divide', 'rem': 'remainder', 'pow': 'power',
                'max': 'maximum', 'min': 'minimum', 'eq': 'equal', 'ne': 'not_equal', 'lt': 'less',
                'le': 'less_equal', 'gt': 'greater', 'ge': 'greater_equal', 'and': 'bitwise_and',
                'or': 'bitwise_or', 'xor': 'bitwise_xor', 'atan2': 'arctan2', 'floor_div': 'floor_divide'}


@functools.lru_cache(maxsize=None)
def _promoted(a, a_weak, b, b_weak, inexact):
    """(dtype name, weak) two operands promote to (the runtime's lattice);
    `inexact`: ints and bools go to the default float (true_divide)."""
    name, weak = _spmd.promote_types(a, a_weak, b, b_weak)
    if inexact and dtypes.dtype(name).kind in 'biu':
        return dtypes.default_float().name, False
    return name, weak


def _info(x):
    """(dtype name, weak, rank), cheaply: this runs for every binary op."""
    if type(x) is ArrayImpl:
        v = x._value
        return v.dtype, v.weak_type, len(v.shape)
    if isinstance(x, (bool, int, float)):
        dt, weak = dtypes.python_scalar_dtype(x)
        return dt.name, weak, 0
    a = _aval(x)
    return a.dtype.name, a.weak_type, len(a.shape)


def _promote_args(x, y, inexact=False):
    """jnp's promote_args: both operands in the dtype they promote to (a
    Python scalar as a weak literal of it, an array through
    convert_element_type), then a non-scalar of lower rank given leading
    axes of 1 (broadcast_in_dim), as JAX records a binary jnp op.
    `inexact`: ints and bools go to the default float (true_divide)."""
    (dx, wx, rx), (dy, wy, ry) = _info(x), _info(y)
    to, weak = _promoted(dx, wx, dy, wy, inexact)
    if dx != to or wx != weak:
        x = _as_promoted(x, to, weak)
    if dy != to or wy != weak:
        y = _as_promoted(y, to, weak)
    if rx and ry and rx != ry:
        if rx < ry:
            x = _to_rank(x, ry)
        else:
            y = _to_rank(y, rx)
    return x, y


def _as_promoted(x, to, weak):
    if isinstance(x, (bool, int, float)):
        return core.python_scalar(x, to, weak)
    return bind1('convert_element_type', x, new_dtype=to, weak_type=weak)


def _to_rank(x, rank):
    return expand_dims(x, tuple(range(rank - len(_aval(x).shape))))


def _binary(prim, inexact=False):
    name = _NUMPY_NAMES.get(prim, prim)

    def f(x, y):
        _check_arraylike(name, x, y)
        return bind1(prim, *_promote_args(_operand(x), _operand(y), inexact))
    f.__name__ = name
    return f


add = _binary('add')
subtract = _binary('sub')
multiply = _binary('mul')
true_divide = divide = _binary('div', inexact=True)
floor_divide = _binary('floor_div')
remainder = mod = _binary('rem')
_power = _binary('pow')


def power(x, y):
    """jnp.power as JAX's: a concrete integer exponent is lax.integer_pow of
    the base (bools as integers); anything else the pow primitive."""
    if not isinstance(y, Tracer):
        try:
            exponent = operator.index(y)
        except TypeError:
            pass
        else:
            x = _as_array(x)
            if _aval(x).dtype == _np.bool_:
                x = lax.convert_element_type(x, dtypes.default_int())
            return lax.integer_pow(x, exponent)
    return _power(x, y)
maximum = _binary('max')
minimum = _binary('min')
equal = _binary('eq')
not_equal = _binary('ne')
less = _binary('lt')
less_equal = _binary('le')
greater = _binary('gt')
greater_equal = _binary('ge')
logical_and = _binary('and')
logical_or = _binary('or')
logical_xor = _binary('xor')
bitwise_and = _binary('and')
bitwise_or = _binary('or')
bitwise_xor = _binary('xor')
arctan2 = _binary('atan2')
pow = power


def fmax(x, y):
    x, y = _as_array(x), _as_array(y)
    return where(isnan(x), y, where(isnan(y), x, maximum(x, y)))


def fmin(x, y):
    x, y = _as_array(x), _as_array(y)
    return where(isnan(x), y, where(isnan(y), x, minimum(x, y)))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _as_array(a), _as_array(b)
    close = less_equal(abs(subtract(a, b)), add(atol, multiply(rtol, abs(b))))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def where(condition, x=None, y=None):
    if x is None or y is None:
        raise NotImplementedError('jnp.where(condition) with one argument has a data-dependent shape; '
                                  'pass x and y')
    return bind1('select_n', _operand(condition), _operand(y), _operand(x))


def clip(a, a_min=None, a_max=None):
    out = _operand(a)
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


# --- reductions ---------------------------------------------------------------

def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f'axis {a} is out of bounds for array of dimension {ndim}')
        out.append(a % ndim if ndim else a)
    return tuple(out)


def _keep(x, out, axes, keepdims):
    if not keepdims:
        return out
    return expand_dims(out, axes)  # as JAX: lax.expand_dims, one broadcast_in_dim


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


# What a masked-out element (where=False) becomes, so it changes nothing.
_IDENTITY = {'reduce_sum': 0, 'reduce_prod': 1, 'reduce_or': False, 'reduce_and': True}


def _reduction(prim, name, bool_to_int=False):
    def reduce(a, axis, dtype, out, keepdims, initial, where):
        _no_out(name, out)
        x = _operand(a)
        if not isinstance(x, Array):
            x = asarray(x)
        axes = _axes(axis, _aval(x).ndim)
        if dtype is not None:
            x = lax.convert_element_type(x, dtype)
        elif bool_to_int and _aval(x).dtype == _np.bool_:
            x = lax.convert_element_type(x, dtypes.default_int())
        if where is not None:
            if prim not in _IDENTITY and initial is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so to use a where mask "
                                 "one has to specify 'initial'")
            fill = _IDENTITY[prim] if prim in _IDENTITY else initial
            x = lax.select(broadcast_to(asarray(where), _aval(x).shape), x,
                           full(_aval(x).shape, fill, _aval(x).dtype))
        out = _keep(x, bind1(prim, x, axes=axes), axes, keepdims)
        if initial is not None:
            combine = {'reduce_sum': add, 'reduce_prod': multiply, 'reduce_max': maximum, 'reduce_min': minimum,
                       'reduce_or': logical_or, 'reduce_and': logical_and}[prim]
            out = combine(out, asarray(initial, _aval(out).dtype))
        return out

    # numpy's signatures: sum and prod take a dtype, max/min/any/all do not.
    if bool_to_int:
        def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
            return reduce(a, axis, dtype, out, keepdims, initial, where)
    else:
        def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
            return reduce(a, axis, None, out, keepdims, initial, where)
    f.__name__ = name
    return f


sum = _reduction('reduce_sum', 'sum', True)
prod = _reduction('reduce_prod', 'prod', True)
max = amax = _reduction('reduce_max', 'max')
min = amin = _reduction('reduce_min', 'min')
any = _reduction('reduce_or', 'any')
all = _reduction('reduce_and', 'all')


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out('mean', out)
    x = _operand(a)
    if not isinstance(x, Array):
        x = asarray(x)
    axes = _axes(axis, _aval(x).ndim)
    if dtype is not None:
        x = lax.convert_element_type(x, dtype)
    elif _aval(x).dtype.kind in 'biu':
        x = lax.convert_element_type(x, dtypes.default_float())
    if where is not None:
        mask = broadcast_to(asarray(where), _aval(x).shape)
        count = sum(mask, axis=axes, keepdims=keepdims, dtype=_aval(x).dtype)
        return divide(sum(x, axis=axes, keepdims=keepdims, where=mask), count)
    n = 1
    for d in axes:
        n *= _aval(x).shape[d]
    return divide(_keep(x, bind1('reduce_sum', x, axes=axes), axes, keepdims), float(n))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    _no_out('var', out)
    if correction is not None:
        ddof = correction
    x = asarray(a) if not isinstance(a, Array) else a
    if dtype is not None:
        x = lax.convert_element_type(x, dtype)
    m = mean(x, axis, keepdims=True, where=where)
    axes = _axes(axis, _aval(x).ndim)
    centred = square(subtract(x, m))
    if where is not None:
        mask = broadcast_to(asarray(where), _aval(x).shape)
        n = sum(mask, axis=axes, keepdims=keepdims, dtype=_aval(centred).dtype)
        return divide(sum(centred, axis=axes, keepdims=keepdims, where=mask), subtract(n, ddof))
    n = 1
    for d in axes:
        n *= _aval(x).shape[d]
    return _keep(x, divide(sum(centred, axis=axes), float(n - ddof)), axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    _no_out('std', out)
    return sqrt(var(a, axis, dtype, None, ddof, keepdims, where=where, correction=correction))


def _arg(prim):
    def f(a, axis=None, keepdims=False):
        x = _operand(a)
        if axis is None:
            x = ravel(x)
            axis = 0
        axes = _axes(axis, _aval(x).ndim)
        return _keep(x, bind1(prim, x, axes=axes, index_dtype='int32'), axes, keepdims)
    f.__name__ = prim
    return f


argmax = _arg('argmax')
argmin = _arg('argmin')


def ptp(a, axis=None, keepdims=False):
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of the (axis1, axis2) planes, as the last axis (numpy's rule)."""
    a = _as_array(a)
    nd = _aval(a).ndim
    axis1, axis2 = axis1 % nd, axis2 % nd
    rest = [i for i in range(nd) if i not in (axis1, axis2)]
    a = transpose(a, rest + [axis1, axis2])
    n, m = _aval(a).shape[-2:]
    rows = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m))
    if rows == 0:
        return zeros(_aval(a).shape[:-2] + (0,), _aval(a).dtype)
    i = _np.arange(rows) + (0 if offset >= 0 else -offset)
    j = _np.arange(rows) + (offset if offset >= 0 else 0)
    flat = reshape(a, _aval(a).shape[:-2] + (n * m,))
    return take(flat, (i * m + j).astype(_np.int32), axis=-1)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def count_nonzero(a, axis=None, keepdims=False):
    return sum(not_equal(_as_array(a), 0), axis=axis, keepdims=keepdims)


def _cumulative(prim):
    def f(a, axis=None, dtype=None):
        x = _as_array(a)
        if axis is None:
            x, axis = ravel(x), 0
        if dtype is not None:
            x = lax.convert_element_type(x, dtype)
        elif _aval(x).dtype == _np.bool_:
            x = lax.convert_element_type(x, dtypes.default_int())
        return bind1(prim, x, axis=_axes(axis, _aval(x).ndim)[0], reverse=False)
    f.__name__ = prim
    return f


cumsum = _cumulative('cumsum')
cumprod = _cumulative('cumprod')


# --- shapes -------------------------------------------------------------------

def shape(a):
    return _aval(a).shape


def ndim(a):
    return len(_aval(a).shape)


def size(a):
    return _aval(a).size


def reshape(a, newshape, order='C'):
    x = _operand(a)
    if isinstance(newshape, int):
        newshape = (newshape,)
    newshape = [int(d) for d in newshape]
    total = _aval(x).size
    if newshape.count(-1) > 1:
        raise ValueError('can only specify one unknown dimension')
    if -1 in newshape:
        known = 1
        for d in newshape:
            if d != -1:
                known *= d
        if known == 0 or total % known:
            raise TypeError(f'cannot reshape array of shape {_aval(x).shape} (size {total}) into shape '
                            f'{tuple(newshape)}')
        newshape[newshape.index(-1)] = total // known
    return lax.reshape(x, newshape)


def ravel(a):
    return reshape(a, (-1,))


def transpose(a, axes=None):
    x = _operand(a)
    nd = _aval(x).ndim
    perm = tuple(reversed(range(nd))) if axes is None else tuple(int(p) % nd for p in axes)
    return lax.transpose(x, perm)


def swapaxes(a, axis1, axis2):
    nd = _aval(a).ndim
    perm = list(range(nd))
    perm[axis1 % nd], perm[axis2 % nd] = perm[axis2 % nd], perm[axis1 % nd]
    return lax.transpose(a, perm)


def moveaxis(a, source, destination):
    nd = _aval(a).ndim
    perm = [i for i in range(nd) if i != source % nd]
    perm.insert(destination % nd, source % nd)
    return lax.transpose(a, perm)


def expand_dims(a, axis):
    shape = list(_aval(a).shape)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = len(shape) + len(axes)
    new = sorted(x % nd for x in axes)
    for ax in new:
        shape.insert(ax, 1)
    # As lax.expand_dims: a broadcast_in_dim placing the operand's axes around the new ones.
    kept = tuple(d for d in range(nd) if d not in new)
    return lax.broadcast_in_dim(a, shape, kept)


def squeeze(a, axis=None):
    a = _as_array(a)
    shape = _aval(a).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    return lax.squeeze(a, axes)


def iscomplexobj(x):
    """spmdsim has no complex dtypes: only a Python or numpy complex value is one."""
    dt = getattr(x, 'dtype', None)
    if dt is None:
        return isinstance(x, complex) or _np.iscomplexobj(x)
    return getattr(dt, 'kind', '') == 'c'


def real(x):
    """spmdsim's dtypes are all real: the value itself (as an array)."""
    return asarray(x)


def imag(x):
    return zeros_like(x)


def conjugate(x):
    return asarray(x)


conj = conjugate


def isrealobj(x):
    return not iscomplexobj(x)


def broadcast_shapes(*shapes):
    try:
        return tuple(_np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f'Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}') from None


def broadcast_to(a, shape):
    x = _operand(a)
    if not isinstance(x, Array):
        x = asarray(x)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if _aval(x).shape == core.concrete_shape(shape):
        return x  # as JAX: no equation for a shape it already has
    nd = _aval(x).ndim
    return lax.broadcast_in_dim(x, shape, tuple(range(len(shape) - nd, len(shape))))


def concatenate(arrays, axis=0):
    arrays = [_operand(a) for a in arrays]
    arrays = [a if isinstance(a, Array) else asarray(a) for a in arrays]
    return lax.concatenate(arrays, axis % _aval(arrays[0]).ndim if _aval(arrays[0]).ndim else 0)


def stack(arrays, axis=0):
    arrays = [_operand(a) for a in arrays]
    arrays = [a if isinstance(a, Array) else asarray(a) for a in arrays]
    nd = _aval(arrays[0]).ndim + 1
    return concatenate([expand_dims(a, axis % nd) for a in arrays], axis % nd)


def _product_dtype(operands, preferred_element_type):
    """The dtype a product of the operands accumulates in and returns: what
    JAX's jnp.matmul / jnp.dot / jnp.einsum pass dot_general as
    preferred_element_type (the user's, or None)."""
    if preferred_element_type is None:
        return dtypes.result_type(*operands)
    return dtypes.canonicalize(preferred_element_type)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """numpy's matmul as JAX records it: the stacked (batch) axes both
    operands have of one size are dot_general batch axes; the others are free
    axes, and a transpose puts them back in numpy's order."""
    a, b = _as_array(a), _as_array(b)
    for i, x in enumerate((a, b)):
        if _aval(x).ndim < 1:
            raise ValueError(f'matmul input operand {i} must have ndim at least 1, but it has ndim {_aval(x).ndim}')
    dtype = _product_dtype((a, b), preferred_element_type)
    sa, sb = _aval(a).shape, _aval(b).shape
    a_mat, b_mat = len(sa) > 1, len(sb) > 1
    stacked_a, stacked_b = (sa[:-2] if a_mat else ()), (sb[:-2] if b_mat else ())
    n = builtins.max(len(stacked_a), len(stacked_b))
    stacked_a = (None,) * (n - len(stacked_a)) + tuple(stacked_a)
    stacked_b = (None,) * (n - len(stacked_b)) + tuple(stacked_b)
    squeeze_a, squeeze_b, batch_a, batch_b = [], [], [], []
    # Where each result axis comes from, in dot_general's order: batch, a's free, b's free.
    at_batch, at_a, at_b = [], [], []
    for i, (da, db) in enumerate(zip(stacked_a, stacked_b)):
        if da is None:
            at_b.append(i)
        elif db is None:
            at_a.append(i)
        elif da == 1:  # broadcast: a's axis goes, b's is free
            at_b.append(i)
            squeeze_a.append(len(at_batch) + len(at_a) + len(squeeze_a))
        elif db == 1:
            at_a.append(i)
            squeeze_b.append(len(at_batch) + len(at_b) + len(squeeze_b))
        elif da == db:
            batch_a.append(len(at_batch) + len(at_a))
            batch_b.append(len(at_batch) + len(at_b))
            at_batch.append(i)
        else:
            raise ValueError(f'Incompatible shapes for matmul arguments: {sa} and {sb}')
    if a_mat:
        at_a.append(n)
    if b_mat:
        at_b.append(n + a_mat)
    a, b = lax.squeeze(a, squeeze_a), lax.squeeze(b, squeeze_b)
    na, nb = _aval(a).ndim, _aval(b).ndim
    out = lax.dot_general(a, b, (((na - 1,), (nb - 1 - b_mat,)), (tuple(batch_a), tuple(batch_b))),
                          precision=precision, preferred_element_type=dtype)
    out = lax.transpose(out, tuple(int(d) for d in _np.argsort(at_batch + at_a + at_b)))
    return out


def _as_array(x):
    x = _operand(x)
    return x if isinstance(x, Array) else asarray(x)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """numpy's dot: a's last axis with b's only or second-to-last one; the
    result has a's other axes, then b's (no batching, unlike matmul)."""
    a, b = _as_array(a), _as_array(b)
    dtype = _product_dtype((a, b), preferred_element_type)
    na, nb = _aval(a).ndim, _aval(b).ndim
    contract = ((), ()) if na == 0 or nb == 0 else ((na - 1,), (0,) if nb == 1 else (nb - 2,))
    out = lax.dot_general(a, b, (contract, ((), ())), precision=precision, preferred_element_type=dtype)
    return out


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """numpy's tensordot: `axes` an int (the last axes of a with the first of b)
    or a pair of axis sequences; the free axes of a, then those of b."""
    a, b = _as_array(a), _as_array(b)
    na, nb = _aval(a).ndim, _aval(b).ndim
    dtype = _product_dtype((a, b), preferred_element_type)
    if isinstance(axes, int):
        if axes > builtins.min(na, nb):
            raise TypeError(f'Number of tensordot axes (axes {axes}) exceeds input ranks ({na} and {nb})')
        left, right = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        left, right = axes
        left = (left,) if isinstance(left, int) else tuple(left)
        right = (right,) if isinstance(right, int) else tuple(right)
        if len(left) != len(right):
            raise TypeError(f'tensordot requires axes lists to have equal length, got {left} and {right}.')
        left = tuple(int(d) % na for d in left)
        right = tuple(int(d) % nb for d in right)
    out = lax.dot_general(a, b, ((left, right), ((), ())), precision=precision, preferred_element_type=dtype)
    return out


def outer(a, b):
    """As JAX: the raveled operands with a new axis each, multiplied."""
    return multiply(expand_dims(ravel(_as_array(a)), 1), expand_dims(ravel(_as_array(b)), 0))


def inner(a, b, *, precision=None, preferred_element_type=None):
    """numpy's inner: the last axes of both contracted."""
    a, b = _as_array(a), _as_array(b)
    dtype = _product_dtype((a, b), preferred_element_type)
    na, nb = _aval(a).ndim, _aval(b).ndim
    contract = ((), ()) if na == 0 or nb == 0 else ((na - 1,), (nb - 1,))
    out = lax.dot_general(a, b, (contract, ((), ())), precision=precision, preferred_element_type=dtype)
    return out


def vdot(a, b, *, precision=None, preferred_element_type=None):
    return dot(ravel(_as_array(a)), ravel(_as_array(b)), precision=precision,
               preferred_element_type=preferred_element_type)


def astype(x, dtype):
    return lax.convert_element_type(_as_array(x), dtype)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def result_type(*args):
    """The dtype JAX's promotion gives `args` (weak Python scalars included):
    the add kernel's own rule on one-element stand-ins of their dtypes, made
    outside any trace, so a traced function records nothing for it."""
    def stand_in(a):
        if isinstance(a, (type, _np.dtype, str)) or a is dtypes.bfloat16:
            return zeros((), a)
        if isinstance(a, (bool, int, float)):
            return a
        aval = _aval(_as_array(a))
        if aval.weak_type:  # as the Python scalar it came from
            return False if aval.dtype == _np.bool_ else 0 if aval.dtype.kind in 'iu' else 0.0
        return zeros((), aval.dtype)
    with core.no_trace():
        vals = [stand_in(a) for a in args]
        out = _as_array(vals[0])
        for v in vals[1:]:
            out = add(zeros((), out.dtype) if not _aval(out).weak_type else out, v)
        return _aval(out).dtype


def promote_types(a, b):
    return result_type(dtypes.dtype(a), dtypes.dtype(b))


def array_equal(a1, a2):
    if _aval(a1).shape != _aval(a2).shape:
        return False
    return all(equal(a1, a2))


from jax.numpy._manipulation import *  # noqa: E402,F401,F403
from jax.numpy._sorting import *  # noqa: E402,F401,F403
from jax.numpy._einsum import einsum  # noqa: E402,F401
from jax.numpy._vectorize import vectorize  # noqa: E402,F401
from jax.numpy._convolution import convolve, correlate  # noqa: E402,F401
from jax.numpy import linalg  # noqa: E402,F401
from jax.numpy import _methods  # noqa: E402  (installs the array methods and operators)


# The narrow float and int types JAX takes from ml_dtypes (a dependency of
# real JAX, so in any venv with flax): they exist as dtypes, for libraries
# that name them (flax's fp8 layers as default arguments); an spmdsim array of
# one is a clear TypeError. Looked up only when asked for: no import cost.
_ML_DTYPES = ('float8_e4m3fn', 'float8_e5m2', 'float8_e4m3fnuz', 'float8_e5m2fnuz', 'float8_e4m3b11fnuz',
              'float8_e3m4', 'float8_e4m3', 'float8_e8m0fnu', 'float4_e2m1fn', 'int4', 'uint4', 'int2', 'uint2')


def __getattr__(name):
    if name in _ML_DTYPES:
        try:
            import ml_dtypes
        except ImportError:
            raise AttributeError(f"module 'jax.numpy' has no attribute '{name}': it comes from ml_dtypes, which is "
                                 'not installed here (pip install ml_dtypes)') from None
        t = _scalar_type(name, getattr(ml_dtypes, name))
        globals()[name] = t
        return t
    raise AttributeError(f"module 'jax.numpy' has no attribute '{name}'")
