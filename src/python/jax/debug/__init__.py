"""jax.debug: printing values from inside traced functions.

jax.debug.print inside pmap is recorded into the traced program; every device
prints its own values, tagged "[device 3]", in spmdsim's deterministic order
(by collectives completed, then device), whatever the schedule.
"""

import builtins
import re
import string

from jax._src import core, source_info

_formatter = string.Formatter()


# As the C++ formatter (util/python_format.h): a wider field is a typo, and
# CPython would try to build it (MemoryError, or a gigabyte printed).
_MAX_WIDTH = 1_000_000
_WIDTHS = re.compile(r'(?:^|[^0-9.])0*([0-9]+)|\.([0-9]+)')


def _check_widths(fmt):
    for _, field, spec, _ in _formatter.parse(fmt):
        if field is None or not spec:
            continue
        for width, precision in _WIDTHS.findall(spec.split('{')[0]):
            n = width or precision
            if len(n) > 7 or int(n) > _MAX_WIDTH:
                what = 'width' if width else 'precision'
                err = ValueError(f"format spec '{spec}': the {what} is larger than {_MAX_WIDTH}")
                err._spmd_hint = ('a printed field this wide is a typo; spmdsim bounds widths and precisions so '
                                  'that one print cannot fill the memory or the disk')
                raise err


def print(fmt, *args, ordered=False, **kwargs):
    _check_widths(fmt)
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
            # A container holding arrays prints as Python prints it: its text
            # around each array's repr, which each device fills in.
            if spec:
                raise TypeError(f'unsupported format string passed to {type(value).__name__}.__format__')
            pieces = _container_pieces(value, conversion)
            for k, piece in enumerate(pieces):
                if k % 2 == 0:
                    literals[-1] += piece
                else:
                    field_args.append(len(operands))
                    operands.append(piece)
                    specs.append('')
                    conversions.append('r')
                    literals.append('')
        else:
            literals[-1] += format(_formatter.convert_field(value, conversion), spec or '')
    core.bind('debug_print', *operands, literals=tuple(literals), field_args=tuple(field_args),
              field_specs=tuple(specs), field_conversions=tuple(conversions))


class _Slot:
    def __init__(self, k):
        self.marker = f'\x00{k}\x00'

    def __repr__(self):
        return self.marker


def _container_pieces(value, conversion):
    """[text, array, text, array, ..., text] of str(value) (repr for !r)."""
    from jax._src import tree_util
    leaves, tree = tree_util.tree_flatten(value)
    arrays = [l for l in leaves if isinstance(l, core.Array)]
    slots, k = [], 0
    for l in leaves:
        if isinstance(l, core.Array):
            slots.append(_Slot(k))
            k += 1
        else:
            slots.append(l)
    text = repr(tree.unflatten(slots)) if conversion == 'r' else str(tree.unflatten(slots))
    pieces = []
    for k, array in enumerate(arrays):
        before, text = text.split(f'\x00{k}\x00', 1)
        pieces += [before, array]
    return pieces + [text]


def visualize_array_sharding(arr, *, use_color=False, scale=1.0, min_width=9, max_width=80):
    """Prints which devices hold which block of a 1-D or 2-D array, as a grid
    (JAX draws it with rich; this is plain text): one cell per block, naming
    its devices ("CPU 0,4" when a block has copies)."""
    shape = tuple(arr.shape)
    if len(shape) not in (1, 2):
        raise ValueError(f'visualize_array_sharding only works for 1D and 2D arrays, got shape {shape}')
    cells = {}
    for shard in arr.sharding.shards_of(arr):
        key = tuple((s.start or 0, s.stop if s.stop is not None else n) for s, n in zip(shard.index, shape))
        cells.setdefault(key, []).append(shard.device.id)
    if len(shape) == 1:  # drawn across, as JAX does
        cells = {(None, k[0]): v for k, v in cells.items()}
    else:
        cells = {(k[0], k[1]): v for k, v in cells.items()}
    rows = sorted({k[0] for k in cells}, key=lambda r: (r is not None, r))
    cols = sorted({k[1] for k in cells})
    label = lambda ids: 'CPU ' + ','.join(map(str, sorted(ids)))
    width = max(min_width, max(len(label(v)) + 2 for v in cells.values()))
    line = lambda left, mid, right: left + mid.join(['─' * width] * len(cols)) + right
    out = [line('┌', '┬', '┐')]
    for i, r in enumerate(rows):
        texts = [label(cells[(r, c)]).center(width) for c in cols]
        out.append('│' + '│'.join(texts) + '│')
        out.append(line('├', '┼', '┤') if i + 1 < len(rows) else line('└', '┴', '┘'))
    builtins.print('\n'.join(out))


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


# jax.debug.callback: the functions traced programs call, by id, with the
# Python values (non-array arguments) fixed when the call was traced.
_callbacks = []


def callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Calls `callback(*args, **kwargs)` with concrete values: at once outside
    any trace; from a traced function (pmap, jit, shard_map), once per device
    with that device's values, on the host after the devices' run (no Python
    runs on a device), in device order. With a deadlock or an error, the calls
    made before it happen before the report. Returns None, as in JAX."""
    from jax._src import tree_util
    if not callable(callback):
        raise TypeError(f'jax.debug.callback requires a callable, got {callback!r}')
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    if core.current_trace() is None and not any(isinstance(l, core.Tracer) for l in leaves):
        callback(*args, **kwargs)
        return None
    arrays = [k for k, l in enumerate(leaves) if isinstance(l, core.Array)]
    fixed = [None if k in arrays else l for k, l in enumerate(leaves)]  # no tracer outlives its trace
    _callbacks.append((callback, tree, fixed, arrays))
    core.bind('debug_callback', *[leaves[k] for k in arrays], callback_id=len(_callbacks) - 1)
    return None


def _call_back(callback_id, device, operands):
    """The host side of one recorded call (see host_callbacks.cc)."""
    fn, tree, leaves, arrays = _callbacks[callback_id]
    values = list(leaves)
    for k, a in zip(arrays, operands):
        values[k] = core.ArrayImpl(a)
    args, kwargs = tree.unflatten(values)
    fn(*args, **kwargs)
