"""The batching interpreter: a traced program applied to a batch at once.

Each value of the program is either the same for every example (unbatched:
the value as the program has it) or one per example (batched: the examples
stacked along a leading axis 0). An equation whose inputs are all unbatched
and which does not name the vmapped axis is bound as it is; any other is
rewritten by its primitive's rule into equations over the whole batch. The
rules bind with core.bind, so what they produce is recorded wherever vmap
runs: eagerly, or in the enclosing jit's, pmap's or grad's program, and is
differentiable and batchable again.

Keeping the batch axis at 0 (JAX lets it float) costs a transpose where
in_axes or out_axes name another axis, and keeps every rule short.
"""

import numpy as np

from jax._src import core, source_info

_RULES = {}


def defbatch(*names):
    """Registers the decorated function as the batching rule of `names`:
    rule(eq, values, batched) -> (outputs, outputs_batched)."""
    def register(rule):
        for name in names:
            _RULES[name] = rule
        return rule
    return register


class Axis:
    """The vmapped axis: its name (None when anonymous) and size."""
    __slots__ = ('name', 'size', '_uses')

    def __init__(self, name, size):
        self.name, self.size = name, int(size)
        self._uses = {}

    def named_by(self, params):
        """Whether an equation with `params` names this axis, itself or in a
        sub-program (a cond branch, a loop body, a called function)."""
        if self.name is None:
            return False
        if self.name in params.get('axes', ()):
            return True
        return any(self._used_in(p) for p in programs_in(params))

    def _used_in(self, program):
        key = id(program)
        if key not in self._uses:
            self._uses[key] = False  # a program that calls itself does not recurse forever
            self._uses[key] = any(self.named_by(params) for _, _, _, params, _ in program.equations)
        return self._uses[key]


class BatchEqn:
    """What a rule is told about the equation it rewrites."""
    __slots__ = ('primitive', 'params', 'axis', '_program', '_outs')

    def __init__(self, primitive, params, axis, program, outs):
        self.primitive, self.params, self.axis = primitive, params, axis
        self._program, self._outs = program, outs

    @property
    def out_avals(self):
        """The outputs' avals for one example."""
        return [core.ShapedArray(*self._program.var_aval(v)) for v in self._outs]


def is_program(x):
    return hasattr(x, 'equations') and hasattr(x, 'inputs')


def programs_in(params):
    for v in params.values():
        if is_program(v):
            yield v
        elif isinstance(v, tuple):
            yield from (q for q in v if is_program(q))


def batch_program(program, args, batched, axis):
    """The program's outputs over the batch and which are batched, given its
    inputs (batched ones with the examples along axis 0)."""
    env = {v: (a, bool(b)) for v, a, b in zip(program.inputs, args, batched)}

    def read(atom):
        return env[atom] if isinstance(atom, int) else (core.ArrayImpl(atom), False)
    for prim, ins, outs, params, loc in program.equations:
        values, flags = zip(*[read(a) for a in ins]) if ins else ((), ())
        with source_info.at(loc):
            results, out_flags = batch_equation(prim, params, list(values), list(flags), axis, program, outs)
        env.update((v, (r, b)) for v, r, b in zip(outs, results, out_flags))
    results = [read(a) for a in program.outputs]
    return [r for r, _ in results], [b for _, b in results]


def batch_equation(prim, params, values, batched, axis, program, outs):
    if not any(batched) and not axis.named_by(params):
        return core.bind(prim, *values, **params), [False] * len(outs)
    rule = _RULES.get(prim)
    if rule is None:
        err = NotImplementedError(f"Batching rule for '{prim}' not implemented")
        err._spmd_hint = f"spmdsim cannot vmap '{prim}' yet; please report which jax function needed it"
        raise err
    return rule(BatchEqn(prim, params, axis, program, outs), values, batched)


def run_batched(program, args, batched, axis, want):
    """batch_program, with each output batched exactly where `want` says
    (what a rewritten sub-program must return: its signature is fixed
    before it is traced)."""
    outs, flags = batch_program(program, args, batched, axis)
    for b, w in zip(flags, want):
        assert w or not b, 'a batched output where the analysis found none'
    return [materialize(o, b, axis) if w else o for o, b, w in zip(outs, flags, want)]


# --- which outputs a program's batching makes batched ---------------------------------

_UNBATCHING = {'psum', 'pmean', 'pmax', 'pmin', 'all_gather'}  # over the vmapped axis: every example's result alike


def batched_outputs(program, in_batched, axis):
    """Which of the program's outputs come out batched when the inputs
    `in_batched` are (the rules' own decisions, found without binding)."""
    flags = dict(zip(program.inputs, in_batched))

    def of(atom):
        return flags.get(atom, False) if isinstance(atom, int) else False
    for prim, ins, outs, params, _ in program.equations:
        ins_b = [of(a) for a in ins]
        rule = _ANALYSES.get(prim)
        if rule is not None and (any(ins_b) or axis.named_by(params)):
            out_b = rule(params, ins_b, axis)
        elif axis.name is not None and axis.name in params.get('axes', ()):
            out_b = [prim not in _UNBATCHING or 'axis_index_groups' in params] * len(outs)
        else:
            out_b = [any(ins_b)] * len(outs)
        flags.update(zip(outs, out_b))
    return [of(a) for a in program.outputs]


_ANALYSES = {}


def defanalysis(*names):
    """Registers how a primitive with sub-programs decides which outputs are
    batched: analysis(params, in_batched, axis) -> out_batched."""
    def register(analysis):
        for name in names:
            _ANALYSES[name] = analysis
        return analysis
    return register


# --- layout helpers the rules share ------------------------------------------------------

bind1 = core.bind1


def shape_of(x):
    return tuple(core.aval_of(x).shape)


def materialize(x, batched, axis):
    """x batched along axis 0: an unbatched value repeated for every example."""
    if batched:
        return x
    shape = shape_of(x)
    return bind1('broadcast_in_dim', x, shape=(axis.size,) + shape, broadcast_dimensions=tuple(range(1, len(shape) + 1)))


def with_rank(x, rank):
    """A batched x (examples along axis 0) whose example has rank `rank`:
    size-1 axes after the batch axis, so that numpy broadcasting lines its
    example up with the unbatched operands' trailing axes."""
    shape = shape_of(x)
    missing = rank - (len(shape) - 1)
    if missing <= 0:
        return x
    return bind1('reshape', x, new_sizes=shape[:1] + (1,) * missing + shape[1:])


def move_axis(x, source, destination):
    if source == destination:
        return x
    order = list(range(len(shape_of(x))))
    order.insert(destination, order.pop(source))
    return bind1('transpose', x, permutation=tuple(order))


def normalize(axis_index, rank):
    return int(axis_index) % rank if rank else 0


def lane_mask(x_rank, flags):
    """A bool constant (one entry per example) shaped to broadcast against a
    batched value of rank `x_rank` (batch axis included)."""
    return np.asarray(flags, dtype=bool).reshape((len(flags),) + (1,) * (x_rank - 1))
