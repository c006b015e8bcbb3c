"""jax.vmap: the function traced once on one example, then applied to every
example of the batch ("lane"), with collectives over its axis_name.

The function's Python runs once, as in JAX (its side effects happen once,
a print inside shows tracers). Its program is then interpreted equation by
equation: an equation whose inputs are the same for every lane is bound
once; one that reads a per-lane value is bound once per lane. Each bind
happens wherever vmap was called: eagerly at top level, or recorded into the
enclosing pmap's / jit's / grad's program, so a vmap inside a pmap runs on
every device and is differentiable.

Collectives over the vmapped axis (psum, pmean, pmax, pmin, all_gather,
psum_scatter, all_to_all, ppermute, axis_index) are computed across the
lanes by the interpreter, with JAX's semantics: a reduction or an
all_gather over the vmapped axis is the same for every lane (out_axes=None
may return it), a collective over the vmapped axis and a pmap axis
(psum(x, ('devices', 'batch'))) reduces over both. Control flow whose
branches or body use the vmapped axis runs as JAX batches it: every branch
of a cond on all lanes, then a per-lane select; a while loop until every
lane's condition is false, each lane keeping its last carry once its own
condition is false.
"""

import functools

import numpy as np

from jax._src import api, core, source_info, tree_util

_REDUCE = {'psum': 'reduce_sum', 'pmean': 'reduce_sum', 'pmax': 'reduce_max', 'pmin': 'reduce_min'}
_COLLECTIVES = set(_REDUCE) | {'all_gather', 'psum_scatter', 'all_to_all', 'ppermute', 'axis_index'}
_CALLS = ('pjit', 'custom_jvp_call', 'custom_vjp_call')


class _Lanes:
    """A value that differs between lanes: one value per lane."""
    __slots__ = ('values',)

    def __init__(self, values):
        self.values = list(values)


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    if not callable(fun):
        raise TypeError(f'vmap requires a callable as its first argument, got {fun!r}')
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, tuple, dict))) or isinstance(in_axes, bool):
        raise TypeError('vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional '
                        f'arguments passed to the function, but got {in_axes}.')
    api._check_axes_leaves(in_axes, 'in_axes', 'vmap')
    api._check_axes_leaves(out_axes, 'out_axes', 'vmap')
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(f'vmap axis_name must be a string, got {axis_name!r}')

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            msg = ('vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional '
                   f'arguments passed to the function, but got len(in_axes)={len(in_axes)}, len(args)={len(args)}.')
            if kwargs:
                msg += (f' Note that the function was called with keyword arguments {sorted(kwargs)}, which the '
                        'entries of a tuple in_axes never correspond to: keyword arguments are always mapped along '
                        'their leading axis (axis 0).')
            raise ValueError(msg)
        kw_names = sorted(kwargs)
        leaves, tree = tree_util.tree_flatten(args + tuple(kwargs[k] for k in kw_names))
        axes = tree_util.broadcast_prefix(in_axes, tree_util.tree_structure(args), 'vmap in_axes')
        axes += [0] * (len(leaves) - len(axes))  # keyword arguments: axis 0, as in JAX
        names = api._leaf_names(fun, list(range(len(args))), tree, kw_names)
        avals = [core.aval_of(l) for l in leaves]
        axes = [None if a is None else _normalize_in_axis(a, v, name) for a, v, name in zip(axes, avals, names)]
        n = _mapped_size(fun, avals, axes, names, axis_size)

        lane_avals = []
        for v, a in zip(avals, axes):
            shape = list(v.shape)
            if a is not None:
                del shape[a]
            lane_avals.append(core.ShapedArray(shape, v.dtype, v.weak_type))

        def flat_fun(*xs):
            values = tree.unflatten(list(xs))
            return fun(*values[:len(args)], **dict(zip(kw_names, values[len(args):])))
        bound = core.bound_axes() + ([(axis_name, n)] if axis_name is not None else [])
        program, out_tree, captured = core.trace_function(flat_fun, lane_avals, 'vmap', names, bound, info_from=fun)
        inputs = [leaf if a is None else _Lanes(_index(leaf, a, i) for i in range(n))
                  for leaf, a in zip(leaves, axes)]
        outs = _Interpreter(axis_name, n).run(program, inputs + list(captured))
        flat_out = tree_util.broadcast_prefix(out_axes, out_tree, 'vmap out_axes')
        paths = tree_util.tree_paths(out_tree)
        return out_tree.unflatten([_place(o, a, n, axis_name, path) for o, a, path in zip(outs, flat_out, paths)])
    return batched


def _normalize_in_axis(a, aval, name):
    if not -aval.ndim <= a < aval.ndim:
        raise ValueError(f'vmap was requested to map its argument along axis {a}, which implies that its rank '
                         f'should be at least {max(a + 1, -a)}, but is only {aval.ndim} (its shape is {aval.shape})')
    return a % aval.ndim


def _mapped_size(fun, avals, axes, names, axis_size):
    sizes = [(v.shape[a], a, name, v) for v, a, name in zip(avals, axes, names) if a is not None]
    distinct = {s for s, _, _, _ in sizes} | ({int(axis_size)} if axis_size is not None else set())
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        raise ValueError('vmap must have at least one non-None value in in_axes or axis_size must be specified')
    # JAX's message: the sizes, most common first, with an example of each.
    lines = ['vmap got inconsistent sizes for array axes to be mapped:']
    if axis_size is not None:
        lines.append(f'  * the `axis_size` argument was {axis_size};')
    counts = {}
    for s, a, name, v in sizes:
        counts.setdefault(s, []).append((a, name, v))
    for i, (s, group) in enumerate(sorted(counts.items(), key=lambda kv: -len(kv[1]))):
        a, name, v = group[0]
        where = f'axis {a} of argument {name} of type {v.str_short()}'
        lines.append(f'  * one axis had size {s}: {where};' if len(group) == 1 else
                     f'  * {"most" if i == 0 else "some"} axes ({len(group)} of them) had size {s}, e.g. {where};')
    err = ValueError('\n'.join(lines)[:-1])
    err._spmd_hint = ('every mapped axis must have the same size (the batch); an argument every example shares '
                      'takes in_axes=None')
    raise err


def _index(x, axis, i):
    import jax.numpy as jnp
    return jnp.asarray(x)[(slice(None),) * axis + (i,)]


def _place(value, axis, n, axis_name, path):
    """An output of the program as vmap returns it: lanes stacked along
    out_axes, a value the same for every lane broadcast (or returned once
    for out_axes=None)."""
    import jax.numpy as jnp
    if isinstance(value, _Lanes):
        if axis is None:
            if axis_name is not None:
                raise ValueError(f'vmap has mapped output (axis_name={axis_name}) but out_axes is None')
            raise ValueError(f'at vmap out_axes{path}, got axis spec None but output was batched on axis 0')
        return jnp.stack([jnp.asarray(v) for v in value.values], axis=axis)
    if axis is None:
        return value
    return jnp.stack([jnp.asarray(value)] * n, axis=axis)


def _is_program(x):
    return hasattr(x, 'equations') and hasattr(x, 'inputs')


def _programs_in(params):
    for v in params.values():
        if _is_program(v):
            yield v
        elif isinstance(v, tuple):
            yield from (p for p in v if _is_program(p))


def _uses_axis(program, name, seen=None):
    """Whether a collective anywhere in `program` names the axis."""
    seen = {} if seen is None else seen
    key = id(program)
    if key not in seen:
        seen[key] = False
        seen[key] = any(name in params.get('axes', ()) or any(_uses_axis(p, name, seen) for p in _programs_in(params))
                        for _, _, _, params, _ in program.equations)
    return seen[key]


class _Interpreter:
    def __init__(self, axis_name, n):
        self.name = axis_name
        self.n = n
        self.uses = {}

    def lane(self, v, i):
        return v.values[i] if isinstance(v, _Lanes) else v

    def lanes(self, v):
        return v.values if isinstance(v, _Lanes) else [v] * self.n

    def run(self, program, inputs):
        env = dict(zip(program.inputs, inputs))

        def read(a):
            return env[a] if isinstance(a, int) else core.ArrayImpl(a)
        for prim, ins, outs, params, loc in program.equations:
            values = [read(a) for a in ins]
            with source_info.at(loc):
                results = self.apply(prim, values, params, [core.ShapedArray(*program.var_aval(v)) for v in outs])
            env.update(zip(outs, results))
        return [read(a) for a in program.outputs]

    def apply(self, prim, values, params, out_avals):
        if self.name is not None:
            if prim in _COLLECTIVES and self.name in params.get('axes', ()):
                return [self.collective(prim, values, params, out_avals[0])]
            if any(_uses_axis(p, self.name, self.uses) for p in _programs_in(params)):
                return self.control(prim, values, params)
        if not any(isinstance(v, _Lanes) for v in values):
            return core.bind(prim, *values, **params)
        per_lane = [core.bind(prim, *[self.lane(v, i) for v in values], **params) for i in range(self.n)]
        return [_Lanes(outs[k] for outs in per_lane) for k in range(len(per_lane[0]))]

    # --- collectives over the vmapped axis -------------------------------------------

    def collective(self, prim, values, params, out_aval):
        import jax.numpy as jnp
        from jax import lax
        axes = tuple(params['axes'])
        others = tuple(a for a in axes if a != self.name)
        if 'axis_index_groups' in params:
            raise NotImplementedError(f'{prim} with axis_index_groups over the vmapped axis {self.name!r}: spmdsim '
                                      'supports groups over pmap and mesh axes only')
        if prim == 'axis_index':
            sizes = dict(core.bound_axes())
            result = []
            for i in range(self.n):
                index = np.int32(0)
                for a in axes:
                    mine = np.int32(i) if a == self.name else lax.axis_index(a)
                    index = index * np.int32(self.n if a == self.name else sizes[a]) + mine
                result.append(jnp.asarray(index, dtype=np.int32))
            return _Lanes(result)
        x = values[0]
        if prim in _REDUCE:
            lanes = [core.bind1(prim, v, axes=others) if others else v for v in self.lanes(x)]
            total = core.bind1(_REDUCE[prim], jnp.stack([jnp.asarray(v) for v in lanes]), axes=(0,))
            if prim == 'pmean':
                total = total / self.n
            return _fit(total, out_aval)
        if prim == 'all_gather':
            return self.all_gather(x, axes, others, int(params['axis']), bool(params.get('tiled', False)), out_aval)
        if others:
            raise NotImplementedError(f'{prim} over the axes {axes}, the vmapped axis {self.name!r} with others: '
                                      f'spmdsim runs {prim} over the vmapped axis alone, or over pmap/mesh axes')
        xs = [jnp.asarray(v) for v in self.lanes(x)]
        if prim == 'ppermute':
            flat = params['perm']
            src_of = {int(flat[k + 1]): int(flat[k]) for k in range(0, len(flat), 2)}
            return _Lanes(xs[src_of[i]] if i in src_of else jnp.zeros_like(xs[i]) for i in range(self.n))
        if prim == 'psum_scatter':
            d = int(params['scatter_dimension']) % xs[0].ndim
            total = jnp.sum(jnp.stack(xs), axis=0).astype(xs[0].dtype)
            return _Lanes(self.piece(total, d, i, bool(params.get('tiled', False))) for i in range(self.n))
        if prim == 'all_to_all':
            tiled = bool(params.get('tiled', False))
            split = int(params['split_axis']) % xs[0].ndim
            concat = int(params['concat_axis']) % xs[0].ndim
            out = []
            for j in range(self.n):
                pieces = [self.piece(x_i, split, j, tiled) for x_i in xs]
                out.append(jnp.concatenate(pieces, axis=concat) if tiled else jnp.stack(pieces, axis=concat))
            return _Lanes(out)
        raise NotImplementedError(f'{prim} over the vmapped axis {self.name!r}')

    def piece(self, x, dim, i, tiled):
        """Lane i's part of x along dim: a 1/n chunk (tiled) or index i."""
        if not tiled:
            return x[(slice(None),) * dim + (i,)]
        size = x.shape[dim] // self.n
        return x[(slice(None),) * dim + (slice(i * size, (i + 1) * size),)]

    def all_gather(self, x, axes, others, axis, tiled, out_aval):
        import jax.numpy as jnp
        position = axes.index(self.name)
        if others and 0 < position < len(axes) - 1:
            raise NotImplementedError(f'all_gather over {axes}: spmdsim gathers over the vmapped axis '
                                      f'{self.name!r} when it comes first or last')
        rank = core.aval_of(self.lane(x, 0)).ndim
        axis = axis % (rank + (0 if tiled else 1))
        lanes = [core.bind1('all_gather', v, axes=others, axis=axis, tiled=False) if others else jnp.asarray(v)
                 for v in self.lanes(x)]
        # Untiled: the members along a new dimension at `axis`, in the
        # order of `axes` (row-major over them); tiled merges it into the next.
        stacked = jnp.stack(lanes, axis=axis + 1 if others and position > 0 else axis)
        if others:
            shape = list(stacked.shape)
            shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
            stacked = jnp.reshape(stacked, shape)
        if tiled:
            shape = list(stacked.shape)
            shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
            stacked = jnp.reshape(stacked, shape)
        return _fit(stacked, out_aval)

    # --- control flow that uses the vmapped axis --------------------------------------

    def control(self, prim, values, params):
        if prim in _CALLS:
            return self.run(params['call_jaxpr'], values)
        if prim == 'cond':
            return self.cond(values, params)
        if prim == 'while':
            return self.while_loop(values, params)
        raise NotImplementedError(f'{prim} whose body uses the vmapped axis {self.name!r}: spmdsim runs '
                                  'collectives over a vmapped axis in straight-line code, cond, while and calls')

    def cond(self, values, params):
        """Every branch on every lane, then each lane keeps its own branch's
        results (JAX's batched cond)."""
        branches = params['branches']
        counts, slots = params['capture_counts'], params['capture_slots']
        nb = len(branches)
        first_capture = len(values) - len(set(slots))  # the captures are deduplicated; every one has a slot
        index, operands, captured = values[0], values[1:first_capture], values[first_capture:]
        results, start = [], 0
        for b, count in zip(branches, counts):
            caps = [captured[s] for s in slots[start:start + count]]
            start += count
            results.append(self.run(b, list(operands) + caps))
        outs = []
        for k in range(len(results[0])):
            cases = [r[k] for r in results]
            if not any(isinstance(v, _Lanes) for v in cases + [index]):
                outs.append(core.bind1('select_n', _clamp(index, nb), *cases))
                continue
            outs.append(_Lanes(core.bind1('select_n', _clamp(self.lane(index, i), nb), *[self.lane(c, i) for c in cases])
                               for i in range(self.n)))
        return outs

    def while_loop(self, values, params):
        """Until every lane's condition is false; a lane whose condition is
        false keeps its carry (JAX's batched while)."""
        import jax.numpy as jnp
        from jax import lax
        nc, nb = params['cond_nconsts'], params['body_nconsts']
        cond_consts, body_consts, carry = values[:nc], values[nc:nc + nb], values[nc + nb:]
        cond_prog, body_prog = params['cond_jaxpr'], params['body_jaxpr']

        def unstack(state):
            return [_Lanes(s[i] for i in range(self.n)) for s in state]

        def restack(lanes):
            return [jnp.stack([jnp.asarray(v) for v in self.lanes(x)]) for x in lanes]

        def preds(lanes):
            p, = self.run(cond_prog, list(cond_consts) + lanes)
            return self.lanes(p)

        def go(state):
            return jnp.any(jnp.stack([jnp.asarray(p) for p in preds(unstack(state))]))

        def step(state):
            lanes = unstack(state)
            keep_going = preds(lanes)
            new = self.run(body_prog, list(body_consts) + lanes)
            return [jnp.stack([jnp.where(keep_going[i], jnp.asarray(self.lane(nv, i)), old.values[i])
                               for i in range(self.n)]) for nv, old in zip(new, lanes)]
        final = lax.while_loop(go, step, restack(carry))
        return unstack(final)


def _clamp(index, n):
    return core.bind1('max', core.bind1('min', index, np.int32(n - 1)), np.int32(0))


def _fit(value, aval):
    if core.aval_of(value).dtype != aval.dtype:
        return core.bind1('convert_element_type', value, new_dtype=aval.dtype.name, weak_type=False)
    return value
