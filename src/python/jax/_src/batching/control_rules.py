"""Batching rules of the primitives that hold programs (cond, while, calls,
a pmap) and of the debugging primitives.

A sub-program is batched by tracing a function that runs the batching
interpreter over it, through the same entry points user code takes
(lax's cond and while, core.trace_function), so the rewritten equation is
checked and recorded as any other. Which of its outputs come out batched is
decided before it is traced (batched_outputs), since a cond's branches and a
loop's carry must agree on their types.
"""

import numpy as np

from jax._src import core
from jax._src.batching.interpreter import (batch_program, batched_outputs, bind1, defanalysis, defbatch, materialize,
                                           run_batched, shape_of, with_rank)


# --- cond -----------------------------------------------------------------------------------

def _cond_parts(params, xs):
    """(index, operands, each branch's captured values) of a cond's inputs."""
    slots, counts = params['capture_slots'], params['capture_counts']
    ncaptured = len(set(slots))
    index, operands, captured = xs[0], list(xs[1:len(xs) - ncaptured]), list(xs[len(xs) - ncaptured:])
    per_branch, start = [], 0
    for count in counts:
        per_branch.append([captured[s] for s in slots[start:start + count]])
        start += count
    return index, operands, per_branch


@defanalysis('cond')
def _cond_analysis(params, batched, axis):
    index_b, operands_b, captured_b = _cond_parts(params, batched)
    outs = [batched_outputs(b, operands_b + caps, axis) for b, caps in zip(params['branches'], captured_b)]
    return [index_b or any(flags) for flags in zip(*outs)]


@defbatch('cond')
def _cond(eq, values, batched):
    from jax import lax
    branches = eq.params['branches']
    index, operands, captured = _cond_parts(eq.params, values)
    index_b, operands_b, captured_b = _cond_parts(eq.params, batched)
    if index_b:
        return _cond_as_select(eq, index, operands, operands_b, captured, captured_b)
    want = _cond_analysis(eq.params, batched, eq.axis)

    def branch_fun(k):
        return lambda *ops: run_batched(branches[k], list(ops) + captured[k], operands_b + captured_b[k], eq.axis, want)
    outs = lax._run_branches(eq.params['source'], index, [branch_fun(k) for k in range(len(branches))],
                             operands)
    return list(outs), want


def _cond_as_select(eq, index, operands, operands_b, captured, captured_b):
    """A cond whose index differs between examples: every branch on every
    example, then each example keeps its own branch's results (JAX turns it
    into a select the same way)."""
    branches = eq.params['branches']
    results = [batch_program(b, operands + caps, operands_b + caps_b, eq.axis)
               for b, caps, caps_b in zip(branches, captured, captured_b)]
    last = np.int32(len(branches) - 1)
    index = bind1('max', bind1('min', index, last), np.int32(0))
    outs = []
    for k in range(len(eq.out_avals)):
        cases = [outs_b[0][k] for outs_b in results]
        rank = len(eq.out_avals[k].shape)
        chosen = cases[0]
        for j in range(1, len(cases)):
            pick = with_rank(bind1('eq', index, np.int32(j)), rank)
            chosen = bind1('select_n', pick, chosen, cases[j])
        outs.append(chosen)
    return outs, [True] * len(outs)


# --- while ----------------------------------------------------------------------------------

def _while_parts(params, xs):
    """(cond consts, body consts, carry) of a while's inputs; its programs
    take the carry first, then their consts."""
    nc, nb = params['cond_nconsts'], params['body_nconsts']
    return list(xs[:nc]), list(xs[nc:nc + nb]), list(xs[nc + nb:])


def _carry_batched(params, batched, axis):
    """Which carries are batched on every iteration (a fixed point: a carry
    the body makes batched is batched from the start), and whether the
    condition is."""
    cond_b, body_b, carry_b = _while_parts(params, batched)
    carry_b = list(carry_b)
    while True:
        after = batched_outputs(params['body_jaxpr'], carry_b + body_b, axis)
        widened = [a or b for a, b in zip(carry_b, after)]
        if widened == carry_b:
            break
        carry_b = widened
    pred_b = batched_outputs(params['cond_jaxpr'], carry_b + cond_b, axis)[0]
    # With a condition that differs between examples every carry is batched:
    # an example that is done keeps its carry while the others go on.
    return ([True] * len(carry_b) if pred_b else carry_b), pred_b


@defanalysis('while')
def _while_analysis(params, batched, axis):
    return _carry_batched(params, batched, axis)[0]


@defbatch('while')
def _while(eq, values, batched):
    from jax import lax
    params = eq.params
    cond_consts, body_consts, carry = _while_parts(params, values)
    cond_b, body_b, init_b = _while_parts(params, batched)
    carry_b, pred_b = _carry_batched(params, batched, eq.axis)
    carry = [materialize(c, b, eq.axis) if want else c for c, b, want in zip(carry, init_b, carry_b)]
    cond_prog, body_prog = params['cond_jaxpr'], params['body_jaxpr']

    def pred(state):
        return run_batched(cond_prog, list(state) + cond_consts, carry_b + cond_b, eq.axis, [pred_b])[0]

    def step(state):
        return run_batched(body_prog, list(state) + body_consts, carry_b + body_b, eq.axis, carry_b)
    if not pred_b:
        outs = lax._while(params['source'], pred, step, carry, params.get('trip_count'))
        return list(outs), carry_b

    def any_going(state):
        return bind1('reduce_or', pred(state), axes=(0,))

    def step_going(state):
        going = pred(state)
        new = step(state)
        return [bind1('select_n', with_rank(going, len(shape_of(old)) - 1), old, value)
                for old, value in zip(state, new)]
    outs = lax._while(params['source'], any_going, step_going, carry)
    return list(outs), carry_b


# --- calls: jit, custom_jvp, custom_vjp -----------------------------------------------------

def _program_key(params):
    """Which parameter holds a call's program: a jit's `jaxpr`, a custom call's `call_jaxpr` (JAX's names)."""
    return 'jaxpr' if 'jaxpr' in params else 'call_jaxpr'


@defanalysis('jit', 'custom_jvp_call', 'custom_vjp_call')
def _call_analysis(params, batched, axis):
    return batched_outputs(params[_program_key(params)], batched, axis)


@defbatch('jit')
def _call(eq, values, batched):
    """The called program batched into a new one, called the same way."""
    key = _program_key(eq.params)
    program = eq.params[key]
    want = batched_outputs(program, batched, eq.axis)
    new, _, captured = core.trace_function(lambda *xs: run_batched(program, list(xs), batched, eq.axis, want),
                                           [core.aval_of(v) for v in values], eq.primitive)
    outs = core.bind(eq.primitive, *values, *captured, **{**eq.params, key: new})
    return outs, want


@defbatch('custom_jvp_call', 'custom_vjp_call')
def _custom_call(eq, values, batched):
    """A function with its own derivative, batched with its rules: a
    custom_jvp (custom_vjp) whose function, jvp (fwd and bwd) are the user's
    under vmap, as JAX batches both. A function that closes over a value
    differing between examples keeps its rule, which then sees the batch."""
    from jax._src.autodiff import custom
    call = custom._calls[eq.params['rule']]
    n = call.in_tree.num_leaves
    if any(batched[n:]):
        return _call(eq, values, batched)
    key = (eq.params['rule'], eq.axis.name, eq.axis.size)
    batched_fn = _batched_customs.get(key)
    if batched_fn is None:
        batched_fn = _batched_customs[key] = _batched_custom(eq.primitive, call, eq.axis)
    outs = batched_fn(*[materialize(v, b, eq.axis) for v, b in zip(values[:n], batched[:n])])
    return list(outs), [True] * len(outs)


# One batched function per custom function, axis name and size: a training
# loop that batches eagerly at every step reuses it (custom.py keys its
# records by the function object).
_batched_customs = {}


def _batched_custom(kind, call, axis):
    from jax._src import tree_util
    from jax._src.autodiff import custom
    from jax._src.vmap import vmap

    def batched(f):
        return vmap(f, axis_name=axis.name)

    def fun(*leaves):
        return tree_util.tree_leaves(batched(lambda *p: call.fn.fun(*call.full_args(p)))(*leaves))
    if kind == 'custom_jvp_call':
        wrapper = custom.custom_jvp(fun)

        def jvp(primals, tangents):
            rule = batched(lambda p, t: call.fn.jvp(*call.nondiff, call.diff_args(p), call.diff_args(t)))
            out, tangents_out = rule(list(primals), list(tangents))
            return tree_util.tree_leaves(out), tree_util.tree_leaves(tangents_out)
        wrapper.defjvp(jvp)
        return wrapper
    wrapper = custom.custom_vjp(fun)
    counts = [len(tree_util.tree_leaves(a)) for a in call.diff_args(list(range(call.in_tree.num_leaves)))]

    def fwd(*leaves):
        out, residuals = batched(lambda *p: tuple(call.fn.fwd(*call.full_args(p))))(*leaves)
        return tree_util.tree_leaves(out), residuals

    def bwd(residuals, cts):
        grads = batched(lambda r, c: call.fn.bwd(*call.nondiff, r, call.out_tree.unflatten(c)))(residuals, list(cts))
        flat = []
        for g, count in zip(grads, counts):
            flat += [None] * count if g is None else tree_util.tree_leaves(g)
        return tuple(flat)
    wrapper.defvjp(fwd, bwd)
    return wrapper


# --- a pmap inside vmap ---------------------------------------------------------------------

@defanalysis('xla_pmap')
def _pmap_analysis(params, batched, axis):
    return batched_outputs(params['call_jaxpr'], batched, axis)


@defbatch('xla_pmap')
def _pmap(eq, values, batched):
    """Each device's program batched: a mapped input keeps the examples in
    front of what each device gets, a replicated one hands them to every
    device; a batched output's device axis moves one place right."""
    params = eq.params
    program = params['call_jaxpr']
    want = batched_outputs(program, batched, eq.axis)
    in_axes = tuple(a + 1 if b and a >= 0 else a for a, b in zip(params['in_axes'], batched))
    avals = []
    for v, a in zip(values, in_axes):
        shape = list(shape_of(v))
        if a >= 0:
            del shape[a]
        avals.append(core.ShapedArray(tuple(shape), core.aval_of(v).dtype, core.aval_of(v).weak_type))
    axes = core.bound_axes() + [(params['axis_name'], int(params['axis_size']))]
    new, _, captured = core.trace_function(lambda *xs: run_batched(program, list(xs), batched, eq.axis, want), avals,
                                           'pmap', axes=axes)
    assert not captured
    out_axes = tuple(a + 1 if b and a >= 0 else a for a, b in zip(params['out_axes'], want))
    outs = core.bind('xla_pmap', *values, **{**params, 'call_jaxpr': new, 'in_axes': in_axes, 'out_axes': out_axes})
    return outs, want


# --- debugging: once per example, as JAX unrolls them --------------------------------------

@defbatch('debug_print', 'debug_callback', 'debug_breakpoint')
def _per_example(eq, values, batched):
    for i in range(eq.axis.size):
        example = [bind1('index', v, items=(0, i, 0, 0, 0)) if b else v for v, b in zip(values, batched)]
        core.bind(eq.primitive, *example, **eq.params)
    return [], []
