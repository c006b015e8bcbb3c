"""jax.shard_map: a function of per-device blocks, run on every device of a
mesh, as JAX's shard_map does.

Each argument is cut into blocks by its PartitionSpec (dimension d split over
the mesh axes the spec names for it; mesh axes it does not name get copies),
the function is traced once on a block's abstract value with every mesh axis
bound (collectives name them: psum(x, 'data'), psum(x, ('data', 'model'))),
every device of the mesh runs the program with its blocks, and out_specs put
the output blocks back together. A mesh runs as nested pmaps, one per mesh
axis (the layout of a mesh), so shard_map works inside jit and grad, and
deadlocks, mismatches and reports are pmap's; devices are labelled by their
mesh coordinates ("device 3 (data=1, model=1)").

The mesh's devices may be in any order: each block runs on the device at
its mesh position. With axis_names= (or the old auto=, its complement) the
function is manual over some mesh axes only: blocks and collectives span
those, and the function sees whole values along the others (the automatic
axes, which XLA would partition without changing the values).

Checks, with JAX's messages: specs naming axes the mesh does not have (or
that are not manual), specs longer than the array's rank, dimensions the mesh
axes do not divide, and out_specs that claim a replication the values do not
have (check_rep / check_vma: statically, from which values vary along which
mesh axis, and at run time, comparing the devices' blocks).
"""

import difflib
import functools
import math

import numpy as np

from jax._src import api, core, drift, sharding, tree_util
from jax._src.sharding import Mesh, NamedSharding, PartitionSpec


def shard_map(f=None, /, mesh=None, in_specs=None, out_specs=None, check_rep=True, auto=frozenset(), *,
              axis_names=frozenset(), check_vma=None):
    """jax.shard_map(f, mesh=..., in_specs=..., out_specs=...), also the
    experimental spelling shard_map(f, mesh, in_specs, out_specs)."""
    if f is None:
        return lambda g: shard_map(g, mesh, in_specs, out_specs, check_rep, auto, axis_names=axis_names,
                                   check_vma=check_vma)
    if not callable(f):
        raise TypeError(f'shard_map requires a callable for its first argument, but got {f!r}')
    if mesh is None:
        if not Mesh._stack:
            raise ValueError('shard_map requires a mesh: pass mesh=jax.make_mesh(...), or call it inside '
                             '`with mesh:`')
        mesh = Mesh._stack[-1]
    if not isinstance(mesh, Mesh):
        raise TypeError(f'shard_map requires a `mesh` argument of type jax.sharding.Mesh, got {type(mesh)}')
    if out_specs is None:
        raise TypeError('shard_map requires out_specs')
    check = check_rep if check_vma is None else check_vma
    return _ShardMapped(f, mesh, _manual_axes(mesh, axis_names, auto), in_specs if in_specs is not None else
                        PartitionSpec(), out_specs, bool(check))


def _manual_axes(mesh, axis_names, auto):
    """The mesh axes the function is manual over (axis_names=; the old
    spelling auto= names the others): all of them by default."""
    for what, names in (('axis_names', axis_names), ('auto', auto)):
        if not isinstance(names, (set, frozenset)):
            raise TypeError(f'`{what}` argument of shard_map should be of type `frozenset` or `set`. Got type: '
                            f'{type(names)}')
    everything = frozenset(mesh.axis_names)
    for name in auto:
        if name not in everything:
            raise ValueError(f'shard_map auto={set(auto)} names {name!r}, which is not an axis of the mesh '
                             f'{mesh.axis_names}')
    manual = frozenset(axis_names) or everything - frozenset(auto)
    if not manual <= everything:
        raise ValueError(f'jax.shard_map requires axis_names={set(manual)} to be a subset of '
                         f'mesh.axis_names={mesh.axis_names}')
    if not manual:
        err = ValueError(f'shard_map with auto={set(auto)} leaves no mesh axis manual: there is nothing to map over')
        err._spmd_hint = 'leave at least one mesh axis out of auto= (or name it in axis_names=)'
        raise err
    return tuple(n for n in mesh.axis_names if n in manual)


def _manual_mesh(mesh, manual):
    """The mesh the manual axes span: along each automatic axis, its first
    devices (the function sees whole values along automatic axes, which the
    compiler would partition; the values are the same)."""
    devices = mesh.devices
    for k in reversed(range(len(mesh.axis_names))):
        if mesh.axis_names[k] not in manual:
            devices = np.take(devices, 0, axis=k)
    return Mesh(devices, manual)


def _is_spec(x):
    return x is None or isinstance(x, PartitionSpec)


def _names(part):
    if part is None:
        return ()
    return tuple(part) if isinstance(part, tuple) else (part,)


class _ShardMapped:
    def __init__(self, fun, mesh, manual, in_specs, out_specs, check):
        self.fun = fun
        # The mesh as given (messages, the outputs' sharding), and the one
        # its manual axes span (blocks, collectives, devices).
        self.full_mesh = mesh
        self.mesh = mesh if manual == mesh.axis_names else _manual_mesh(mesh, manual)
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.check = check
        self.cache = {}
        functools.update_wrapper(self, fun, updated=())

    @property
    def _fname(self):
        return getattr(self.fun, '__name__', 'fun')

    # --- specs ----------------------------------------------------------------

    def _mesh_text(self):
        return (f'The mesh given has shape {tuple(self.full_mesh.axis_sizes)} with corresponding axis names '
                f'{self.full_mesh.axis_names}.')

    def _check_spec(self, spec, rank, what, shape):
        """Each name a mesh axis, used once, and no longer than the rank."""
        seen = set()
        for part in spec:
            for n in _names(part):
                if n not in self.mesh.shape and n in self.full_mesh.shape:
                    prefix = what.split('[')[0]
                    err = ValueError(f'shard_map {prefix} argument must refer to an axis marked as manual '
                                     f'({set(self.mesh.axis_names)}), but:\n\n  {what.split(" ")[0]} refers to '
                                     f'{n!r}\n\nCheck the {prefix} values passed to shard_map.')
                    err._spmd_hint = (f'{n!r} is an automatic axis here (not in axis_names): the function sees '
                                      f'whole values along it; add {n!r} to axis_names to split over it')
                    raise err
                if n not in self.mesh.shape:
                    close = difflib.get_close_matches(n, self.mesh.axis_names, n=1)
                    err = ValueError(f"shard_map applied to the function '{self._fname}' was given {what} "
                                     f"{spec!r}, which names mesh axis {n!r}, but the mesh has no such axis. "
                                     f'{self._mesh_text()}')
                    err._spmd_hint = (f"did you mean {close[0]!r}?" if close else
                                      f'the mesh axes are {", ".join(map(repr, self.mesh.axis_names))}')
                    raise err
                if n in seen:
                    err = ValueError(f"shard_map applied to the function '{self._fname}' was given {what} "
                                     f'{spec!r}, which names mesh axis {n!r} twice; a mesh axis splits at most one '
                                     'dimension')
                    err._spmd_hint = (f"split one dimension over {n!r} and leave the other None, or split a "
                                      f"dimension over several axes with a tuple: P(('{n}', 'other'))")
                    raise err
                seen.add(n)
        if len(spec) > rank:
            err = ValueError(f"shard_map applied to the function '{self._fname}' was given {what} {spec!r} of "
                             f'length {len(spec)}, but the value has rank {rank} (shape {tuple(shape)}): a spec has '
                             'at most one entry per dimension')
            err._spmd_hint = 'drop the trailing entries of the spec, or check that the value has the rank you meant'
            raise err

    def _split_sizes(self, spec):
        return [math.prod(self.mesh.shape[n] for n in _names(part)) for part in spec]

    # --- the call -------------------------------------------------------------

    def __call__(self, *args):
        leaves, tree = tree_util.tree_flatten(args)
        specs = tree_util.broadcast_prefix(self.in_specs, tree, 'shard_map in_specs', is_spec=_is_spec)
        specs = [PartitionSpec() if s is None else s for s in specs]
        names = api._leaf_names(self.fun, list(range(len(args))), tree, [])
        values = [l if isinstance(l, core.Tracer) else core.ArrayImpl(api._pmap_arg(l, n))
                  for l, n in zip(leaves, names)]
        blocks = []
        problems = []
        for k, (v, spec) in enumerate(zip(values, specs)):
            aval = core.aval_of(v)
            shape = tuple(aval.shape)
            self._check_spec(spec, len(shape), f'in_specs[{k}] of value', shape)
            splits = self._split_sizes(spec) + [1] * (len(shape) - len(spec))
            for d, (part, n) in enumerate(zip(spec, splits)):
                if part is not None and shape[d] % n:
                    axes = ', '.join(f"{m!r} (of size {self.mesh.shape[m]})" for m in _names(part))
                    problems.append(f'* args[{k}] of shape {shape}, where args[{k}] is bound to '
                                    f"{self._fname}'s parameter {names[k]!r}, corresponds to in_specs[{k}] of value "
                                    f'{spec!r}, which maps array axis {d} (of size {shape[d]}) to mesh axis {axes}, '
                                    f'but {n} does not evenly divide {shape[d]}')
            blocks.append(core.ShapedArray(tuple(s // n for s, n in zip(shape, splits)), aval.dtype, aval.weak_type))
        if problems:
            err = ValueError(f"shard_map applied to the function '{self._fname}' was given argument arrays with axis "
                             'sizes that are not evenly divisible by the corresponding mesh axis sizes:\n\n'
                             f'{self._mesh_text()}\n\n' + '\n\n'.join(problems) + '\n\nArray arguments\' axis sizes '
                             'must be evenly divisible by the mesh axis or axes indicated by the corresponding '
                             'elements of the argument\'s in_specs entry.')
            err._spmd_hint = ('pad or reshape the array so the mapped dimension is a multiple of the mesh axis '
                              'size, or map it over a smaller mesh axis')
            raise err
        key = (tree, tuple(blocks))
        entry = self.cache.get(key)
        if entry is None:
            entry = self.cache[key] = self._trace(tree, blocks, specs, names)
        program, out_tree, out_specs, paths = entry
        stacked = [self._to_devices(v, spec) for v, spec in zip(values, specs)]
        outs = self._run(program, stacked)
        results = [self._from_devices(o, spec, path) for o, spec, path in zip(outs, out_specs, paths)]
        return out_tree.unflatten(results)

    def _run(self, program, stacked):
        """The program on every device of the mesh: one pmap per mesh axis,
        nested, the outermost first, as a mesh is laid out (a device's id is
        its row-major position). Recorded as xla_pmap equations inside a
        trace, run at once outside any, differentiable either way."""
        axes = list(self.mesh.shape.items())
        n_out = len(program.outputs)
        # The innermost pmap puts each mesh position on its device (the
        # mesh's own order: jax.make_mesh's, or any Mesh(devices, names)).
        ids = list(self.mesh.device_id_list)
        placed = {} if ids == list(range(len(ids))) else {'devices': tuple(ids)}
        body = program
        for depth in range(len(axes) - 1, 0, -1):
            name, size = axes[depth]
            inner = body
            where = placed if depth == len(axes) - 1 else {}

            def step(*xs, inner=inner, name=name, size=size, where=where):
                return core.bind('xla_pmap', *xs, call_jaxpr=inner, axis_name=name, axis_size=size,
                                 in_axes=(0,) * len(xs), out_axes=(0,) * n_out, **where)
            level_avals = [core.ShapedArray(tuple(core.aval_of(x).shape[depth:]), core.aval_of(x).dtype,
                                            core.aval_of(x).weak_type) for x in stacked]
            body, _, captured = core.trace_function(step, level_avals, 'shard_map', axes=axes[:depth])
            if captured:
                raise core._escaped(captured[0])
        name, size = axes[0]
        return core.bind('xla_pmap', *stacked, call_jaxpr=body, axis_name=name, axis_size=size,
                         in_axes=(0,) * len(stacked), out_axes=(0,) * n_out, **(placed if len(axes) == 1 else {}))

    def _trace(self, tree, blocks, specs, names):
        def flat_fun(*flat):
            return self.fun(*tree.unflatten(list(flat)))
        axes = list(self.mesh.shape.items())
        program, out_tree, captured = core.trace_function(flat_fun, blocks, 'shard_map', names, axes,
                                                          info_from=self.fun)
        if captured:
            raise core._escaped(captured[0])
        out_specs = tree_util.broadcast_prefix(self.out_specs, out_tree, 'shard_map out_specs', is_spec=_is_spec)
        out_specs = [PartitionSpec() if s is None else s for s in out_specs]
        paths = ['output' + p for p in tree_util.tree_paths(out_tree)]
        for k, (spec, atom) in enumerate(zip(out_specs, program.outputs)):
            shape = program.var_aval(atom)[0] if isinstance(atom, int) else np.shape(atom)
            self._check_spec(spec, len(shape), f'out_specs[{k}] of value', shape)
        if self.check:
            self._check_replication(program, specs, out_specs, paths)
        return program, out_tree, out_specs, paths

    def _check_replication(self, program, in_specs, out_specs, paths):
        """check_rep / check_vma: an output whose spec leaves out a mesh axis
        must not vary along it (JAX's static replication check)."""
        n_in = len(in_specs)
        for axis in self.mesh.axis_names:
            varying_inputs = [k < n_in and axis in {n for part in in_specs[k] for n in _names(part)}
                              for k in range(len(program.inputs))]
            varying, _ = drift._varying(program, varying_inputs, axis)
            for k, (spec, atom) in enumerate(zip(out_specs, program.outputs)):
                named = {n for part in spec for n in _names(part)}
                if axis in named or not (isinstance(atom, int) and atom in varying):
                    continue
                err = ValueError(
                    f"shard_map applied to the function '{self._fname}' was given out_specs which require "
                    f"replication which can't be statically inferred given the mesh:\n\n{self._mesh_text()}\n\n"
                    f'out_specs[{k}] is {spec!r} which implies that the corresponding output value ({paths[k]}) is '
                    f'replicated across mesh axis {axis!r}, but it varies along that axis.\n\n'
                    'Check if these output values are meant to be replicated over those mesh axes. If not, '
                    'consider revising the corresponding out_specs entries. If so, consider disabling the check '
                    'by passing the check_vma=False argument to `jax.shard_map` (check_rep=False for '
                    'jax.experimental.shard_map).')
                err._spmd_hint = (f'name {axis!r} in out_specs[{k}] to stack the blocks along it, or make the value '
                                  f'the same on every device of the axis first (lax.psum / lax.pmean over '
                                  f'{axis!r}, or lax.all_gather)')
                raise err

    # --- blocks <-> global arrays ----------------------------------------------

    def _to_devices(self, x, spec):
        """x (global) -> (mesh sizes..., block...): device (i, j, ...)'s block.
        jnp operations, so that it traces inside jit and grad."""
        import jax.numpy as jnp
        mesh = self.mesh.shape
        x = jnp.asarray(x)
        shape, labels = [], []
        for d, size in enumerate(x.shape):
            part = spec[d] if d < len(spec) else None
            split = 1
            for n in _names(part):
                shape.append(mesh[n])
                labels.append(('mesh', n))
                split *= mesh[n]
            shape.append(size // split)
            labels.append(('block', d))
        a = jnp.reshape(x, shape)
        for n in mesh:
            if ('mesh', n) not in labels:
                a = jnp.expand_dims(a, 0)
                labels.insert(0, ('mesh', n))
        order = [labels.index(('mesh', n)) for n in mesh] + [labels.index(('block', d)) for d in range(x.ndim)]
        a = jnp.transpose(a, order)
        return jnp.broadcast_to(a, tuple(mesh.values()) + tuple(a.shape[len(mesh):]))

    def _from_devices(self, a, spec, name):
        """(mesh sizes..., block...) -> the global output its spec describes."""
        import jax.numpy as jnp
        mesh = list(self.mesh.shape.items())
        named = {n for part in spec for n in _names(part)}
        # Mesh axes the spec leaves out hold copies: keep one (checked to be
        # copies when the values are known; the static check covers traces).
        for i in reversed(range(len(mesh))):
            axis = mesh[i][0]
            if axis in named:
                continue
            if not isinstance(a, core.Tracer):
                rows = np.moveaxis(np.asarray(a), i, 0)
                for r in range(1, rows.shape[0]):
                    if not np.array_equal(rows[0], rows[r], equal_nan=True):
                        self._replication_error(name, axis, spec, rows, r)
            a = jnp.take(a, 0, axis=i)
            mesh.pop(i)
        kept = [n for n, _ in mesh]
        nblock = a.ndim - len(kept)
        order, final = [], []
        for d in range(nblock):
            part = spec[d] if d < len(spec) else None
            size = a.shape[len(kept) + d]
            for n in _names(part):
                order.append(kept.index(n))
                size *= self.mesh.shape[n]
            order.append(len(kept) + d)
            final.append(size)
        out = jnp.reshape(jnp.transpose(a, order), final)
        # The result remembers its layout, as JAX's outputs do (in a jit too).
        return sharding.constrain(out, NamedSharding(self.full_mesh, spec))

    def _replication_error(self, name, axis, spec, rows, r):
        diff = np.max(np.abs(np.asarray(rows[r], dtype=np.float64) - np.asarray(rows[0], dtype=np.float64))) \
            if rows.dtype != np.bool_ else 1
        err = ValueError(f"shard_map of '{self._fname}': out_specs {spec!r} says {name} is replicated across mesh "
                         f"axis {axis!r}, but the devices at {axis}=0 and {axis}={r} hold different values "
                         f'(largest difference {diff:g})')
        err._spmd_hint = (f'name {axis!r} in its out_specs entry to stack the blocks, or reduce over {axis!r} '
                          '(lax.psum / lax.pmean) before returning it')
        raise err
