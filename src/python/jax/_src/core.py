"""Tracing: abstract values, tracers, and bind(), the one way every jax
operation reaches a primitive.

Outside any trace, bind() applies the primitive to concrete arrays at once
(eager jnp). Inside one (pmap, jit, a cond branch), it records an equation in
the trace's program, which C++ checks (shapes, dtypes, axis names) and every
device later executes. A tracer used in a nested trace (a cond branch closing
over a value of the enclosing pmap) becomes an input of the nested program.
"""

import threading

import numpy as np

import _spmd
from jax import errors
from jax._src import dtypes, source_info

_spmd._find_numpy_api()  # now, on the importing thread, not where two threads' first arrays could race

_SHORT = {'bfloat16': 'bf16', 'bool': 'bool', 'int32': 'i32', 'int64': 'i64', 'float16': 'f16', 'float32': 'f32', 'float64': 'f64'}


class _Sized:
    """ndim and size from `shape`, for avals and arrays alike."""
    __slots__ = ()

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


class ShapedArray(_Sized):
    """What a tracer knows: shape, dtype, weak type (JAX's ShapedArray)."""
    __slots__ = ('shape', 'dtype', 'weak_type')

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtypes.dtype(dtype)
        self.weak_type = bool(weak_type)

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        """As JAX's: "float32[2,3]" (JAX's error messages), "f32[2,3]" with
        short_dtypes (its jaxprs)."""
        name = _SHORT[self.dtype.name] if short_dtypes else self.dtype.name
        return f"{name}[{','.join(map(str, self.shape))}]"

    def key(self):
        # The dtype itself, not its name: numpy builds dtype.name anew on
        # every read, and pmap compares the arguments' avals on every call.
        return (self.shape, self.dtype, self.weak_type)

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        weak = ', weak_type=True' if self.weak_type else ''
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}]{weak})"


class Array(_Sized):
    """jax.Array: concrete arrays and tracers alike (isinstance checks)."""
    __slots__ = ()
    __array_priority__ = 100

    def __len__(self):
        if not self.shape:
            raise TypeError('len() of unsized object')
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError('iteration over a 0-d array')
        return (self[i] for i in range(self.shape[0]))


class ArrayImpl(Array):
    """A concrete array: host memory outside pmap, a device's inside. Its
    sharding is how jax.device_put laid it out (whole on device 0 unless a
    NamedSharding said otherwise); spmdsim keeps the global value, and the
    sharding says which device holds which block."""
    __slots__ = ('_value', '_sharding')

    def __init__(self, value, sharding=None):
        self._value = value
        self._sharding = sharding

    @property
    def sharding(self):
        from jax._src import sharding
        return self._sharding if self._sharding is not None else sharding.SingleDeviceSharding(0)

    @property
    def addressable_shards(self):
        return self.sharding.shards_of(self)

    def is_fully_replicated(self):
        return self.sharding.is_fully_replicated

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return dtypes.dtype(self._value.dtype)

    @property
    def weak_type(self):
        return self._value.weak_type

    @property
    def aval(self):
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    @property
    def nbytes(self):
        return self._value.nbytes

    def __array__(self, dtype=None, copy=None):
        a = self._value.to_numpy()
        return a if dtype is None else a.astype(dtype)

    def __str__(self):
        return self._value.str()

    def __repr__(self):
        return self._value.repr()

    def __format__(self, spec):
        if self.shape == () and spec:
            return format(self.item(), spec)
        return format(str(self), spec)

    def item(self):
        if self.size != 1:
            raise ValueError('can only convert an array of size 1 to a Python scalar')
        return self._value.to_numpy().reshape(()).item()

    def tolist(self):
        return self._value.to_numpy().tolist()

    def __bool__(self):
        if self.size != 1:
            raise ValueError('The truth value of an array with more than one element is ambiguous. '
                             'Use a.any() or a.all()')
        value = bool(self.item())
        if _spmd.in_device():
            # A Python `if` a device decided in eager code (disable_jit): the
            # deadlock report names the first one that differed between devices.
            _spmd.record_decision('if', int(value), source_info.current_location())
        return value

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __index__(self):
        if self.dtype.kind not in 'iub':
            raise TypeError(f'only integer arrays can be used as an index, got {self.dtype.name}')
        return int(self.item())

    def __hash__(self):
        raise TypeError(f"unhashable type: '{ArrayImpl.__module__}.ArrayImpl'")

    def block_until_ready(self):
        return self

    def copy(self):
        return self

    def __reduce__(self):
        return (np.asarray, (self._value.to_numpy(),))


# type(x) prints as in JAX 0.8 (a program or test may print or compare it).
ArrayImpl.__module__ = 'jaxlib._jax'


class Tracer(Array):
    """A value being traced: only its aval is known."""
    __slots__ = ('_trace', '_var', 'aval')

    def __init__(self, trace, var, aval):
        self._trace = trace
        self._var = var
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    weak_type = property(lambda self: self.aval.weak_type)

    def __repr__(self):
        a = self.aval
        return f"Traced<{a.dtype.name}[{','.join(map(str, a.shape))}]>with<DynamicJaxprTrace>"

    __str__ = __repr__

    def __format__(self, spec):
        if spec:
            raise _concretization_error(self, errors.ConcretizationTypeError,
                                        'Abstract tracer value encountered where concrete value is expected: traced '
                                        f'array with shape {self.aval.str_short()}\nThe problem arose with '
                                        f'formatting it with the spec {spec!r}.', 'format')
        return format(repr(self), spec)

    def __bool__(self):
        raise _concretization_error(self, errors.TracerBoolConversionError,
                                    f'Attempted boolean conversion of traced array with shape {self.aval.str_short()}.',
                                    'bool')

    def __int__(self):
        raise _concretization_error(self, errors.ConcretizationTypeError,
                                    'Abstract tracer value encountered where concrete value is expected: traced '
                                    f'array with shape {self.aval.str_short()}\nThe problem arose with the `int` function.',
                                    'int')

    def __float__(self):
        raise _concretization_error(self, errors.ConcretizationTypeError,
                                    'Abstract tracer value encountered where concrete value is expected: traced '
                                    f'array with shape {self.aval.str_short()}\nThe problem arose with the `float` function.',
                                    'float')

    def __index__(self):
        raise _concretization_error(self, errors.TracerIntegerConversionError,
                                    f'The __index__() method was called on traced array with shape {self.aval.str_short()}.',
                                    'index')

    def __array__(self, dtype=None, copy=None):
        raise _concretization_error(self, errors.TracerArrayConversionError,
                                    f'The numpy.ndarray conversion method __array__() was called on traced array with '
                                    f'shape {self.aval.str_short()}.', 'numpy')

    def item(self):
        raise _concretization_error(self, errors.ConcretizationTypeError,
                                    'Abstract tracer value encountered where concrete value is expected: traced '
                                    f'array with shape {self.aval.str_short()}\nThe problem arose with the `item` '
                                    'method.', 'item')

    def tolist(self):
        raise _concretization_error(self, errors.ConcretizationTypeError,
                                    'Abstract tracer value encountered where concrete value is expected: traced '
                                    f'array with shape {self.aval.str_short()}\nThe problem arose with the `tolist` '
                                    'method.', 'tolist')

    def __hash__(self):
        raise TypeError(f'unhashable type: {self!r}')

    def block_until_ready(self):
        return self


def concrete_shape(shape):
    """`shape` (a sequence or one dimension) as a tuple of ints, or JAX's
    TypeError for a traced or impossibly large dimension."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    for d in dims:
        if isinstance(d, Tracer):
            raise _concretization_error(
                d, TypeError, f'Shapes must be 1D sequences of concrete values of integer type, got {shape}.',
                'shape')
    dims = tuple(int(d) for d in dims)
    too_big = [d for d in dims if not -2**63 <= d < 2**63]
    if too_big:
        err = TypeError(f'Shapes must be 1D sequences of concrete values of integer type, got {shape}.')
        err._spmd_hint = (f'the dimension {too_big[0]} does not fit in 64 bits, and no array can be that large; '
                          'check the dimensions (a size in bytes or a power of two where a count was meant?)')
        raise err
    return dims


def _concretization_error(tracer, cls, message, what):
    t = tracer._trace
    if not t.alive:
        return _escaped(tracer)  # a tracer used after its trace ended: JAX's UnexpectedTracerError
    where = f' at {source_info.describe(t.fun_loc)}' if t.fun_loc else ''
    msg = (f'{message}\nThe error occurred while tracing the function {t.fun_name}{where} for {t.purpose}. '
           'This concrete value was not available in Python because it depends on the value of '
           f'{t.argument_of(tracer)}.')
    e = cls(msg)
    if what == 'bool':
        e._spmd_hint = (f'inside {t.purpose}, every device runs one traced program: Python `if`/`while` on a traced '
                        'value cannot branch per device. Use lax.cond / jnp.where / lax.while_loop, or mark the '
                        'argument static')
    elif what == 'numpy':
        e._spmd_hint = 'use jax.numpy (jnp) instead of numpy inside traced functions'
    elif what == 'format':
        e._spmd_hint = ('a format spec needs the value, which each device has only when the program runs: '
                        'jax.debug.print("{x:.2f}", x=x) prints every device\'s value')
    elif what in ('item', 'tolist'):
        e._spmd_hint = (f'.{what}() needs a concrete value, but inside {t.purpose} values are traced; return the '
                        'array and convert it after the pmap, or print it with jax.debug.print')
    elif what == 'shape':
        e._spmd_hint = (f'array shapes must be static inside {t.purpose}: use a Python int, x.shape, or mark the '
                        'argument static')
    else:
        e._spmd_hint = (f'{what}() needs a concrete value, but inside {t.purpose} values are traced; keep Python ints '
                        'for shapes and indices, or mark the argument static')
    return e


# ---------------------------------------------------------------------------
# traces

class _Traces(threading.local):
    """The traces in progress, innermost last: one stack per thread, as JAX
    keeps its trace state, so a thread's pmap is never recorded into another
    thread's trace. (A disable_jit device has a thread state, and a stack, of
    its own.)"""

    def __init__(self):
        self.stack = []


_traces = _Traces()


def current_trace():
    stack = _traces.stack
    return stack[-1] if stack else None


class no_trace:
    """with core.no_trace(): binds run at once on concrete values, whatever
    traces are in progress (dtype rules computed on stand-ins)."""

    def __enter__(self):
        self.saved, _traces.stack = _traces.stack, []
        return self

    def __exit__(self, *exc):
        _traces.stack = self.saved
        return False


class outside:
    """with core.outside(trace): binds go to the context that encloses
    `trace` (the innermost trace), e.g. to compute a differentiated
    function's values where it is called."""

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        stack = _traces.stack
        assert stack and stack[-1] is self.trace
        stack.pop()
        return self

    def __exit__(self, *exc):
        _traces.stack.append(self.trace)
        return False


def bound_axes():
    """[(name, size)] of the pmap axes bound where tracing is now."""
    t = current_trace()
    return list(t.axes) if t else []


class Trace:
    def __init__(self, axes, purpose, fun_name='fun', fun_loc=None):
        self.parent = current_trace()
        self.axes = list(axes)
        self.builder = _spmd.ProgramBuilder(self.axes)
        self.purpose = purpose
        self.fun_name = fun_name
        self.fun_loc = fun_loc
        self.captured = []  # [(outer value, inner tracer)]
        self._captured_ids = {}
        self._arg_names = []  # per input, None for captured values
        self.alive = True

    def new_input(self, aval, name=None):
        var = self.builder.add_input(list(aval.shape), aval.dtype.name, aval.weak_type)
        t = Tracer(self, var, aval)
        self._arg_names.append(name)
        return t

    def argument_of(self, tracer):
        """Which arguments a traced value came from, as JAX's errors say it."""
        if tracer._trace is not self:
            return "the function's arguments"
        names = [self._arg_names[i] for i in self.builder.input_dependencies(tracer._var)]
        names = [n for n in names if n]
        if not names:
            return "the function's arguments"
        if len(names) == 1:
            return f'the argument {names[0]}'
        return 'the arguments ' + ', '.join(names[:-1]) + ' and ' + names[-1]

    def lift(self, x):
        """`x` (a tracer of this trace or of an enclosing one) as a tracer of this trace."""
        if x._trace is self:
            return x
        if not x._trace.alive:
            raise _escaped(x)
        if self.parent is None:
            raise _escaped(x)
        outer = self.parent.lift(x)
        key = id(outer)
        if key not in self._captured_ids:
            inner = self.new_input(outer.aval)
            self._captured_ids[key] = len(self.captured)
            self.captured.append((outer, inner))
        return self.captured[self._captured_ids[key]][1]

    def atom(self, x):
        if isinstance(x, Tracer):
            return self.lift(x)._var
        return to_spmd_array(x)

    def process(self, primitive, args, params, loc):
        """Records `primitive` applied to `args`; returns its output tracers."""
        inputs = [self.atom(a) for a in args]
        outs = self.builder.add_equation(primitive, inputs, params, loc)
        return [Tracer(self, var, ShapedArray(*aval)) for var, aval in outs]

    def __enter__(self):
        _traces.stack.append(self)
        return self

    def __exit__(self, *exc):
        _traces.stack.pop()
        self.alive = False
        return False


def _escaped(tracer):
    t = tracer._trace
    e = errors.UnexpectedTracerError(
        f'Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing for a '
        f'reference to an intermediate value with type {tracer.aval.str_short()} to escape the scope of the '
        f'transformation.\nThe function being traced when the value leaked was {t.fun_name} at '
        f'{source_info.describe(t.fun_loc)} traced for {t.purpose}.')
    e._spmd_hint = ('a traced value was stored outside the function (a global, a list, an attribute) and used '
                    'after its trace ended; return it from the function instead')
    return e


# ---------------------------------------------------------------------------
# values

def _check_int_fits(x, dtype):
    """JAX's OverflowError for a Python int the integer dtype cannot hold."""
    name = dtypes.dtype(dtype).name
    if isinstance(x, int) and not isinstance(x, bool) and name in ('int32', 'int64'):
        info = np.iinfo(name)
        if not info.min <= x <= info.max:
            raise OverflowError(f'Python int {x} too large to convert to {name}')


def python_scalar(x, dtype, weak):
    """A Python scalar as a 0-d array of `dtype` (any of spmdsim's, bfloat16
    included), weakly typed or not: a literal when a trace reads it."""
    _check_int_fits(x, dtype)
    return ArrayImpl(_spmd.Array.scalar(x, dtypes.dtype(dtype).name, weak))


def to_spmd_array(x, dtype=None):
    """A concrete value as an _spmd.Array (Python scalars weakly typed)."""
    if isinstance(x, ArrayImpl):
        v = x._value
        if dtype is not None and dtypes.dtype(dtype) != x.dtype:
            return _spmd.Array.from_numpy(x._value.to_numpy().astype(dtypes.canonicalize(dtype)))
        return v
    if isinstance(x, Tracer):
        raise _escaped(x)
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic) and dtype is None:
        dt, weak = dtypes.python_scalar_dtype(x)
        _check_int_fits(x, dt)
        return _spmd.Array.from_numpy(np.asarray(x, dtype=dt), weak)
    if isinstance(x, (list, tuple)) and dtype is None:
        return to_spmd_array(_array_from_sequence(x))
    if hasattr(type(x), '__jax_array__'):
        raise jax_array_not_converted(x)
    a = np.asarray(x)  # an error raised by the value's own __array__ is the program's: it propagates
    if a.dtype == object:
        raise TypeError(f'Value {x!r} of type {type(x).__name__} is not a valid JAX type')
    return _spmd.Array.from_numpy(a.astype(dtypes.canonicalize(dtype if dtype is not None else a.dtype), copy=False))


def jax_array_not_converted(x):
    """JAX's error (since 0.7) for an object with __jax_array__ used where an
    array is expected: only jnp.asarray / jnp.array call that method."""
    e = ValueError('Triggering __jax_array__() during abstractification is no longer supported. To avoid this '
                   'error, either explicitly convert your object using jax.numpy.array(), or register your '
                   'object as a pytree.')
    e._spmd_hint = (f'the value is a {type(x).__name__}: pass jnp.asarray(value) instead, which calls its '
                    '__jax_array__')
    return e


def _array_from_sequence(xs):
    import jax.numpy as jnp
    return jnp.asarray(xs)


def aval_of(x):
    if isinstance(x, (Tracer, ArrayImpl)):
        return x.aval
    v = to_spmd_array(x)
    return ShapedArray(v.shape, v.dtype, v.weak_type)


def tree_leaves_of(x):
    from jax._src import tree_util
    return tree_util.tree_leaves(x)


def is_concrete(x):
    return not isinstance(x, Tracer)


# > 0 inside `with jax.ensure_compile_time_eval():`: operations on concrete
# values compute at once even inside a trace, as in JAX.
compile_time_eval = [0]


def bind(primitive, *args, **params):
    """Applies `primitive` (eagerly, or recorded in the current trace) and
    returns the list of its outputs."""
    trace = current_trace()
    if trace is None or (compile_time_eval[0] and not any(isinstance(a, Tracer) for a in args)):
        outs = _spmd.apply_primitive(primitive, [to_spmd_array(a) for a in args], params,
                                     source_info.current_location())
        return [ArrayImpl(o) for o in outs]
    return trace.process(primitive, args, params, source_info.current_location())


def bind1(primitive, *args, **params):
    return bind(primitive, *args, **params)[0]


def trace_function(fun, in_avals, purpose, arg_names=None, axes=None, info_from=None):
    """Traces `fun` on abstract inputs. Returns (program, outputs tree def,
    captured outer values): the program's inputs are in_avals followed by one
    per captured value, which the caller passes when it runs the program.
    `info_from` is the user's function that `fun` wraps, named in errors."""
    from jax._src import tree_util
    user_fun = info_from or fun
    name = getattr(user_fun, '__name__', 'fun')
    code = getattr(user_fun, '__code__', None)
    fun_loc = (code.co_filename, code.co_firstlineno, 0) if code is not None else None
    with Trace(bound_axes() if axes is None else axes, purpose, name, fun_loc) as trace:
        ins = [trace.new_input(a, arg_names[i] if arg_names else None) for i, a in enumerate(in_avals)]
        out = fun(*ins)
        leaves, tree = tree_util.tree_flatten(out)
        trace.builder.set_outputs([trace.atom(l) for l in leaves])
        program = trace.builder.finish()
    if info_from is not None:
        from jax._src import side_effects
        side_effects.check_function(user_fun, purpose, {trace})
    return program, tree, [outer for outer, _ in trace.captured]
