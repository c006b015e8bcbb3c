"""jax.debug: printing values from inside traced functions.

jax.debug.print inside pmap is recorded into the traced program; every device
prints its own values, tagged "[device 3]", in spmdsim's deterministic order
(by collectives completed, then device), whatever the schedule.
"""

import builtins
import string

from jax._src import core, source_info

_formatter = string.Formatter()


def print(fmt, *args, ordered=False, **kwargs):
    if core.current_trace() is None and not any(isinstance(v, core.Tracer) for v in args + tuple(kwargs.values())):
        builtins.print(fmt.format(*args, **kwargs))
        return
    literals, operands, field_args, specs, conversions = [''], [], [], [], []
    auto = 0
    for literal, field, spec, conversion in _formatter.parse(fmt):
        literals[-1] += literal
        if field is None:
            continue
        if field == '' or field[0] in '.[':
            field = str(auto) + field
            auto += 1
        value, _ = _formatter.get_field(field, args, kwargs)
        if '{' in (spec or ''):
            raise NotImplementedError('jax.debug.print: nested fields in a format spec are not supported')
        if isinstance(value, core.Array):
            field_args.append(len(operands))
            operands.append(value)
            specs.append(spec or '')
            conversions.append(conversion or '')
            literals.append('')
        elif any(isinstance(l, core.Array) for l in core.tree_leaves_of(value)):
            raise NotImplementedError(
                f'jax.debug.print: field {{{field}}} is a {type(value).__name__} holding arrays; '
                'print each array as its own field')
        else:
            literals[-1] += format(_formatter.convert_field(value, conversion), spec or '')
    core.bind('debug_print', *operands, literals=tuple(literals), field_args=tuple(field_args),
              field_specs=tuple(specs), field_conversions=tuple(conversions))


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None, **kwargs):
    """Stops every device here; spmd shows each device's arrays among the
    caller's local variables (and prompts on a terminal)."""
    frame = source_info.user_frame(2)
    names, values = [], []
    for name, value in (frame.f_locals.items() if frame is not None else ()):
        if isinstance(value, core.Array):
            names.append(name)
            values.append(value)
    if core.current_trace() is None:
        builtins.print(f'breakpoint at {source_info.describe(source_info.frame_location(frame))}')
        for n, v in zip(names, values):
            builtins.print(f'  {n} = {v}')
        return
    core.bind('debug_breakpoint', *values, names=tuple(names))


def callback(callback, *args, ordered=False, **kwargs):
    raise NotImplementedError('jax.debug.callback runs Python on each device, which spmdsim does not do yet; '
                              'use jax.debug.print')
