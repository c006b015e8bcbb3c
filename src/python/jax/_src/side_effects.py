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
                  f'print() inside a function traced for {trace.purpose} runs once while tracing and shows abstract '
                  'values, not per-device data; use jax.debug.print("{x}", x=x) instead')
    return _original_print(*args, **kwargs)


def install():
    builtins.print = _print


def _codes(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, 'co_code'):
            yield from _codes(c)


def check_function(fun, purpose, trace_tracers):
    """After tracing `fun`: warn about globals it assigns and about traced
    values left in containers it can reach from outside."""
    code = getattr(fun, '__code__', None)
    if code is None:
        return
    for c in _codes(code):
        for ins in dis.get_instructions(c):
            if ins.opname == 'STORE_GLOBAL':
                loc = (c.co_filename, ins.positions.lineno or c.co_firstlineno, 0)
                warn_once('global', loc, f'side effect inside a function traced for {purpose}: assigning the global '
                          f'{ins.argval!r} happens once while tracing, not once per device; return the value instead')
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
        if isinstance(value, (list, dict, set, tuple)) and not isinstance(value, str):
            items = value.values() if isinstance(value, dict) else value
            if any(isinstance(v, core.Tracer) and v._trace in trace_tracers for v in items):
                loc = (code.co_filename, code.co_firstlineno, 0)
                warn_once('leak', loc, f'side effect inside a function traced for {purpose}: {name!r} (defined '
                          'outside the function) now holds a traced value, which is an UnexpectedTracerError when '
                          'used after the trace; return values from the function instead')
