"""Autodiff over a traced program: values forward, tangents forward,
cotangents backward, one equation at a time.

Each pass applies the equations' rules (rules.py and its siblings) with
core.bind, so what it computes is itself recorded wherever it runs: eagerly
outside any trace, or into the enclosing pmap's or jit's program, and
differentiable again (a Hessian is a gradient of a gradient). The
equations it records carry the source position of the expression they
differentiate.

A tangent or cotangent of None is a symbolic zero: nothing is computed for
it. Only floating-point values are differentiated; integers and booleans
carry no tangent (JAX's float0).
"""

import numpy as np

from jax._src import core, dtypes, source_info


class Eqn:
    __slots__ = ('primitive', 'inputs', 'outputs', 'params', 'loc')

    def __init__(self, primitive, inputs, outputs, params, loc):
        self.primitive, self.inputs, self.outputs, self.params, self.loc = primitive, inputs, outputs, params, loc


def equations(program):
    return [Eqn(*e) for e in program.equations]


def is_float(aval):
    return dtypes.dtype(aval.dtype).kind == 'f' if hasattr(aval, 'dtype') else False


def var_aval(program, v):
    return core.ShapedArray(*program.var_aval(v))


def is_var(atom):
    return isinstance(atom, int)


def read(env, atom):
    return env[atom] if is_var(atom) else core.ArrayImpl(atom)


def zeros(aval):
    dt = dtypes.dtype(aval.dtype)
    return core.bind1('broadcast_in_dim', np.zeros((), dtype=np.float32 if dt is dtypes.bfloat16 else dt),
                      shape=tuple(aval.shape), broadcast_dimensions=())


def fit(value, aval):
    """`value` (a tangent or cotangent) with `aval`'s dtype."""
    if core.aval_of(value).dtype != aval.dtype:
        return core.bind1('convert_element_type', value, new_dtype=aval.dtype.name, weak_type=False)
    return value


def add_any(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return core.bind1('add', a, b)


# Primitives whose outputs never depend differentiably on their inputs.
NON_DIFFERENTIABLE = {'stop_gradient', 'debug_print', 'debug_callback', 'debug_breakpoint', 'decision', 'axis_index', 'iota',
                      'threefry_split', 'threefry_fold_in', 'threefry_bits', 'random_unit', 'randint_bits',
                      'argmax', 'argmin', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'and', 'or', 'xor', 'not',
                      'is_inf', 'is_finite', 'reduce_or', 'reduce_and', 'floor', 'ceil', 'round', 'sign',
                      'floor_div'}


def eval_program(program, args):
    """Binds the program's equations on `args`; returns (outputs, env)."""
    env = dict(zip(program.inputs, args))
    for eq in equations(program):
        ins = [read(env, a) for a in eq.inputs]
        with source_info.at(eq.loc):
            outs = core.bind(eq.primitive, *ins, **eq.params)
        env.update(zip(eq.outputs, outs))
    return [read(env, a) for a in program.outputs], env


def active_vars(program, active_inputs):
    """The variables whose values depend differentiably on the active inputs."""
    active = {v for v, a in zip(program.inputs, active_inputs) if a and is_float(var_aval(program, v))}
    for eq in equations(program):
        if eq.primitive in NON_DIFFERENTIABLE:
            continue
        if any(is_var(a) and a in active for a in eq.inputs):
            active.update(v for v in eq.outputs if is_float(var_aval(program, v)))
    return active


def backward_pass(program, env, cts_out, active_inputs):
    """Cotangents of the program's inputs (None: zero) given its outputs'."""
    from jax._src.autodiff import rules
    active = active_vars(program, active_inputs)
    ct = {}
    for atom, c in zip(program.outputs, cts_out):
        if c is not None and is_var(atom) and atom in active:
            ct[atom] = add_any(ct.get(atom), c)
    for eq in reversed(equations(program)):
        cts = [ct.pop(v, None) for v in eq.outputs]
        if all(c is None for c in cts):
            continue
        active_in = [is_var(a) and a in active for a in eq.inputs]
        primals_in = [read(env, a) for a in eq.inputs]
        primals_out = [env[v] for v in eq.outputs]
        with source_info.at(eq.loc):
            in_cts = rules.vjp(eq, cts, primals_in, primals_out, active_in)
            for a, c, act in zip(eq.inputs, in_cts, active_in):
                if act and c is not None:
                    ct[a] = add_any(ct.get(a), fit(c, var_aval(program, a)))
    return [ct.get(v) for v in program.inputs]


def forward_tangents(program, env, tangents_in):
    """Tangents of the program's outputs (None: zero) given its inputs'."""
    from jax._src.autodiff import rules
    tan = {v: t for v, t in zip(program.inputs, tangents_in)
           if t is not None and is_float(var_aval(program, v))}
    for eq in equations(program):
        ts = [tan.get(a) if is_var(a) else None for a in eq.inputs]
        if eq.primitive in NON_DIFFERENTIABLE or all(t is None for t in ts):
            continue
        primals_in = [read(env, a) for a in eq.inputs]
        primals_out = [env[v] for v in eq.outputs]
        with source_info.at(eq.loc):
            out_ts = rules.jvp(eq, primals_in, ts, primals_out)
            for v, t in zip(eq.outputs, out_ts):
                aval = var_aval(program, v)
                if t is not None and is_float(aval):
                    tan[v] = fit(t, aval)
    return [tan.get(a) if is_var(a) else None for a in program.outputs]


def vjp_program(program, args, active_inputs=None):
    """(outputs, backward) for a sub-program (a cond branch, a loop body):
    its equations are bound on `args` now, backward(cts_out) gives the
    inputs' cotangents."""
    outs, env = eval_program(program, args)
    active = [True] * len(args) if active_inputs is None else active_inputs
    return outs, lambda cts: backward_pass(program, env, cts, active)


def jvp_program(program, args, tangents):
    outs, env = eval_program(program, args)
    return outs, forward_tangents(program, env, tangents)


def zeros_if_none(values, avals):
    return [zeros(a) if v is None else v for v, a in zip(values, avals)]
