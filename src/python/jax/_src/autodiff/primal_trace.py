"""The trace autodiff records a differentiated function in.

jax.grad / jax.vjp / jax.jvp run the user's function once, as JAX does: each
operation is recorded as an equation of a program (which the backward or
tangent pass then walks) and, at the same time, applied to the primal values
in the enclosing context: eagerly outside any trace, or recorded in the
enclosing pmap's or jit's trace. So Python control flow on values works in
eager grad, exactly where it works in JAX, and inside a pmap it fails with
the pmap's own error.
"""

from jax._src import core


class PrimalTracer(core.Tracer):
    """A value of a differentiated function: its aval, its variable in the
    recorded program, and (through its trace) its primal value."""
    __slots__ = ()

    @property
    def primal(self):
        if not self._trace.alive:
            raise core._escaped(self)
        return self._trace.primals[self._var]

    def __repr__(self):
        a = self.aval
        return f"Traced<{a.dtype.name}[{','.join(map(str, a.shape))}]>with<JVPTrace> with\n  primal = {self.primal!r}"

    __str__ = __repr__

    # Concrete questions are answered by the primal, as JAX's JVPTracer does:
    # a concrete value in eager grad, the enclosing trace's error in a pmap.
    def __bool__(self):
        return bool(self.primal)

    def __int__(self):
        return int(self.primal)

    def __float__(self):
        return float(self.primal)

    def __index__(self):
        return self.primal.__index__()

    def __format__(self, spec):
        return format(self.primal, spec) if spec else format(repr(self), spec)

    def item(self):
        return self.primal.item()

    def tolist(self):
        return self.primal.tolist()


class PrimalTrace(core.Trace):
    def __init__(self, purpose, fun):
        code = getattr(fun, '__code__', None)
        loc = (code.co_filename, code.co_firstlineno, 0) if code is not None else None
        super().__init__(core.bound_axes(), purpose, getattr(fun, '__name__', 'fun'), loc)
        self.primals = {}  # variable -> its value in the enclosing context

    def new_input(self, aval, name=None, primal=None):
        t = super().new_input(aval, name)
        t = PrimalTracer(self, t._var, aval)
        self.primals[t._var] = primal
        return t

    def lift(self, x):
        if x._trace is self:
            return x
        before = len(self.captured)
        t = super().lift(x)
        if len(self.captured) > before:  # a new capture: its primal is the enclosing context's value
            outer, inner = self.captured[-1]
            self.primals[inner._var] = outer
        return t

    def primal_of(self, x):
        if isinstance(x, core.Tracer):
            return self.primals[self.lift(x)._var]
        return x

    def process(self, primitive, args, params, loc):
        inputs = [self.atom(a) for a in args]
        outs = self.builder.add_equation(primitive, inputs, params, loc)
        primal_args = [self.primal_of(a) for a in args]
        with core.outside(self):
            values = core.bind(primitive, *primal_args, **params)
        tracers = []
        for (var, aval), value in zip(outs, values):
            self.primals[var] = value
            tracers.append(PrimalTracer(self, var, core.ShapedArray(*aval)))
        return tracers


class Recorded:
    """A differentiated function, run once: its program (inputs: the primals,
    then the values it captured), every variable's primal value, and its
    outputs."""

    def __init__(self, program, trace, out_tree, out_primals, aux):
        self.program = program
        self.primals = trace.primals
        self.captured = [outer for outer, _ in trace.captured]
        self.out_tree = out_tree
        self.out_primals = out_primals
        self.aux = aux


def record(fun, primals, purpose, has_aux=False, info_from=None):
    """Runs fun(*primals) (flat leaves in, a pytree out, or a pair (out, aux)
    with has_aux) in a PrimalTrace and returns what it recorded."""
    from jax._src import tree_util
    with PrimalTrace(purpose, info_from or fun) as trace:
        ins = [trace.new_input(core.aval_of(p), primal=p) for p in primals]
        result = fun(*ins)
        aux = None
        if has_aux:
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError('has_aux=True requires the function to return a pair (output, auxiliary data), '
                                f'but it returned {tree_util.tree_structure(result)}')
            result, aux = result
        leaves, out_tree = tree_util.tree_flatten(result)
        trace.builder.set_outputs([trace.atom(l) for l in leaves])
        out_primals = [trace.primal_of(l) for l in leaves]
        aux = tree_util.tree_map(lambda l: trace.primal_of(l) if isinstance(l, core.Tracer) else l, aux)
        program = trace.builder.finish()
    return Recorded(program, trace, out_tree, out_primals, aux)
