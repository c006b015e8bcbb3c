"""Differentiation rules of structured control flow and nested pmaps.

A rule here builds new control flow whose branches or bodies differentiate
the original's sub-programs (re-running their forward part: the values
inside a branch or an iteration are recomputed, as jax.checkpoint would):
  cond      the taken branch's tangent or cotangent, chosen by the same index;
  while     forward mode carries tangents beside the values; reverse mode
            needs the trip count known when tracing (fori_loop with static
            bounds, scan): the carries of every iteration are stacked by a
            forward scan, then a reverse scan runs each iteration's backward
            pass, as JAX's scan transpose does. A while_loop, or a fori_loop
            with traced bounds, fails with JAX's error;
  xla_pmap  a pmap of the body's tangent or backward pass over the same axis;
  jit       the called program's tangent or backward pass, inline.
"""

from jax._src import core
from jax._src.autodiff.engine import add_any, eval_program, is_float, jvp_program, vjp_program, zeros
from jax._src.autodiff.rules import defrules


def _aval(x):
    return core.aval_of(x)


def _float_positions(values):
    return [k for k, v in enumerate(values) if is_float(_aval(v))]


def _zeros_for(values, cts, positions):
    return [cts[k] if cts[k] is not None else zeros(_aval(values[k])) for k in positions]


# --- cond --------------------------------------------------------------------------

def _branch_positions(eq, nrest):
    """For each branch, where its program's inputs come from among the cond's
    operands and captures (the cond's inputs after the index)."""
    branches = eq.params['branches']
    counts = eq.params.get('capture_counts', ())
    if not counts:
        return [list(range(nrest)) for _ in branches]
    slots = eq.params['capture_slots']
    nops = len(branches[0].inputs) - counts[0]
    out, first = [], 0
    for b in range(len(branches)):
        out.append(list(range(nops)) + [nops + slots[first + k] for k in range(counts[b])])
        first += counts[b]
    return out


def _run_branches(eq, index, make, operands):
    from jax import lax
    branches = eq.params['branches']
    return lax._run_branches(eq.params.get('source', 'lax.cond'), index, [make(b) for b in range(len(branches))],
                             operands)


def _cond_jvp(eq, primals, tangents, outs):
    index, rest, rest_t = primals[0], primals[1:], tangents[1:]
    positions = _branch_positions(eq, len(rest))
    moving = [k for k, t in enumerate(rest_t) if t is not None]
    float_outs = _float_positions(outs)

    def make(b):
        program, pos = eq.params['branches'][b], positions[b]

        def branch(*xs):
            values, ts = xs[:len(rest)], xs[len(rest):]
            full = [None] * len(rest)
            for k, t in zip(moving, ts):
                full[k] = t
            branch_outs, touts = jvp_program(program, [values[i] for i in pos], [full[i] for i in pos])
            return _zeros_for(branch_outs, touts, float_outs)
        return branch
    touts = _run_branches(eq, index, make, tuple(rest) + tuple(rest_t[k] for k in moving))
    result = [None] * len(outs)
    for k, t in zip(float_outs, touts):
        result[k] = t
    return result


def _cond_vjp(eq, cts, primals, outs, active):
    index, rest, rest_active = primals[0], primals[1:], active[1:]
    positions = _branch_positions(eq, len(rest))
    wanted = [k for k, a in enumerate(rest_active) if a]
    float_outs = _float_positions(outs)
    ct_values = _zeros_for(outs, cts, float_outs)

    def make(b):
        program, pos = eq.params['branches'][b], positions[b]

        def branch(*xs):
            values, cs = xs[:len(rest)], xs[len(rest):]
            _, backward = vjp_program(program, [values[i] for i in pos], [rest_active[i] for i in pos])
            full = [None] * len(outs)
            for k, c in zip(float_outs, cs):
                full[k] = c
            sums = {k: None for k in wanted}
            for i, c in zip(pos, backward(full)):
                if i in sums and c is not None:
                    sums[i] = add_any(sums[i], c)
            return [zeros(_aval(values[k])) if sums[k] is None else sums[k] for k in wanted]
        return branch
    if not wanted:
        return [None] * len(primals)
    in_cts = _run_branches(eq, index, make, tuple(rest) + tuple(ct_values))
    result = [None] * len(primals)
    for k, c in zip(wanted, in_cts):
        result[1 + k] = c
    return result


defrules('cond', _cond_jvp, _cond_vjp)


# --- while ---------------------------------------------------------------------------

def _while_split(eq, values):
    nc, nb = eq.params['cond_nconsts'], eq.params['body_nconsts']
    return values[:nc], values[nc:nc + nb], values[nc + nb:]


def _while_jvp(eq, primals, tangents, outs):
    from jax import lax
    cond_consts, body_consts, init = _while_split(eq, primals)
    _, body_t, init_t = _while_split(eq, tangents)
    cond, body = eq.params['cond_jaxpr'], eq.params['body_jaxpr']
    floats = _float_positions(init)

    def cond_fn(state):
        carry, _ = state
        return eval_program(cond, list(carry) + list(cond_consts))[0][0]

    def body_fn(state):
        carry, tcarry = state
        full = [None] * len(carry)
        for k, t in zip(floats, tcarry):
            full[k] = t
        new, tnew = jvp_program(body, list(carry) + list(body_consts), full + list(body_t))
        return list(new), _zeros_for(new, tnew, floats)
    _, t_final = lax._while(eq.params.get('source', 'lax.while_loop'), cond_fn, body_fn,
                            (list(init), _zeros_for(init, init_t, floats)), eq.params.get('trip_count'))
    result = [None] * len(outs)
    for k, t in zip(floats, t_final):
        result[k] = t
    return result


def _while_vjp(eq, cts, primals, outs, active):
    from jax import lax
    trips = eq.params.get('trip_count')
    if trips is None:
        err = ValueError('Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic '
                         'start/stop values. Try using lax.scan, or using fori_loop with static start/stop.')
        err._spmd_hint = ('reverse mode must know the number of iterations when tracing to keep every '
                          "iteration's values; jax.jvp / jax.jacfwd differentiate a while_loop forward")
        raise err
    nc = eq.params['cond_nconsts']
    _, body_consts, init = _while_split(eq, primals)
    _, body_active, _ = _while_split(eq, active)
    body = eq.params['body_jaxpr']
    floats = _float_positions(init)
    wanted_consts = [k for k, a in enumerate(body_active) if a]
    carry_active = [k in floats for k in range(len(init))]
    consts_active = [k in wanted_consts for k in range(len(body_consts))]

    def forward(carry, _):
        new, _ = eval_program(body, list(carry) + list(body_consts))
        return list(new), list(carry)
    _, stacked = lax.scan(forward, list(init), None, length=trips)

    def backward(acc, carry):
        ct_carry, ct_consts = acc
        _, back = vjp_program(body, list(carry) + list(body_consts), carry_active + consts_active)
        full = [None] * len(init)
        for k, c in zip(floats, ct_carry):
            full[k] = c
        in_cts = back(full)
        new_carry = _zeros_for(init, in_cts[:len(init)], floats)
        new_consts = [add_any(c, in_cts[len(init) + k]) for c, k in zip(ct_consts, wanted_consts)]
        return (new_carry, new_consts), None
    start = (_zeros_for(outs, cts, floats), [zeros(_aval(body_consts[k])) for k in wanted_consts])
    (ct_init, ct_consts), _ = lax.scan(backward, start, stacked, reverse=True)
    result = [None] * len(primals)
    first_carry = nc + len(body_consts)
    for k, c in zip(floats, ct_init):
        if active[first_carry + k]:
            result[first_carry + k] = c
    for k, c in zip(wanted_consts, ct_consts):
        result[nc + k] = c
    return result


defrules('while', _while_jvp, _while_vjp)


# --- nested pmap -------------------------------------------------------------------------

def _pmap_of(eq, fn, in_avals, in_axes, out_axes, operands):
    n, name = eq.params['axis_size'], eq.params['axis_name']
    program, _, captured = core.trace_function(fn, in_avals, 'pmap', axes=core.bound_axes() + [(name, n)])
    assert not captured, 'a differentiated pmap body closes over nothing'
    placed = {'devices': eq.params['devices']} if 'devices' in eq.params else {}
    return core.bind('xla_pmap', *operands, call_jaxpr=program, axis_name=name, axis_size=n, in_axes=tuple(in_axes),
                     out_axes=tuple(out_axes), **placed)


def _pmap_jvp(eq, primals, tangents, outs):
    body = eq.params['call_jaxpr']
    in_axes, out_axes = eq.params['in_axes'], eq.params['out_axes']
    body_in = [core.ShapedArray(*a) for a in body.in_avals]
    body_out = [core.ShapedArray(*a) for a in body.out_avals]
    moving = [k for k, t in enumerate(tangents) if t is not None]
    floats = [k for k, a in enumerate(body_out) if is_float(a)]

    def fn(*xs):
        values, ts = xs[:len(primals)], xs[len(primals):]
        full = [None] * len(primals)
        for k, t in zip(moving, ts):
            full[k] = t
        body_outs, touts = jvp_program(body, list(values), full)
        return _zeros_for(body_outs, touts, floats)
    touts = _pmap_of(eq, fn, body_in + [body_in[k] for k in moving], list(in_axes) + [in_axes[k] for k in moving],
                     [out_axes[k] for k in floats], list(primals) + [tangents[k] for k in moving])
    result = [None] * len(outs)
    for k, t in zip(floats, touts):
        result[k] = t
    return result


def _pmap_vjp(eq, cts, primals, outs, active):
    body = eq.params['call_jaxpr']
    in_axes, out_axes = eq.params['in_axes'], eq.params['out_axes']
    body_in = [core.ShapedArray(*a) for a in body.in_avals]
    body_out = [core.ShapedArray(*a) for a in body.out_avals]
    floats = [k for k, a in enumerate(body_out) if is_float(a)]
    wanted = [k for k, a in enumerate(active) if a]

    def fn(*xs):
        values, cs = xs[:len(primals)], xs[len(primals):]
        _, backward = vjp_program(body, list(values), list(active))
        full = [None] * len(body_out)
        for k, c in zip(floats, cs):
            full[k] = c
        in_cts = backward(full)
        return [zeros(body_in[k]) if in_cts[k] is None else in_cts[k] for k in wanted]
    # An input every device saw whole (in_axes -1) gets each device's
    # cotangent stacked, then summed.
    in_cts = _pmap_of(eq, fn, body_in + [body_out[k] for k in floats],
                      list(in_axes) + [out_axes[k] for k in floats],
                      [in_axes[k] if in_axes[k] >= 0 else 0 for k in wanted],
                      list(primals) + _zeros_for(outs, cts, floats))
    result = [None] * len(primals)
    for k, c in zip(wanted, in_cts):
        result[k] = c if in_axes[k] >= 0 else core.bind1('reduce_sum', c, axes=(0,))
    return result


defrules('xla_pmap', _pmap_jvp, _pmap_vjp)


# --- jit inside a trace -------------------------------------------------------------------

def _jit_jvp(eq, primals, tangents, outs):
    return jvp_program(eq.params['jaxpr'], list(primals), list(tangents))[1]


def _jit_vjp(eq, cts, primals, outs, active):
    _, backward = vjp_program(eq.params['jaxpr'], list(primals), list(active))
    return backward(list(cts))


defrules('jit', _jit_jvp, _jit_vjp)
