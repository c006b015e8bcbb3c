"""jax.custom_jvp and jax.custom_vjp: functions with their own derivative.

Inside a trace, a call records one custom_jvp_call / custom_vjp_call
equation: its program is the function as written (what every device runs),
its `rule` parameter names the Python rule kept here, which autodiff calls
when it reaches the equation. Outside any trace the function just runs.
"""

import functools
import inspect
import itertools

from jax._src import core, source_info, tree_util
from jax._src.autodiff.engine import is_float, vjp_program, zeros
from jax._src.autodiff.rules import defrules


class _Call:
    """What a rule needs of one call: the function object, the arguments
    that are not differentiated, and the pytree structure of the others."""

    def __init__(self, fn, args, diff_positions, in_tree, out_tree):
        self.fn = fn
        # Only the undifferentiated arguments are kept (rules get the others
        # as primals): a record per traced call stays small.
        self.args = [None if i in diff_positions else a for i, a in enumerate(args)]
        self.diff_positions = diff_positions
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.nondiff = [args[i] for i in fn.nondiff_argnums]

    def full_args(self, diff_leaves):
        values = self.in_tree.unflatten(list(diff_leaves))
        full = list(self.args)
        for i, v in zip(self.diff_positions, values):
            full[i] = v
        return full

    def diff_args(self, diff_leaves):
        return tuple(self.in_tree.unflatten(list(diff_leaves)))


_calls = {}
_ids = itertools.count()
# One record per function, undifferentiated arguments and trees: a training
# loop that differentiates eagerly traces each step again, and must reuse its
# record instead of adding one per step. The record holds the function and
# those arguments, so their ids in the key stay theirs while it lives.
_rule_of = {}


def _positional(fun, args, kwargs):
    if not kwargs:
        return tuple(args)
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args)


def _record(kind, fn, args):
    nondiff = set(fn.nondiff_argnums)
    diff_positions = [i for i in range(len(args)) if i not in nondiff]
    leaves, in_tree = tree_util.tree_flatten(tuple(args[i] for i in diff_positions))

    def flat(*xs):
        full = list(args)
        for i, v in zip(diff_positions, in_tree.unflatten(list(xs))):
            full[i] = v
        return fn.fun(*full)
    program, out_tree, captured = core.trace_function(flat, [core.aval_of(l) for l in leaves], f'jax.{kind}',
                                                      info_from=fn.fun)
    key = (id(fn), tuple(id(args[i]) for i in fn.nondiff_argnums), tuple(diff_positions), in_tree, out_tree)
    rule = _rule_of.get(key)
    if rule is None:
        rule = _rule_of[key] = next(_ids)
        _calls[rule] = _Call(fn, args, diff_positions, in_tree, out_tree)
    outs = core.bind(f'{kind}_call', *leaves, *captured, call_jaxpr=program, rule=rule)
    return out_tree.unflatten(outs)


class custom_jvp:
    def __init__(self, fun, nondiff_argnums=()):
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: a wrapped pmap or jit is an object like this one

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        def jvp(primals, tangents):
            ans = self.fun(*primals)
            out = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                part = rule(t, ans, *primals)
                out = part if out is None else tree_util.tree_map(lambda a, b: a + b, out, part)
            return ans, out
        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        args = _positional(self.fun, args, kwargs)
        if core.current_trace() is None or self.jvp is None:
            return self.fun(*args)
        return _record('custom_jvp', self, args)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


class custom_vjp:
    def __init__(self, fun, nondiff_argnums=()):
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: a wrapped pmap or jit is an object like this one

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        args = _positional(self.fun, args, kwargs)
        if core.current_trace() is None or self.fwd is None:
            return self.fun(*args)
        return _record('custom_vjp', self, args)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


# --- rules ---------------------------------------------------------------------------

def _leaves_and_tangents(call, primals, tangents):
    n = call.in_tree.num_leaves
    leaves = primals[:n]
    ts = [zeros(core.aval_of(l)) if t is None else t for l, t in zip(leaves, tangents[:n])]
    return leaves, ts


def _user_jvp(call, leaves, ts):
    with source_info.at(None):  # the user's rule records its own positions
        out = call.fn.jvp(*call.nondiff, call.diff_args(leaves), call.diff_args(ts))
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError('Custom JVP rule must produce a pair (list or tuple of length two) representing primal and '
                        f'tangent outputs, but got {out!r}.')
    return tree_util.tree_leaves(out[1])


def _custom_jvp_jvp(eq, primals, tangents, outs):
    call = _calls[eq.params['rule']]
    leaves, ts = _leaves_and_tangents(call, primals, tangents)
    return _user_jvp(call, leaves, ts)


def _custom_jvp_vjp(eq, cts, primals, outs, active):
    """The custom JVP is linear in the tangents: its transpose, found by
    reverse mode over the rule's program, is the gradient."""
    call = _calls[eq.params['rule']]
    n = call.in_tree.num_leaves
    leaves = primals[:n]
    floats = [k for k in range(n) if is_float(core.aval_of(leaves[k]))]

    def linear(*ts):
        full = [zeros(core.aval_of(l)) for l in leaves]
        for k, t in zip(floats, ts):
            full[k] = t
        return _user_jvp(call, leaves, full)
    program, _, captured = core.trace_function(linear, [core.aval_of(leaves[k]) for k in floats], 'jax.custom_jvp')
    _, backward = vjp_program(program, [zeros(core.aval_of(leaves[k])) for k in floats] + list(captured),
                              [True] * len(floats) + [False] * len(captured))
    in_cts = backward(list(cts))
    result = [None] * len(primals)
    for k, c in zip(floats, in_cts):
        if active[k]:
            result[k] = c
    return result


defrules('custom_jvp_call', _custom_jvp_jvp, _custom_jvp_vjp)


def _custom_vjp_jvp(eq, primals, tangents, outs):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_vjp_vjp(eq, cts, primals, outs, active):
    call = _calls[eq.params['rule']]
    n = call.in_tree.num_leaves
    leaves = primals[:n]
    fn = call.fn
    with source_info.at(None):
        result = fn.fwd(*call.full_args(leaves))
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError('Custom VJP fwd rule must produce a pair (list or tuple of length two) where the first '
                            'element represents the primal output (equal to the output of the custom_vjp-decorated '
                            f'function) and the second element represents residuals, but got {result!r}.')
        residuals = result[1]
        ct_tree = call.out_tree.unflatten([zeros(core.aval_of(o)) if c is None else c for c, o in zip(cts, outs)])
        grads = fn.bwd(*call.nondiff, residuals, ct_tree)
    nargs = len(call.diff_positions)
    if not isinstance(grads, (tuple, list)) or len(grads) != nargs:
        raise TypeError('Custom VJP bwd rule must produce an output with the same container (pytree) structure as '
                        'the args tuple of the primal function, and in particular must produce a tuple of length '
                        f'equal to the number of arguments to the primal function, but got bwd output structure '
                        f'{tree_util.tree_structure(grads)} for primal input structure {call.in_tree}.')
    flat = []
    for g, arg in zip(grads, call.diff_args(leaves)):
        count = len(tree_util.tree_leaves(arg))
        flat += [None] * count if g is None else tree_util.tree_leaves(g)
    out = [None] * len(primals)
    for k in range(n):
        if active[k] and flat[k] is not None:
            out[k] = flat[k]
    return out


defrules('custom_vjp_call', _custom_vjp_jvp, _custom_vjp_vjp)
