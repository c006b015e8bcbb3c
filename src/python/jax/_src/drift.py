"""Parameter drift: a value that entered a pmap replicated leaves it
different on each device.

The classic cause is a gradient that was never averaged: every device
updates its copy of the parameters with the gradient of its own shard, and
the copies part. JAX says nothing; the model silently trains on N different
sets of weights. spmdsim finds it in two steps:

  when tracing   which values are device-varying (JAX's shard_map calls this
                 replication checking): a mapped argument varies, psum/pmean/
                 all_gather make a value invariant again, axis_index and
                 ppermute vary. An output that varies and is an elementwise
                 update of a replicated argument of the same shape
                 (p - lr * g) is a candidate, and the equation where the
                 replicated chain met the varying value (the `-`) is named;
  after each run the candidates' values are compared across devices; if they
                 differ, a warning names the output, the devices that
                 disagree, the largest difference and that line.

With `spmd run --strict` (or SPMD_STRICT=1) the warning is an error.
"""

import os
import sys

import numpy as np

import _spmd
from jax._src import core, source_info

# Same-shape elementwise primitives an update of a parameter is made of.
_ELEMENTWISE = {'add', 'sub', 'mul', 'div', 'neg', 'max', 'min', 'pow', 'select_n', 'convert_element_type', 'sqrt',
                'rsqrt', 'exp', 'log', 'abs', 'square', 'sign', 'tanh', 'logistic', 'reciprocal', 'stop_gradient'}
_INVARIANT_COLLECTIVES = {'psum', 'pmean', 'pmax', 'pmin', 'all_gather'}
_VARYING_COLLECTIVES = {'ppermute', 'psum_scatter', 'all_to_all'}
_MAX_DEPTH = 64


class ParameterDriftError(ValueError):
    """A replicated value left a pmap different on each device (--strict)."""


class Candidate:
    __slots__ = ('output', 'input', 'loc')

    def __init__(self, output, input, loc):
        self.output, self.input, self.loc = output, input, loc


def _varying(program, varying_inputs, axis_name):
    varying = {v for v, vary in zip(program.inputs, varying_inputs) if vary}
    producers = {}
    for eq in program.equations:
        name, inputs, outputs, params, loc = eq
        for v in outputs:
            producers[v] = eq
        ours = axis_name in params.get('axes', ()) and 'axis_index_groups' not in params
        if name == 'axis_index' or (name in _VARYING_COLLECTIVES and ours):
            varying.update(outputs)
        elif name in _INVARIANT_COLLECTIVES and ours:
            continue
        elif any(isinstance(a, int) and a in varying for a in inputs):
            varying.update(outputs)
    return varying, producers


def analyze(program, replicated, axis_name):
    """The candidates of `program` (a pmap's) when the inputs at positions
    `replicated` hold the same value on every device."""
    inputs = list(program.inputs)
    varying, producers = _varying(program, [i not in replicated for i in range(len(inputs))], axis_name)
    position = {v: i for i, v in enumerate(inputs)}
    aval = program.var_aval

    def replicated_source(v, shape, depth=0):
        """The replicated input `v` is an invariant elementwise function of."""
        if v in position:
            i = position[v]
            return i if i in replicated and aval(v)[0] == shape else None
        eq = producers.get(v)
        if eq is None or eq[0] not in _ELEMENTWISE or depth > _MAX_DEPTH:
            return None
        for a in eq[1]:
            if isinstance(a, int) and a not in varying and aval(a)[0] == shape:
                found = replicated_source(a, shape, depth + 1)
                if found is not None:
                    return found
        return None

    def combined_at(v, shape, depth=0):
        """(input, loc): where a varying value was combined with a replicated
        parameter on the way to `v`."""
        eq = producers.get(v)
        if eq is None or eq[0] not in _ELEMENTWISE or depth > _MAX_DEPTH:
            return None
        operands = [a for a in eq[1] if isinstance(a, int) and aval(a)[0] == shape]
        for a in operands:
            if a not in varying:
                found = replicated_source(a, shape)
                if found is not None and any(b in varying for b in eq[1] if isinstance(b, int)):
                    return found, eq[4]
        for a in operands:
            if a in varying:
                found = combined_at(a, shape, depth + 1)
                if found is not None:
                    return found
        return None

    out = []
    for k, atom in enumerate(program.outputs):
        if isinstance(atom, int) and atom in varying:
            found = combined_at(atom, aval(atom)[0])
            if found is not None:
                out.append(Candidate(k, found[0], found[1]))
    return out


def _strict():
    return bool(getattr(_spmd, 'strict', False)) or os.environ.get('SPMD_STRICT') == '1'


_warned = set()


class Checker:
    """The drift check of one pmap-ed function."""

    def __init__(self, fun_name, axis_name):
        self.fun_name = fun_name
        self.axis_name = axis_name
        self.cache = {}

    def check(self, program, arrays, in_axes, outs, out_axes, in_names, out_names):
        mapped_outs = [a is not None for a in out_axes]
        if not any(mapped_outs):
            return
        out_shapes = {tuple(o.shape[:a] + o.shape[a + 1:]) for o, a in zip(outs, out_axes) if a is not None}
        replicated = set()
        for i, (x, ax) in enumerate(zip(arrays, in_axes)):
            if ax is None:
                replicated.add(i)
            elif tuple(x.shape[:ax] + x.shape[ax + 1:]) in out_shapes and x.slices_equal(ax):
                replicated.add(i)
        if not replicated:
            return
        key = (id(program), frozenset(replicated))
        entry = self.cache.get(key)
        if entry is None:
            entry = self.cache[key] = (program, analyze(program, replicated, self.axis_name))
        drifted = {}  # the update's location -> [(candidate, per-device values)]
        for c in entry[1]:
            axis = out_axes[c.output]
            if axis is None:
                continue  # pmap's out_axes=None check compares the copies itself
            if not outs[c.output].slices_equal(axis):
                drifted.setdefault(c.loc, []).append((c, np.moveaxis(outs[c.output].to_numpy(), axis, 0)))
        for loc, found in drifted.items():
            self._report(loc, found, in_names, out_names)

    def explain(self, error, program, in_axes, in_names, out_names):
        """Adds to pmap's out_axes=None error (copies of an output differ)
        the update that made them differ, when the analysis finds one."""
        replicated = {i for i, a in enumerate(in_axes) if a is None}
        if not replicated:
            return
        for c in analyze(program, replicated, self.axis_name):
            if f'for {out_names[c.output]} but' in error.message:
                _spmd.add_note(error, f'{out_names[c.output]} is {in_names[c.input]} (replicated) combined with a '
                                      f'device-varying value at {source_info.describe(c.loc)}: parameter drift, as '
                                      'from a gradient that was not averaged over the devices')
                return

    def _report(self, loc, found, in_names, out_names):
        rows = found[0][1]
        groups = []
        for d, r in enumerate(rows):
            for g in groups:
                if np.array_equal(rows[g[0]], r, equal_nan=True):
                    g.append(d)
                    break
            else:
                groups.append([d])
        diff, worst = max((max(float(np.max(np.abs(r.astype(np.float64) - values[0].astype(np.float64))))
                                for r in values[1:]), out_names[c.output]) for c, values in found)
        if len(groups) == len(rows):
            who = f'all {len(rows)} devices hold different values'
        else:
            who = 'the devices hold different values: ' + ' | '.join('{' + ', '.join(map(str, g)) + '}'
                                                                    for g in groups[:8])
            if len(groups) > 8:
                who += f' | ... ({len(groups)} groups)'
        outs = _names([out_names[c.output] for c, _ in found])
        ins = _names([in_names[c.input] for c, _ in found])
        verb = 'differs' if len(found) == 1 else 'differ'
        where = source_info.describe(loc)
        axis = self.axis_name or 'the pmap axis'
        msg = (f'parameter drift: {outs} of {self.fun_name} {verb} between devices although {ins} entered the pmap '
               f'replicated: {who} (largest difference from device 0: {diff:.6g} in {worst}). At {where} the '
               'replicated value is combined with a device-varying one, such as a gradient of each device\'s own '
               'batch.')
        hint = (f"average it over the devices first, e.g. grads = jax.lax.pmean(grads, '{axis}'), so every copy "
                'gets the same update')
        if _strict():
            err = ParameterDriftError(msg)
            err._spmd_hint = hint
            if loc is not None:
                err._spmd_where = loc
            raise err
        key = (self.fun_name, loc)
        if key in _warned:
            return
        _warned.add(key)
        prefix = f'{loc[0]}:{loc[1]}: ' if loc else ''
        sys.stderr.write(f'warning: {prefix}{msg}\n  hint: {hint}\n')


def _names(names):
    if len(names) > 4:
        names = names[:3] + [f'{len(names) - 3} more']
    return names[0] if len(names) == 1 else ', '.join(names[:-1]) + ' and ' + names[-1]
