"""jax.pmap, jax.jit, jax.make_jaxpr and the device queries.

pmap traces the function once per distinct argument signature (shapes,
dtypes, weak types, static arguments, pytree structure), as JAX does, and
hands the program to spmdsim's runtime, which splits the arguments, runs the
program on every device and stacks the results.
"""

import functools
import inspect

import numpy as np

import _spmd
from jax._src import compiler, core, drift, source_info, tree_util
from jax._src.config import config


# --- devices --------------------------------------------------------------------

class Device:
    """A simulated device, as jax.devices() lists them."""

    def __init__(self, id):
        self.id = id
        self.platform = 'cpu' if _spmd.backend() == 'sim' else 'gpu'
        self.device_kind = 'spmdsim' if self.platform == 'cpu' else 'cuda'
        n_local = _spmd.local_device_count()
        self.process_index = id // n_local if _spmd.process_count() > 1 and n_local != _spmd.device_count() else \
            _spmd.process_index()

    def __repr__(self):
        return f'CpuDevice(id={self.id})' if self.platform == 'cpu' else f'CudaDevice(id={self.id})'

    def __str__(self):  # as XLA's devices print (TFRT_CPU_0, cuda:0)
        return f'TFRT_CPU_{self.id}' if self.platform == 'cpu' else f'cuda:{self.id}'

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)


def devices(backend=None):
    return [Device(i) for i in range(_spmd.device_count())]


def local_devices(process_index=None, backend=None):
    first = _spmd.first_local_device()
    return [Device(i) for i in range(first, first + _spmd.local_device_count())]


def device_count(backend=None):
    return _spmd.device_count()


def local_device_count(backend=None):
    return _spmd.local_device_count()


class _HostDecision(int):
    """A comparison of jax.process_index(): a Python `if` on it inside a traced
    function is recorded in the program, so the processes whose programs
    differ because of it are told which `if` it was."""

    def __bool__(self):
        taken = int(self) != 0
        if core.current_trace() is not None:
            core.bind('decision', what='if', outcome=int(taken))
        return taken


class _ProcessIndex(int):
    def __repr__(self):
        return int.__repr__(self)

    def __bool__(self):
        return bool(_HostDecision(int(self)))

    __str__ = __repr__
    __hash__ = int.__hash__


def _compare(op):
    def f(self, other):
        r = getattr(int, op)(self, other)
        return r if r is NotImplemented else _HostDecision(r)
    return f


for _op in ('__eq__', '__ne__', '__lt__', '__le__', '__gt__', '__ge__'):
    setattr(_ProcessIndex, _op, _compare(_op))


def process_index(backend=None):
    return _ProcessIndex(_spmd.process_index())


def process_count(backend=None):
    return _spmd.process_count()


def default_backend():
    return 'cpu' if _spmd.backend() == 'sim' else 'gpu'


# --- arguments --------------------------------------------------------------------

def _parameter_names(fun, count):
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names += [f'{p.name}[{i}]' for i in range(count - len(names))]
            break
    while len(names) < count:
        names.append(f'args[{len(names)}]')
    return names[:count]


def _leaf_names(fun, positions, tree, kw_names):
    """One name per leaf for reports: "x", "params['w']", "batch[0]"."""
    top = _parameter_names(fun, max(positions) + 1 if positions else 0)
    names = []
    for child, pos in zip(tree.children(), positions + kw_names):
        base = top[pos] if isinstance(pos, int) else pos
        names += [base + path for path in tree_util.tree_paths(child)]
    return names


def _to_concrete(x):
    if isinstance(x, core.ArrayImpl):
        return x._value
    return core.to_spmd_array(x)


def _is_jax_type(x):
    if isinstance(x, (core.ArrayImpl, bool, int, float, complex, np.ndarray, np.generic)):
        return True
    return hasattr(x, '__jax_array__') or hasattr(x, '__array__')


def _pmap_arg(x, name):
    """A pmap argument leaf as an array; JAX's _check_arg error otherwise."""
    if not _is_jax_type(x):
        err = TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.")
        err._spmd_hint = (f"it is the argument {name}: pmap maps arrays, numbers and pytrees of them; pass a "
                          'Python value such as a string through static_broadcasted_argnums')
        raise err
    return _to_concrete(x)


def _check_axes_leaves(axes, what, transform='pmap'):
    """JAX's check that in_axes / out_axes (of pmap, or vmap) hold only ints and None."""
    bad = [l for l in tree_util.tree_leaves(axes) if type(l) is not int]
    if bad:
        raise TypeError(f'{transform} {what} must be an int, None, or (nested) container with those types as '
                        f'leaves, but got {axes}.')


def _check_mapped_axes(flat_axes, leaves, every_axis):
    """JAX's error for an in_axes entry beyond an argument's rank. The runtime
    checks a top-level pmap's axes (as C ints, with its own report), so there
    only values no int holds (2**70) are refused here; a nested pmap's axes
    (every_axis) are all checked here."""
    for a, leaf in zip(flat_axes, leaves):
        if a is None:
            continue
        shape = tuple(leaf.shape) if hasattr(leaf, 'shape') else tuple(np.shape(leaf))
        if -2**31 <= a < 2**31 and (not every_axis or -len(shape) <= a < len(shape)):
            continue
        err = ValueError(f'pmap was requested to map its argument along axis {a}, which implies that its rank '
                         f'should be at least {a + 1 if a >= 0 else -a}, but is only {len(shape)} (its shape is '
                         f'{shape})')
        err._spmd_hint = (f'valid axes are {-len(shape)}..{len(shape) - 1}, or None to replicate the argument'
                          if shape else 'a scalar has no axis to split: replicate it with in_axes=None')
        raise err


# --- pmap ------------------------------------------------------------------------

def _merged():
    """JAX >= 0.8's pmap, implemented on jit + shard_map (jax_pmap_shmap_merge,
    on by default): where it behaves or errs differently from the original
    pmap, spmdsim follows the flag."""
    return bool(config.read('jax_pmap_shmap_merge'))


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None,
         backend=None, axis_size=None, donate_argnums=(), global_arg_shapes=None):
    if fun is None:
        return lambda f: pmap(f, axis_name, in_axes=in_axes, out_axes=out_axes,
                              static_broadcasted_argnums=static_broadcasted_argnums, devices=devices,
                              backend=backend, axis_size=axis_size, donate_argnums=donate_argnums)
    if not callable(fun):
        raise TypeError(f'Expected a callable value, got {fun!r}')
    if axis_name is not None and not isinstance(axis_name, str):
        raise TypeError(f'pmap axis_name must be a string, got {type(axis_name).__name__}')
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) else \
        tuple(static_broadcasted_argnums)
    return _PmappedFunction(fun, axis_name, in_axes, out_axes, static, devices, axis_size)


class _PmappedFunction:
    def __init__(self, fun, axis_name, in_axes, out_axes, static, devices, axis_size):
        self.fun = fun
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.static = static
        self.devices = [d.id if isinstance(d, Device) else int(d) for d in devices] if devices is not None else []
        self.axis_size = axis_size
        self.cache = {}
        self.names = {}
        self.drift = None
        self._out_shardings_cache = {}
        functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: a wrapped pmap or jit is an object like this one

    def __call__(self, *args, **kwargs):
        loc = source_info.current_location()
        fname = getattr(self.fun, '__name__', 'fun')
        for s in self.static:
            if not -len(args) <= s < len(args):
                err = ValueError(
                    f'pmapped function has static_broadcasted_argnums={self.static} but was called with only '
                    f'{len(args)} positional argument{"s" if len(args) != 1 else ""}. All static broadcasted '
                    'arguments must be passed positionally.')
                names = _parameter_names(self.fun, s + 1) if s >= 0 else []
                if s >= 0 and names[s] in kwargs:
                    err._spmd_hint = (f'{fname}() got {names[s]}= by keyword; static_broadcasted_argnums counts '
                                      f'positions, so pass it as positional argument {s}')
                raise err
        static_pos = {s % len(args) for s in self.static}
        dyn_pos = [i for i in range(len(args)) if i not in static_pos]
        dyn_args = tuple(args[i] for i in dyn_pos)
        in_axes = self.in_axes
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        _check_axes_leaves(in_axes, 'in_axes')
        if isinstance(in_axes, tuple):
            # JAX picks the entries of the dynamic arguments (in_axes[i] for i
            # in dyn_argnums), so with static arguments in_axes may stop after
            # the last dynamic one (jax issue #4638); where it is too short JAX
            # fails with an IndexError, spmdsim with this error.
            needed = len(args) if not static_pos else max(dyn_pos, default=-1) + 1
            if len(in_axes) < needed or (not static_pos and len(in_axes) != len(args)):
                raise ValueError(
                    f'pmap in_axes must be an int, None, or a tuple of entries corresponding to the positional '
                    f'arguments passed to the function, got in_axes={in_axes} for {len(args)} positional '
                    f'argument{"s" if len(args) != 1 else ""}.')
            in_axes = tuple(in_axes[i] for i in dyn_pos)
        kw_names = sorted(kwargs)
        leaves, tree = tree_util.tree_flatten(dyn_args + tuple(kwargs[k] for k in kw_names))
        # Without keyword arguments the positional ones are the whole tree.
        dyn_tree = tree_util.tree_structure(dyn_args) if kw_names else tree
        flat_axes = tree_util.broadcast_prefix(in_axes, dyn_tree, 'pmap in_axes')
        flat_axes += [0] * (len(leaves) - len(flat_axes))  # keyword arguments are mapped over axis 0
        for l in leaves:
            if isinstance(l, core.Tracer) and not l._trace.alive:
                raise core._escaped(l)  # a tracer kept from a trace that ended
        _check_mapped_axes(flat_axes, leaves, every_axis=False)
        names_key = (tree, tuple(dyn_pos), tuple(kw_names))
        names = self.names.get(names_key)
        if names is None:
            names = self.names[names_key] = _leaf_names(self.fun, dyn_pos, tree, kw_names)
        if any(isinstance(l, core.Tracer) for l in leaves) or core.current_trace() is not None:
            return self._nested(args, kwargs, static_pos, dyn_pos, kw_names, leaves, tree, flat_axes, names, loc)

        arrays = [_pmap_arg(l, n) for l, n in zip(leaves, names)]
        opts = self._options(flat_axes, names, loc)
        if _merged():
            self._check_merged(leaves, arrays, flat_axes, names)
        if config.read('jax_disable_jit'):
            return self._eager(args, dyn_pos, kw_names, tree, arrays, opts)
        n = _spmd.pmap_axis_size(arrays, opts)
        in_avals = _per_device_avals(arrays, opts.in_axes)
        statics = tuple((i, args[i]) for i in sorted(static_pos))
        key = (tree, tuple(in_avals), _hashable_statics(statics), n)
        entry = self.cache.get(key)
        if entry is None:
            try:
                entry = self._trace(statics, dyn_pos, kw_names, tree, in_avals, names, n, len(args))
            except _spmd.SpmdError as e:
                _spmd.add_pmap_notes(e, arrays, opts, n)
                raise
            self.cache[key] = entry
        program, out_tree, out_axes, out_names = entry
        opts.out_axes = out_axes
        opts.out_names = out_names
        if self.drift is None:
            self.drift = drift.Checker(getattr(self.fun, '__name__', 'fun'), self.axis_name or '')
        try:
            outs = _spmd.pmap(program, arrays, opts)
        except _spmd.SpmdError as e:
            if getattr(e, 'kind', '') == 'OutAxesError':
                self.drift.explain(e, program, opts.in_axes, names, opts.out_names)
            raise
        self.drift.check(program, arrays, opts.in_axes, outs, out_axes, names, opts.out_names)
        shardings = self._out_shardings(out_axes, n) if _merged() else [None] * len(outs)
        return out_tree.unflatten([core.ArrayImpl(o, s) for o, s in zip(outs, shardings)])

    def _trace(self, statics, dyn_pos, kw_names, tree, in_avals, names, n, nargs):
        fun = self.fun
        static_map = dict(statics)

        def flat_fun(*flat):
            values = tree.unflatten(list(flat))
            pos_values = values[:len(dyn_pos)]
            kw_values = values[len(dyn_pos):]
            call_args = [None] * nargs
            for i, v in zip(dyn_pos, pos_values):
                call_args[i] = v
            for i, v in static_map.items():
                call_args[i] = v
            return fun(*call_args, **dict(zip(kw_names, kw_values)))
        axes = core.bound_axes() + [(self.axis_name or '', n)]
        program, out_tree, captured = core.trace_function(flat_fun, in_avals, 'pmap', names, axes, info_from=fun)
        if captured:
            raise core._escaped(captured[0])
        if core.current_trace() is None:
            program = compiler.compile_traced(program)
        out_axes = tree_util.broadcast_prefix(self.out_axes, out_tree, 'pmap out_axes')
        out_names = ['output' + p for p in tree_util.tree_paths(out_tree)]
        return program, out_tree, [None if a is None else int(a) for a in out_axes], out_names

    def _options(self, flat_axes, names, loc):
        opts = _spmd.PmapOptions()
        opts.axis_name = self.axis_name or ''
        opts.in_axes = [None if a is None else int(a) for a in flat_axes]
        opts.axis_size = self.axis_size
        opts.devices = self.devices
        opts.loc = loc
        opts.arg_names = names
        return opts

    def _eager(self, args, dyn_pos, kw_names, tree, arrays, opts):
        """pmap under jax.disable_jit(): every device runs the Python function
        with its own concrete values (Python control flow works per device);
        collectives still meet at the rendezvous."""
        fun = self.fun
        nargs = len(args)
        out_trees = []

        def device_fn(shards):
            try:
                return run_device(shards) + (None,)
            except BaseException as e:  # handed to the runtime as this device's error
                return None, None, e

        def run_device(shards):
            values = tree.unflatten([core.ArrayImpl(s) for s in shards])
            call_args = list(args)
            for i, v in zip(dyn_pos, values[:len(dyn_pos)]):
                call_args[i] = v
            result = fun(*call_args, **dict(zip(kw_names, values[len(dyn_pos):])))
            leaves, out_tree = tree_util.tree_flatten(result)
            if out_trees and out_trees[0] != out_tree:
                raise ValueError(f'pmap: devices returned different output structures: {out_trees[0]} and '
                                 f'{out_tree}')
            out_trees.append(out_tree)
            out_axes = tree_util.broadcast_prefix(self.out_axes, out_tree, 'pmap out_axes')
            return ([_to_concrete(l) for l in leaves], [None if a is None else int(a) for a in out_axes])
        outs = _spmd.pmap_eager(device_fn, arrays, opts)
        return out_trees[0].unflatten([core.ArrayImpl(o) for o in outs])

    def _nested(self, args, kwargs, static_pos, dyn_pos, kw_names, leaves, tree, flat_axes, names, loc):
        """A pmap called inside a trace (a pmap inside a pmap): recorded as one
        equation whose program every outer device runs over its own devices."""
        _check_mapped_axes(flat_axes, [core.aval_of(l) for l in leaves], every_axis=True)
        sizes = {core.aval_of(l).shape[a] for l, a in zip(leaves, flat_axes) if a is not None}
        if self.axis_size is not None:
            sizes.add(self.axis_size)
        if len(sizes) != 1:
            raise ValueError(f'pmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}')
        n = sizes.pop()
        if _merged():
            self._refuse_nesting(n)
        if self.devices:
            err = ValueError('pmap: devices= cannot be given to a nested pmap')
            err._spmd_hint = 'set devices= on the outer pmap only'
            raise err
        in_avals = _per_device_avals([core.aval_of(l) for l in leaves], flat_axes)
        statics = tuple((i, args[i]) for i in sorted(static_pos))
        program, out_tree, out_axes, _ = self._trace(statics, dyn_pos, kw_names, tree, in_avals, names, n, len(args))
        outs = core.bind('xla_pmap', *leaves, call_jaxpr=program, axis_name=self.axis_name or '', axis_size=n,
                         in_axes=tuple(-1 if a is None else int(a) % max(1, core.aval_of(l).ndim)
                                       for l, a in zip(leaves, flat_axes)),
                         out_axes=tuple(-1 if a is None else int(a) for a in out_axes))
        return out_tree.unflatten(outs)

    # --- jax_pmap_shmap_merge: the new jax.pmap (JAX >= 0.8), jit of a shard_map ------------

    def _mesh_ids(self, n):
        return list(self.devices) if self.devices else list(range(n))

    def _check_merged(self, leaves, arrays, flat_axes, names):
        """Where the new pmap errs and the original did not: nothing mapped
        (axis_size alone), an axis_size that is not the mapped size, and
        inputs placed on other devices than the pmap's (no silent resharding)."""
        fname = getattr(self.fun, '__name__', 'fun')
        mapped = [(a, ax) for a, ax in zip(arrays, flat_axes) if ax is not None]
        if not mapped:
            err = ValueError('pmap requires at least one argument with a mapped axis.')
            err._spmd_hint = ('the new jax.pmap (JAX >= 0.8, jax_pmap_shmap_merge) takes its size from the first '
                              'mapped argument, so axis_size= alone maps nothing: map an argument (in_axes=0), or '
                              "run the original pmap with jax.config.update('jax_pmap_shmap_merge', False)")
            raise err
        first, ax = mapped[0]
        shape = tuple(first.shape)
        if not shape or not -len(shape) <= ax < len(shape):
            return  # the runtime names the axis that cannot be split
        n = shape[ax]
        if self.axis_size is not None and self.axis_size != n and _spmd.process_count() == 1:
            raise ValueError(f"Specified axis_size {self.axis_size} doesn't match received axis_size {n}.")
        if _spmd.process_count() > 1:
            return
        ids = self._mesh_ids(n)
        for leaf, name in zip(leaves, names):
            _check_placement(leaf, name, fname, ids, "the new jax.pmap does not reshard its inputs; jax.device_put it "
                             "onto the pmap's devices, or pass devices= to pmap (see JAX's guide \"Migrating to the "
                             'new jax.pmap")')

    def _out_shardings(self, out_axes, n):
        """Each output's NamedSharding over the pmap's 1-D mesh, as the new
        pmap returns them (the mapped axis split, out_axes=None replicated)."""
        from jax._src.sharding import Mesh, NamedSharding, PartitionSpec
        if _spmd.process_count() > 1:
            return [None] * len(out_axes)
        key = (n, tuple(out_axes))
        shardings = self._out_shardings_cache.get(key)  # one list per signature: the common call costs a lookup
        if shardings is None:
            ids = self._mesh_ids(n)
            name = self.axis_name or '_pmap'
            mesh = Mesh(np.array([Device(i) for i in ids], dtype=object), (name,))
            shardings = self._out_shardings_cache[key] = [
                NamedSharding(mesh, PartitionSpec() if a is None else PartitionSpec(*([None] * a), name))
                for a in out_axes]
        return shardings

    def _refuse_nesting(self, n):
        t = core.current_trace()
        while t is not None and t.purpose not in ('pmap', 'shard_map'):
            t = t.parent
        if t is None:
            return
        outer = ', '.join(f"'{name}': {size}" for name, size in t.axes)
        manual = ', '.join(['Manual'] * len(t.axes))
        err = ValueError(f"The context mesh AbstractMesh({outer}, axis_types=({manual},)) should match the mesh "
                         f"passed to shard_map Mesh('{self.axis_name or '_pmap'}': {n}, axis_types=(Auto,))")
        err._spmd_hint = ('a pmap inside a pmap or shard_map is not supported by the new jax.pmap (JAX >= 0.8, '
                          'jax_pmap_shmap_merge): map both axes with one jax.shard_map over a 2-D mesh '
                          "(jax.make_mesh((a, b), ('outer', 'inner'))), or run the original pmap with "
                          "jax.config.update('jax_pmap_shmap_merge', False)")
        raise err

    def lower(self, *args, **kwargs):
        raise NotImplementedError('spmdsim does not lower to XLA: use jax.make_jaxpr to see the traced program')

    def __get__(self, obj, objtype=None):
        # Used as a method (@jax.pmap on a def in a class): `self` is the
        # first positional argument, as with JAX's PmapFunction.
        return self if obj is None else functools.partial(self, obj)


def _per_device_avals(avals, in_axes):
    """What each device sees of each argument (an aval, or an array with
    shape, dtype and weak_type): the mapped axis removed."""
    out = []
    for a, ax in zip(avals, in_axes):
        shape = list(a.shape)
        if ax is not None:
            del shape[ax % len(shape)]
        out.append(core.ShapedArray(shape, a.dtype, a.weak_type))
    return out


def _hashable_statics(statics):
    try:
        hash(statics)
        return statics
    except TypeError:
        i, v = next((i, v) for i, v in statics if not _is_hashable(v))
        raise ValueError(f'Non-hashable static arguments are not supported. An error occurred while trying to hash '
                         f'an object of type {type(v)}, {v!r}. The error was:\nTypeError: unhashable type: '
                         f"'{type(v).__name__}'") from None


def _is_hashable(v):
    try:
        hash(v)
        return True
    except TypeError:
        return False


# --- jit and make_jaxpr ----------------------------------------------------------

def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), device=None, backend=None,
        inline=False, in_shardings=None, out_shardings=None, keep_unused=False, abstracted_axes=None):
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             in_shardings=in_shardings, out_shardings=out_shardings)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    static_names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    static, static_names = _infer_static(fun, static, static_names)
    return _JittedFunction(fun, static, static_names, in_shardings, out_shardings)


def _infer_static(fun, argnums, argnames):
    """JAX's rule: given only static_argnames, the positions of those
    parameters are static too (an argument passed positionally stays
    static); given only static_argnums, so are those parameters' names (an
    argument passed by keyword). Both given: taken as they are."""
    if argnums and argnames:
        return argnums, argnames
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return argnums, argnames
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if argnames:
        return tuple(i for i, name in enumerate(positional) if name in argnames), argnames
    named = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
    names = tuple(positional[i] for i in argnums if -len(positional) <= i < len(positional)
                  and positional[i] in named)
    return argnums, names


class _JittedFunction:
    def __init__(self, fun, static, static_names, in_shardings=None, out_shardings=None):
        self.fun = fun
        self.static = static
        self.static_names = static_names
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.cache = {}
        functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: a wrapped pmap or jit is an object like this one

    def _split(self, args, kwargs):
        static_pos = {s % len(args) for s in self.static if -len(args) <= s < len(args)}
        statics = tuple((i, args[i]) for i in sorted(static_pos))
        static_kw = tuple((k, kwargs[k]) for k in sorted(kwargs) if k in self.static_names)
        dyn_pos = [i for i in range(len(args)) if i not in static_pos]
        dyn_kw = [k for k in sorted(kwargs) if k not in self.static_names]
        return statics, static_kw, dyn_pos, dyn_kw

    def _flat_fun(self, args, statics, static_kw, dyn_pos, dyn_kw, tree):
        def flat_fun(*flat):
            values = tree.unflatten(list(flat))
            call_args = list(args)
            for i, v in zip(dyn_pos, values[:len(dyn_pos)]):
                call_args[i] = v
            kw = dict(static_kw)
            kw.update(zip(dyn_kw, values[len(dyn_pos):]))
            return self.fun(*call_args, **kw)
        return flat_fun

    def trace(self, *args, **kwargs):
        statics, static_kw, dyn_pos, dyn_kw = self._split(args, kwargs)
        leaves, tree = tree_util.tree_flatten(tuple(args[i] for i in dyn_pos) + tuple(kwargs[k] for k in dyn_kw))
        avals = [core.aval_of(l) for l in leaves]
        key = (tree, tuple(avals), _hashable_statics(statics + static_kw), tuple(core.bound_axes()))
        entry = self.cache.get(key)
        if entry is None:
            flat_fun = self._flat_fun(args, statics, static_kw, dyn_pos, dyn_kw, tree)
            names = _leaf_names(self.fun, dyn_pos, tree, dyn_kw)
            program, out_tree, captured = core.trace_function(flat_fun, avals, 'jit', names, info_from=self.fun)
            if core.current_trace() is None:
                program = compiler.compile_traced(program)
            entry = (program, out_tree, captured, _constrained_outputs(program))
            if not captured:
                self.cache[key] = entry
        return entry, leaves

    def __call__(self, *args, **kwargs):
        if config.read('jax_disable_jit'):
            return self.fun(*args, **kwargs)  # plain Python, as in JAX
        (program, out_tree, captured, constrained), leaves = self.trace(*args, **kwargs)
        if self.in_shardings is not None and core.current_trace() is None:
            self._check_inputs(args, kwargs)
        if core.current_trace() is not None:
            # Inside another trace (a pmap, a grad) the function is traced on
            # abstract values of its own and called as one equation, as in JAX.
            outs = core.bind('jit', *leaves, *captured, jaxpr=program,
                             name=getattr(self.fun, '__name__', 'fun'))
            return out_tree.unflatten(outs)
        outs = _spmd.execute(program, [_to_concrete(l) for l in leaves] + [_to_concrete(c) for c in captured])
        shardings = constrained if self.out_shardings is None else self._place_outputs(out_tree, outs)
        return out_tree.unflatten([core.ArrayImpl(o, s) for o, s in zip(outs, shardings)])

    # --- in_shardings / out_shardings: where the global values live ------------------

    def _shardings(self, spec_tree, tree, what):
        from jax._src import sharding
        flat = tree_util.broadcast_prefix(spec_tree, tree, f'jit {what}', is_spec=sharding.is_sharding_spec)
        return [sharding.named(s, f'jit {what}') for s in flat]

    def _check_inputs(self, args, kwargs):
        """Each argument fits its in_sharding, and one already placed
        elsewhere is refused (jit does not move committed arrays silently)."""
        statics, _, dyn_pos, _ = self._split(args, kwargs)
        dyn = tuple(args[i] for i in dyn_pos)
        leaves, tree = tree_util.tree_flatten(dyn)
        fname = getattr(self.fun, '__name__', 'fun')
        names = _leaf_names(self.fun, dyn_pos, tree, [])
        for leaf, name, sharding in zip(leaves, names, self._shardings(self.in_shardings, tree, 'in_shardings')):
            if sharding is None:
                continue
            aval = core.aval_of(leaf)
            sharding.check(aval.shape, name, f'One of pjit arguments with pytree key path {name}')
            _check_placement(leaf, name, fname, sharding.mesh.device_id_list,
                             'jit does not move an array placed elsewhere; jax.device_put it onto those devices '
                             'first, or give in_shardings the devices it is on')

    def _place_outputs(self, out_tree, outs):
        shardings = self._shardings(self.out_shardings, out_tree, 'out_shardings')
        for path, o, s in zip(tree_util.tree_paths(out_tree), outs, shardings):
            if s is not None:
                s.check(tuple(o.shape), 'output' + path, f'One of pjit outputs with pytree key path result{path}')
        return shardings

    def lower(self, *args, **kwargs):
        raise NotImplementedError('spmdsim does not lower to XLA: use jax.make_jaxpr to see the traced program')

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


def _check_placement(leaf, name, fname, ids, how_to_fix):
    """JAX's error for an argument already placed (its NamedSharding) on other
    devices than the computation's `ids`: jit and the new pmap do not move it."""
    sharding = getattr(leaf, '_sharding', None)
    placed = sharding.mesh.device_id_list if sharding is not None and hasattr(sharding, 'mesh') else None
    if placed is None or placed == ids:
        return
    err = ValueError(f'Received incompatible devices for jitted computation. Got argument {name} of {fname} with '
                     f'shape {core.aval_of(leaf).str_short()} and device ids {placed} on platform CPU and explicit '
                     f'input sharding with device ids {ids} on platform CPU')
    err._spmd_hint = (f'{name} is placed on devices {placed} (its .sharding), the computation runs on {ids}: '
                      f'{how_to_fix}')
    raise err


def _constrained_outputs(program):
    """Per output of a jitted program, the layout a sharding_constraint
    gave it (with_sharding_constraint, a shard_map's out_specs), or None:
    the jit's result carries it, as JAX's does."""
    from jax._src import sharding
    made_by = {}
    for prim, _, outs, params, _ in program.equations:
        if prim == 'sharding_constraint':
            made_by[outs[0]] = params
    return [sharding.sharding_of(made_by[a]) if isinstance(a, int) and a in made_by else None
            for a in program.outputs]


class Primitive:
    """An equation's primitive, as JAX's jaxprs name it (eqn.primitive.name)."""
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, Primitive) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class Var:
    """A variable of a jaxpr: its number in the program and its aval."""
    __slots__ = ('count', 'aval')

    def __init__(self, count, aval):
        self.count, self.aval = count, aval

    def __repr__(self):
        return f'Var(id={self.count}):{self.aval.str_short()}'


class Literal:
    """A constant operand written into an equation."""
    __slots__ = ('val', 'aval')

    def __init__(self, val):
        self.val = core.ArrayImpl(val)
        self.aval = self.val.aval

    def __repr__(self):
        return f'Literal({self.val})'


class JaxprEqn:
    __slots__ = ('primitive', 'invars', 'outvars', 'params', 'source_info')

    def __init__(self, primitive, invars, outvars, params, source_info):
        self.primitive, self.invars, self.outvars = primitive, invars, outvars
        self.params, self.source_info = params, source_info

    def __repr__(self):
        return f'JaxprEqn({self.primitive}, invars={self.invars}, outvars={self.outvars})'


def _jaxpr_param(value):
    """A parameter as JAX's jaxprs hold it: a sub-program as a ClosedJaxpr."""
    if hasattr(value, 'equations') and hasattr(value, 'inputs'):
        return ClosedJaxpr(value, None)
    if isinstance(value, tuple) and any(hasattr(v, 'equations') for v in value):
        return tuple(_jaxpr_param(v) for v in value)
    return value


def _aval_of_constant(c):
    a = core.ArrayImpl(c)
    return a.shape, a.dtype.name, False


class Jaxpr:
    """A traced program's structure, as JAX's Jaxpr: constvars (the arrays
    the function closed over, which spmdsim's program holds as literals),
    invars, equations, outvars."""

    def __init__(self, program):
        self._program = program
        self._vars = {}
        self._constants = program.constants
        self._constvars = [Var(-1 - k, core.ShapedArray(*_aval_of_constant(c))) for k, c in enumerate(self._constants)]

    def _var(self, v):
        if v not in self._vars:
            self._vars[v] = Var(v, core.ShapedArray(*self._program.var_aval(v)))
        return self._vars[v]

    def _atom(self, a):
        if isinstance(a, int):
            return self._var(a)
        k = self._program.constant_index(self._constants, a)
        return self._constvars[k] if k >= 0 else Literal(a)

    @property
    def invars(self):
        return [self._var(v) for v in self._program.inputs]

    @property
    def outvars(self):
        return [self._atom(a) for a in self._program.outputs]

    @property
    def constvars(self):
        return list(self._constvars)

    @property
    def eqns(self):
        return [JaxprEqn(Primitive(prim), [self._atom(a) for a in ins], [self._var(v) for v in outs],
                         _eqn_params(prim, params), loc)
                for prim, ins, outs, params, loc in self._program.equations]

    def __str__(self):
        return self._program.jaxpr_text()

    __repr__ = __str__


_DOT_AXES = ('lhs_contracting', 'rhs_contracting', 'lhs_batch', 'rhs_batch')


def _eqn_params(primitive, params):
    """An equation's params as JAX's: dot_general's four axis lists are its
    dimension_numbers; the shardings spmdsim never sets are None."""
    out = {k: _jaxpr_param(v) for k, v in params.items() if not (primitive == 'dot_general' and k in _DOT_AXES)}
    out.update((k, None) for k in _spmd.unset_params(primitive) if k not in out)
    if primitive == 'dot_general':
        from jax import lax
        out['dimension_numbers'] = lax.dot_dimension_numbers(params)
        out.setdefault('precision', None)
        preferred = out.get('preferred_element_type')
        out['preferred_element_type'] = None if preferred is None else np.dtype(preferred)
    return out


class ClosedJaxpr:
    """What jax.make_jaxpr returns: prints as JAX's jaxpr text; .jaxpr, .eqns,
    .consts, .in_avals and .out_avals as JAX's."""

    def __init__(self, program, out_tree):
        self._program = program
        self.out_tree = out_tree
        self.jaxpr = Jaxpr(program)
        self.consts = [core.ArrayImpl(c) for c in program.constants]
        self.literals = []

    @property
    def in_avals(self):
        return [core.ShapedArray(*a) for a in self._program.in_avals]

    @property
    def out_avals(self):
        return [core.ShapedArray(*a) for a in self._program.out_avals]

    @property
    def eqns(self):
        return self.jaxpr.eqns

    def __str__(self):
        return self._program.jaxpr_text()

    __repr__ = __str__

    def pretty_print(self, **kw):
        return str(self)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False):
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def make(*args, **kwargs):
        j = _JittedFunction(fun, static, ())
        statics, static_kw, dyn_pos, dyn_kw = j._split(args, kwargs)
        leaves, tree = tree_util.tree_flatten(tuple(args[i] for i in dyn_pos) + tuple(kwargs[k] for k in dyn_kw))
        avals = [core.aval_of(l) for l in leaves]
        flat_fun = j._flat_fun(args, statics, static_kw, dyn_pos, dyn_kw, tree)
        axes = core.bound_axes() + [tuple(a) for a in (axis_env or [])]
        program, out_tree, _ = core.trace_function(flat_fun, avals, 'make_jaxpr', axes=axes, info_from=fun)
        return ClosedJaxpr(program, out_tree)
    return make


def block_until_ready(x):
    return x


def device_put(x, device=None):
    """Arrays of `x`; with a NamedSharding (or a pytree prefix of them), laid
    out over its mesh: checked to fit, and remembered by the array (its
    .sharding, .addressable_shards, jax.debug.visualize_array_sharding)."""
    from jax._src.sharding import NamedSharding

    def put(leaf, sharding):
        value = leaf._value if isinstance(leaf, core.ArrayImpl) else core.to_spmd_array(leaf)
        if isinstance(sharding, NamedSharding):
            sharding.check(value.shape)
            return core.ArrayImpl(value, sharding)
        return leaf if isinstance(leaf, core.Array) else core.ArrayImpl(value)
    if isinstance(device, NamedSharding) or device is None or isinstance(device, (Device, int)):
        return tree_util.tree_map(lambda l: put(l, device), x)
    leaves, tree = tree_util.tree_flatten(x)
    shardings = tree_util.broadcast_prefix(device, tree, 'device_put device',
                                           is_spec=lambda s: s is None or isinstance(s, NamedSharding))
    return tree.unflatten([put(l, s) for l, s in zip(leaves, shardings)])


def device_get(x):
    return tree_util.tree_map(lambda l: np.asarray(l) if isinstance(l, core.Array) else l, x)


def _stacked_over(devices, name):
    """The sharding device_put_replicated/sharded give their stacked result:
    one row per device of `devices`."""
    from jax._src.sharding import Mesh, NamedSharding, PartitionSpec
    mesh = Mesh(np.array([d if isinstance(d, Device) else Device(int(d)) for d in devices], dtype=object), (name,))
    return NamedSharding(mesh, PartitionSpec(name))


def device_put_replicated(x, devices):
    """Deprecated in JAX 0.8.1 (jax.device_put_replicated warns, see jax/__init__.py)."""
    import jax.numpy as jnp
    devices = list(devices)
    if not devices:
        raise ValueError('`devices` argument to `device_put_replicated must be a non-empty sequence.')
    sharding = _stacked_over(devices, '_device_put_replicated')
    n = len(devices)
    return tree_util.tree_map(lambda l: core.ArrayImpl(jnp.stack([jnp.asarray(l)] * n)._value, sharding), x)


def device_put_sharded(shards, devices):
    """Deprecated in JAX 0.8.1 (jax.device_put_sharded warns, see jax/__init__.py)."""
    import jax.numpy as jnp
    devices = list(devices)
    if not isinstance(shards, (list, tuple)):
        raise TypeError(f'device_put_sharded `shards` input must be a sequence; got {type(shards)}')
    if len(shards) != len(devices):
        raise ValueError(f'len(shards) = {len(shards)} must equal len(devices) = {len(devices)}.')
    sharding = _stacked_over(devices, '_device_put_sharded')

    def stack(*ls):
        avals = [core.aval_of(l) for l in ls]
        for a, b in zip(avals, avals[1:]):
            if (a.shape, a.dtype) != (b.shape, b.dtype):
                raise ValueError('the shards passed to device_put_sharded must have consistent shape and dtype, '
                                 f'but got {a.str_short()} and {b.str_short()}.')
        return core.ArrayImpl(jnp.stack([jnp.asarray(l) for l in ls])._value, sharding)
    return tree_util.tree_map(stack, *shards)


class disable_jit:
    """with jax.disable_jit(): pmap and jit run the Python function itself,
    per device with concrete values, instead of tracing it."""

    def __init__(self, disable=True):
        self.disable = disable

    def __enter__(self):
        self.previous = config.read('jax_disable_jit')
        config.update('jax_disable_jit', self.disable)
        return self

    def __exit__(self, *exc):
        config.update('jax_disable_jit', self.previous)
        return False
