"""Warnings for Python side effects inside traced functions, which run once
while tracing, not once per device (the debugging guide's side-effect class).

JAX itself says nothing until a leaked tracer is used; spmdsim warns at the
line where it happens: print() of traced values, assignments to globals, and
traced values stored in containers that outlive the trace.
"""

import builtins
import dis
import sys

from jax._src import core, source_info

_warned = set()
# The interpreter outlives each run's jax package: keep the real print once.
_original_print = getattr(builtins, '_spmd_original_print', builtins.print)
builtins._spmd_original_print = _original_print


def warn_once(key, loc, text):
    if (key, loc) in _warned:
        return
    _warned.add((key, loc))
    where = f'{loc[0]}:{loc[1]}: ' if loc else ''
    sys.stderr.write(f'warning: {where}{text}\n')


def _print(*args, **kwargs):
    trace = core.current_trace()
    if trace is not None and kwargs.get('file') in (None, sys.stdout):
        warn_once('print', source_info.current_location(),
                  f'print() inside {_inside(trace.purpose)} runs once while tracing and shows abstract '
                  f'values, not per-{_unit(trace.purpose)} data; use jax.debug.print("{{x}}", x=x) instead')
    return _original_print(*args, **kwargs)


def install():
    builtins.print = _print


def _codes(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, 'co_code'):
            yield from _codes(c)


def _inside(purpose):
    return 'a pmap-ed function' if purpose == 'pmap' else f'a function traced for {purpose}'


def _unit(purpose):
    """What a traced function runs once for: a device, or under vmap an example."""
    return 'example' if purpose == 'vmap' else 'device'


_MUTATORS = {'append': 'appending to', 'extend': 'extending', 'insert': 'inserting into', 'update': 'updating',
             'add': 'adding to', 'pop': 'popping from', 'setdefault': 'setting a default in', 'clear': 'clearing',
             'remove': 'removing from', 'popitem': 'popping from', 'discard': 'discarding from'}


def _outer_value(fun, code, ins):
    """(name, value) when `ins` loads a global or a closed-over variable."""
    if ins.opname in ('LOAD_GLOBAL', 'LOAD_NAME'):
        name = ins.argval
        if name in fun.__globals__:
            return name, fun.__globals__[name]
        return None
    if ins.opname in ('LOAD_DEREF', 'LOAD_CLASSDEREF') and ins.argval in code.co_freevars and code is fun.__code__:
        cell = fun.__closure__[code.co_freevars.index(ins.argval)]
        try:
            return ins.argval, cell.cell_contents
        except ValueError:
            return None
    return None


def _mutations(fun):
    """(line, text) for each statement of `fun` that changes state outside it:
    a global or nonlocal assigned, an outer container mutated, an attribute of
    an outer object set. Read from the bytecode: these run once, while tracing."""
    code = fun.__code__
    found = []
    for c in _codes(code):
        instructions = list(dis.get_instructions(c))
        for k, ins in enumerate(instructions):
            line = ins.positions.lineno if ins.positions and ins.positions.lineno else c.co_firstlineno
            if ins.opname == 'STORE_GLOBAL':
                found.append((c, line, f'assigning to global {ins.argval!r} (defined outside the function)'))
            elif ins.opname == 'STORE_DEREF' and c is code and ins.argval in code.co_freevars:
                found.append((c, line, f'assigning to nonlocal {ins.argval!r}'))
            elif ins.opname in ('LOAD_METHOD', 'LOAD_ATTR') and ins.argval in _MUTATORS and k > 0:
                outer = _outer_value(fun, c, instructions[k - 1])
                if outer and isinstance(outer[1], (list, dict, set)):
                    found.append((c, line, f'{_MUTATORS[ins.argval]} {outer[0]!r} (defined outside the function)',
                                  outer[1]))
            elif ins.opname == 'STORE_SUBSCR' and k >= 2:
                outer = _outer_value(fun, c, instructions[k - 2])
                if outer and isinstance(outer[1], (list, dict)):
                    found.append((c, line, f'assigning to an item of {outer[0]!r} (defined outside the function)'))
            elif ins.opname == 'STORE_ATTR' and k >= 1:
                outer = _outer_value(fun, c, instructions[k - 1])
                if outer and not isinstance(outer[1], type(sys)):
                    found.append((c, line, f'setting attribute {ins.argval!r} of {outer[0]!r}'))
    return found


def _holds_tracer(value, trace_tracers):
    items = value.values() if isinstance(value, dict) else value
    try:
        return any(isinstance(v, core.Tracer) and v._trace in trace_tracers for v in items)
    except TypeError:
        return False


def check_function(fun, purpose, trace_tracers):
    """After tracing `fun`: warn about each statement that changed state
    outside it (once while tracing, not once per device), and about traced
    values left in containers it can reach from outside."""
    code = getattr(fun, '__code__', None)
    if code is None or source_info.is_own_file(code.co_filename):
        return  # spmdsim's own wrappers (checkify's) keep their state on purpose
    warned_containers = set()
    for entry in _mutations(fun):
        c, line, what = entry[:3]
        stores = len(entry) > 3 and _holds_tracer(entry[3], trace_tracers)
        if len(entry) > 3:
            warned_containers.add(id(entry[3]))
        warn_once(('effect', what), (c.co_filename, line, 0),
                  f'side effect inside {_inside(purpose)}: {what} happens once while tracing, not once per '
                  f'{_unit(purpose)}{", and stores a tracer" if stores else ""}; return values from the function instead')
    reachable = {}
    for name in code.co_names:
        if name in fun.__globals__:
            reachable[name] = fun.__globals__[name]
    for name, cell in zip(code.co_freevars, fun.__closure__ or ()):
        try:
            reachable[name] = cell.cell_contents
        except ValueError:
            pass
    for name, value in reachable.items():
        if isinstance(value, (list, dict, set)) and id(value) not in warned_containers and \
                _holds_tracer(value, trace_tracers):
            loc = (code.co_filename, code.co_firstlineno, 0)
            warn_once('leak', loc, f'side effect inside {_inside(purpose)}: {name!r} (defined outside the function) '
                      'now holds a traced value, which is an UnexpectedTracerError when used after the trace; '
                      'return values from the function instead')
