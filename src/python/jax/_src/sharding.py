"""Mesh, PartitionSpec and NamedSharding (jax.sharding)."""

import collections
import enum
import math
import warnings

import numpy as np

from jax._src import api, core


class PartitionSpec(tuple):
    """Per array dimension: None (not split), a mesh axis name, or a tuple of
    names (split over their product, the first outermost)."""

    def __new__(cls, *parts):
        for part in parts:
            names = part if isinstance(part, tuple) else (part,)
            for n in names:
                if n is not None and not isinstance(n, str):
                    raise TypeError(f'PartitionSpec entries must be mesh axis names, tuples of them or None, '
                                    f'got {part!r}')
        return super().__new__(cls, parts)

    def __repr__(self):
        return 'PartitionSpec' + tuple.__repr__(self)

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


class AxisType(enum.Enum):
    """How a mesh axis shards (jax.sharding.AxisType). spmdsim runs shard_map's
    Manual semantics whatever the type; the types are kept and reported."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


def _axis_types(axis_names, axis_types):
    if axis_types is None:
        return (AxisType.Auto,) * len(axis_names)
    if not isinstance(axis_types, tuple):
        axis_types = (axis_types,)
    if len(axis_types) != len(axis_names) or not all(isinstance(t, AxisType) for t in axis_types):
        raise ValueError(f'axis_types {axis_types!r} must be one jax.sharding.AxisType per axis name {axis_names}')
    return axis_types


class AbstractMesh:
    """A mesh's axis names, sizes and types, without devices (what
    jax.sharding.get_abstract_mesh gives inside `with mesh:`)."""

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = _axis_types(self.axis_names, axis_types)

    @property
    def shape(self):
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self):
        return int(math.prod(self.axis_sizes))

    @property
    def empty(self):
        return not self.axis_names

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and (self.shape_tuple, self.axis_types) == (
            other.shape_tuple, other.axis_types)

    def __hash__(self):
        return hash((self.shape_tuple, self.axis_types))

    def __repr__(self):
        if self.empty:
            return 'AbstractMesh((), axis_types=())'
        shape = ', '.join(f"'{n}': {s}" for n, s in self.shape_tuple)
        return f'AbstractMesh({shape}, axis_types={self.axis_types!r}, device_kind=cpu, num_cores=None)'


def get_abstract_mesh():
    """The abstract mesh of the innermost `with mesh:` / jax.set_mesh, else an empty one."""
    return Mesh._stack[-1].abstract_mesh if Mesh._stack else AbstractMesh((), ())


class Mesh:
    """Named axes over an array of devices: Mesh(devices, ('data', 'model'))."""

    _stack = []

    def __init__(self, devices, axis_names, axis_types=None):
        devices = np.asarray(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if devices.ndim != len(axis_names):
            raise ValueError(f'Mesh requires the ndim of its first argument (`devices`) to equal the length of its '
                             f'second argument (`axis_names`), but got devices.ndim == {devices.ndim} and '
                             f'len(axis_names) == {len(axis_names)}.')
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f'Mesh axis names must be unique, got {axis_names}')
        ids = [d.id if isinstance(d, api.Device) else int(d) for d in devices.flat]
        if len(set(ids)) != len(ids):
            raise ValueError(f'Mesh lists a device twice: {ids}')
        self.devices = devices
        self.axis_names = axis_names
        self.axis_types = _axis_types(axis_names, axis_types)
        self.device_ids = np.asarray(ids, dtype=np.int64).reshape(devices.shape)
        self.device_id_list = ids  # row-major, for quick comparisons of placements

    @property
    def shape(self):
        return collections.OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self):
        return tuple(self.devices.shape)

    @property
    def size(self):
        return int(math.prod(self.devices.shape))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.devices.shape))

    @property
    def abstract_mesh(self):
        return AbstractMesh(self.devices.shape, self.axis_names, self.axis_types)

    @property
    def empty(self):
        return self.size == 0

    def __enter__(self):
        Mesh._stack.append(self)
        return self

    def __exit__(self, *exc):
        Mesh._stack.pop()
        return False

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and np.array_equal(self.device_ids, other.device_ids))

    def __hash__(self):
        return hash((self.axis_names, tuple(self.device_ids.flat), self.device_ids.shape))

    def __repr__(self):
        shape = ', '.join(f"'{n}': {s}" for n, s in self.shape.items())
        return f'Mesh(axis_sizes=({", ".join(map(str, self.axis_sizes))},), axis_names={self.axis_names!r})' \
            if len(self.axis_names) == 1 else f'Mesh({shape})'


def make_mesh(axis_shapes, axis_names, *, devices=None, axis_types=None):
    """A mesh of the first prod(axis_shapes) devices (jax.make_mesh)."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    axis_names = tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f'make_mesh: {len(axis_shapes)} axis sizes {axis_shapes} for {len(axis_names)} axis names '
                         f'{axis_names}')
    need = math.prod(axis_shapes)
    devices = list(api.devices() if devices is None else devices)
    if need > len(devices):
        err = ValueError(f'Number of devices {len(devices)} must be >= the product of mesh_shape {axis_shapes}')
        err._spmd_hint = (f'the mesh needs {need} devices; run with --devices {need} (or set '
                          f"XLA_FLAGS=--xla_force_host_platform_device_count={need})")
        raise err
    if axis_types is None:
        warnings.warn('The default axis_types will change in JAX v0.9.0 to jax.sharding.AxisType.Explicit. To '
                      'maintain the old behavior, pass `axis_types=(jax.sharding.AxisType.Auto,) * len(axis_names)`. '
                      'To opt-into the new behavior, pass `axis_types=(jax.sharding.AxisType.Explicit,) * '
                      'len(axis_names)', DeprecationWarning, stacklevel=2)
    return Mesh(np.asarray(devices[:need], dtype=object).reshape(axis_shapes), axis_names, axis_types)


class Sharding:
    """The base of every sharding (jax.sharding.Sharding): isinstance checks
    in libraries (optax, flax) test against it."""


class NamedSharding(Sharding):
    """How an array is laid out over a mesh: NamedSharding(mesh, P(...))."""

    def __init__(self, mesh, spec=PartitionSpec()):
        if not isinstance(mesh, Mesh):
            raise TypeError(f'NamedSharding expects a Mesh, got {type(mesh).__name__}')
        self.mesh = mesh
        self.spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)

    @property
    def device_set(self):
        return set(self.mesh.devices.flat)

    @property
    def is_fully_replicated(self):
        return all(p is None for p in self.spec)

    def check(self, shape, what='the array', subject='One of device_put args'):
        """JAX's error when the spec does not fit `shape`; `subject` names
        the value ('One of pjit arguments with pytree key path x')."""
        if len(self.spec) > len(shape):
            raise ValueError(f'{subject} was given the sharding of {self!r}, whose spec has '
                             f'{len(self.spec)} entries, but {what} has rank {len(shape)} (shape {tuple(shape)}): a '
                             'spec has at most one entry per dimension')
        for d, part in enumerate(self.spec):
            names = () if part is None else (part if isinstance(part, tuple) else (part,))
            n = 1
            for name in names:
                if name not in self.mesh.shape:
                    raise ValueError(f'Resource axis: {name} of {self.spec!r} is not found in mesh: '
                                     f'{tuple(self.mesh.axis_names)}.')
                n *= self.mesh.shape[name]
            if shape[d] % n:
                raise ValueError(f'{subject} was given the sharding of {self!r}, which implies that '
                                 f'the global size of its dimension {d} should be divisible by {n}, but it is equal '
                                 f'to {shape[d]} (full shape: {tuple(shape)})')

    def shards_of(self, array):
        shards = []
        for coords in np.ndindex(*self.mesh.devices.shape):
            index = _block_index(array.shape, self.spec, self.mesh, coords)
            shards.append(Shard(self.mesh.devices[coords], index, array[index] if index else array))
        return shards

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and self.mesh == other.mesh and tuple(self.spec) == tuple(other.spec)

    def __hash__(self):
        return hash((self.mesh, tuple(self.spec)))

    def __repr__(self):
        return f'NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})'


class Shard:
    """One device's block of an array (Array.addressable_shards)."""

    def __init__(self, device, index, data, replica_id=0):
        self.device, self.index, self.data, self.replica_id = device, index, data, replica_id

    def __repr__(self):
        return f'Shard(device={self.device!r}, index={self.index!r}, replica_id={self.replica_id}, data={self.data})'


def _block_index(shape, spec, mesh, coords):
    """The slices of `shape` the device at mesh `coords` holds under `spec`."""
    index = []
    for d, size in enumerate(shape):
        part = spec[d] if d < len(spec) else None
        names = () if part is None else (part if isinstance(part, tuple) else (part,))
        split, pos = 1, 0
        for n in names:
            k = mesh.axis_names.index(n)
            pos = pos * mesh.devices.shape[k] + coords[k]
            split *= mesh.devices.shape[k]
        block = size // split
        index.append(slice(pos * block, (pos + 1) * block) if names else slice(None))
    return tuple(index)


class SingleDeviceSharding(Sharding):
    """The whole array on one device (what an array has unless device_put
    laid it out over a mesh)."""

    def __init__(self, device_id=0):
        self.device_id = device_id

    @property
    def device_set(self):
        return {api.devices()[self.device_id]}

    @property
    def is_fully_replicated(self):
        return True

    def shards_of(self, array):
        return [Shard(api.devices()[self.device_id], tuple(slice(None) for _ in array.shape), array)]

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other.device_id == self.device_id

    def __hash__(self):
        return hash(self.device_id)

    def __repr__(self):
        return f'SingleDeviceSharding(device={api.devices()[self.device_id]!r})'


# --- a layout inside traced programs ----------------------------------------------

def constrain(x, sharding):
    """`x` laid out by `sharding` (a NamedSharding): a concrete array keeps
    it; in a trace a sharding_constraint equation records it, and a jit
    gives its result that layout (sharding_of)."""
    if isinstance(x, core.Tracer):
        mesh = sharding.mesh
        spec = tuple('' if p is None else ','.join(p) if isinstance(p, tuple) else p for p in sharding.spec)
        return core.bind1('sharding_constraint', x, mesh_ids=tuple(mesh.device_id_list),
                          mesh_shape=tuple(mesh.axis_sizes), axis_names=tuple(mesh.axis_names), spec=spec)
    value = x._value if isinstance(x, core.ArrayImpl) else core.to_spmd_array(x)
    return core.ArrayImpl(value, sharding)


def sharding_of(params):
    """The NamedSharding a sharding_constraint equation's parameters describe."""
    devices = np.array([api.Device(int(i)) for i in params['mesh_ids']], dtype=object)
    mesh = Mesh(devices.reshape(tuple(int(d) for d in params['mesh_shape'])), tuple(params['axis_names']))
    parts = [None if not p else tuple(p.split(',')) if ',' in p else p for p in params['spec']]
    return NamedSharding(mesh, PartitionSpec(*parts))


def is_sharding_spec(x):
    """A leaf of a tree of shardings: None, a NamedSharding or a PartitionSpec."""
    return x is None or isinstance(x, (NamedSharding, PartitionSpec))


def named(spec, what):
    """`spec` as a NamedSharding: a PartitionSpec takes the mesh set around
    the call (use_mesh / set_mesh), as JAX's jit and with_sharding_constraint
    do; `what` names the caller in the error when none is set."""
    if not isinstance(spec, PartitionSpec):
        return spec
    if not Mesh._stack:
        err = ValueError(f'{what} got {spec!r}, a PartitionSpec, but no mesh is set to give it devices')
        err._spmd_hint = ('pass NamedSharding(mesh, P(...)), or set a mesh: with jax.sharding.use_mesh(mesh): ... '
                          'or jax.set_mesh(mesh)')
        raise err
    return NamedSharding(Mesh._stack[-1], spec)


def with_sharding_constraint(x, shardings):
    """jax.lax.with_sharding_constraint: the values unchanged, laid out as
    `shardings` (a NamedSharding, or a PartitionSpec under a mesh context, or
    a pytree prefix of them) says; checked to fit."""
    from jax._src import tree_util
    leaves, tree = tree_util.tree_flatten(x)
    specs = tree_util.broadcast_prefix(shardings, tree, 'with_sharding_constraint shardings', is_spec=is_sharding_spec)
    paths = tree_util.tree_paths(tree)
    out = []
    for leaf, s, path in zip(leaves, specs, paths):
        if s is None:
            out.append(leaf)
            continue
        s = named(s, 'with_sharding_constraint')
        s.check(core.aval_of(leaf).shape, 'x' + path,
                f'One of with_sharding_constraint arguments with pytree key path x{path}')
        out.append(constrain(leaf, s))
    return tree.unflatten(out)


class _UseMesh:
    """`with jax.sharding.use_mesh(mesh):`, the mesh shard_map uses when it is
    given none."""

    def __init__(self, mesh):
        self.mesh = mesh

    def __enter__(self):
        return self.mesh.__enter__()

    def __exit__(self, *exc):
        return self.mesh.__exit__(*exc)


def use_mesh(mesh):
    return _UseMesh(mesh)


def set_mesh(mesh):
    """Sets the mesh shard_map uses when given none, for the rest of the
    program (jax.set_mesh); returns the mesh set before, or None."""
    before = Mesh._stack[0] if Mesh._stack else None
    if Mesh._stack:
        Mesh._stack[0] = mesh
    else:
        Mesh._stack.append(mesh)
    return before
