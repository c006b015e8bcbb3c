"""Pytrees as JAX defines them: tuples, lists, dicts (sorted keys), None
(no leaves), namedtuples, OrderedDict/defaultdict, and registered node types;
everything else is a leaf. Every child has a key (SequenceKey, DictKey,
GetAttrKey, FlattenedIndexKey) so that libraries can walk trees with paths
(tree_flatten_with_path, keystr), as flax, equinox and optax do."""

import collections
import dataclasses
import functools


# --- keys ----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f'[{self.idx!r}]'


@dataclasses.dataclass(frozen=True)
class DictKey:
    key: object

    def __str__(self):
        return f'[{self.key!r}]'


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f'.{self.name}'


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self):
        return f'[<flat index {self.key}>]'


def keystr(keys, *, simple=False, separator=''):
    """'.a[0]['w']' for a key path; simple=True gives the bare names joined by `separator`."""
    if not simple:
        return separator.join(str(k) for k in keys)

    def bare(k):
        for attr in ('idx', 'key', 'name'):
            if hasattr(k, attr):
                return str(getattr(k, attr))
        return str(k)
    return separator.join(bare(k) for k in keys)


# --- the registry ----------------------------------------------------------------------

class _Node:
    __slots__ = ('flatten', 'unflatten', 'flatten_with_keys')

    def __init__(self, flatten, unflatten, flatten_with_keys):
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys


_nodes = {}


def _check_new(nodetype):
    if nodetype in _nodes or nodetype in (tuple, list, dict, type(None)):
        raise ValueError(f'Duplicate custom PyTreeDef type registration for {nodetype}.')


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    _check_new(nodetype)
    _nodes[nodetype] = _Node(flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    if flatten_func is None:
        def flatten_func(x):
            keyed, aux = flatten_with_keys(x)
            return [c for _, c in keyed], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, 'tree_flatten') else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """A dataclass as a node: data_fields are children (GetAttrKey paths),
    meta_fields are static. Without the lists, fields marked
    `field(metadata=dict(static=True))` are meta, the others data."""
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError('register_dataclass: data_fields and meta_fields are required when the class is not '
                            f'a dataclass (got {nodetype.__name__})')
        data_fields, meta_fields = [], []
        for f in dataclasses.fields(nodetype):
            if f.metadata.get('static', False):
                meta_fields.append(f.name)
            elif f.init:
                data_fields.append(f.name)
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(meta, data):
        kwargs = dict(zip(meta_fields, meta))
        kwargs.update(zip(data_fields, data))
        obj = object.__new__(nodetype)
        for k, v in kwargs.items():
            object.__setattr__(obj, k, v)
        return obj
    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def register_static(cls):
    """A class whose instances are no-leaf nodes: the whole object is static data."""
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def _ordered_dict_flatten_with_keys(x):
    return [(DictKey(k), v) for k, v in x.items()], tuple(x.keys())


register_pytree_with_keys(collections.OrderedDict, _ordered_dict_flatten_with_keys,
                          lambda keys, values: collections.OrderedDict(zip(keys, values)))


def _default_dict_flatten_with_keys(x):
    keys = sorted(x.keys())
    return [(DictKey(k), x[k]) for k in keys], (x.default_factory, tuple(keys))


register_pytree_with_keys(collections.defaultdict, _default_dict_flatten_with_keys,
                          lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)))


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), '_fields')


# --- PyTreeDef -------------------------------------------------------------------------

class PyTreeDef:
    """Immutable once made: its key (what equality and hashing compare) is
    computed once, since every pmap or jit call looks its tree up in a cache."""
    __slots__ = ('kind', 'meta', '_children', 'num_leaves', '_k', '_h', '__weakref__')

    def __init__(self, kind, meta, children):
        self.kind = kind          # 'leaf', 'none', 'tuple', 'list', 'dict', 'namedtuple', 'custom'
        self.meta = meta
        self._children = tuple(children)
        self.num_leaves = 1 if kind == 'leaf' else sum(c.num_leaves for c in self._children)
        self._k = None
        self._h = None

    def _key(self):
        if self._k is None:
            meta = self.meta
            if self.kind == 'custom':
                cls, aux = meta
                try:
                    hash(aux)
                    meta = (cls, aux)
                except TypeError:
                    meta = (cls, repr(aux))
            self._k = (self.kind, meta, tuple(c._key() for c in self._children))
        return self._k

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return False
        try:
            return bool(self._key() == other._key())
        except Exception:  # aux data whose == is elementwise (arrays)
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        if self._h is None:
            self._h = hash(self._key())
        return self._h

    def __repr__(self):
        return f'PyTreeDef({self._str()})'

    def _str(self):
        if self.kind == 'leaf':
            return '*'
        if self.kind == 'none':
            return 'None'
        inner = ', '.join(c._str() for c in self._children)
        if self.kind == 'tuple':
            return f'({inner}{"," if len(self._children) == 1 else ""})'
        if self.kind == 'list':
            return f'[{inner}]'
        if self.kind == 'dict':
            return '{' + ', '.join(f'{k!r}: {c._str()}' for k, c in zip(self.meta, self._children)) + '}'
        if self.kind == 'namedtuple':
            return f'CustomNode(namedtuple[{self.meta.__name__}], [{inner}])'
        return f'CustomNode({self.meta[0].__name__}[{self.meta[1]!r}], [{inner}])'

    # JAX's PyTreeDef methods --------------------------------------------------------
    @property
    def num_nodes(self):
        return 1 + sum(c.num_nodes for c in self._children)

    def children(self):
        return list(self._children)

    def node_data(self):
        """(type, aux data) of the root node; None for a leaf."""
        if self.kind == 'leaf':
            return None
        if self.kind == 'custom':
            return self.meta
        typ = {'none': type(None), 'tuple': tuple, 'list': list, 'dict': dict}.get(self.kind, self.meta)
        return (typ, self.meta if self.kind == 'dict' else None)

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f'Too {"few" if len(leaves) < self.num_leaves else "many"} leaves for PyTreeDef; '
                             f'expected {self.num_leaves}, got {len(leaves)}')
        return self._build(iter(leaves))

    def _build(self, it):
        if self.kind == 'leaf':
            return next(it)
        if self.kind == 'none':
            return None
        return self._make([c._build(it) for c in self._children])

    def _make(self, kids):
        if self.kind == 'tuple':
            return tuple(kids)
        if self.kind == 'list':
            return kids
        if self.kind == 'dict':
            return dict(zip(self.meta, kids))
        if self.kind == 'namedtuple':
            return self.meta(*kids)
        if self.kind == 'none':
            return None
        cls, aux = self.meta
        return _nodes[cls].unflatten(aux, kids)

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this treedef's leaves (tree_map's extra trees)."""
        out = []

        def walk(d, x):
            if d.kind == 'leaf':
                out.append(x)
                return
            kids = d._children_of(x, compare_custom_aux=True)
            if kids is None:
                raise ValueError(f'Tree structure mismatch: expected {d}, got a value with structure '
                                 f'{tree_structure(x)}.')
            for c, k in zip(d._children, kids):
                walk(c, k)
        walk(self, tree)
        return out

    def _children_of(self, x, compare_custom_aux):
        """x's children when x's root node is this treedef's (same type, arity,
        dict keys, and with compare_custom_aux a custom node's aux data), else None."""
        shallow = _flatten_one_level(x)
        if shallow is None or shallow[0] != self._node_type() or len(shallow[1]) != len(self._children):
            return None
        if (self.kind == 'dict' or (compare_custom_aux and self.kind == 'custom')) and shallow[2] != self.meta:
            return None
        return shallow[1]

    def _node_type(self):
        if self.kind == 'custom':
            return self.meta[0]
        if self.kind == 'namedtuple':
            return self.meta
        return self.kind


def _flatten_one_level(x):
    """(node type as PyTreeDef._node_type names it, children, meta) or None for a leaf."""
    if x is None:
        return ('none', [], None)
    t = type(x)
    node = _nodes.get(t)
    if node is not None:
        children, aux = node.flatten(x)
        return (t, list(children), (t, aux))
    if _is_namedtuple(x):
        return (t, list(x), t)
    if t is tuple:
        return ('tuple', list(x), None)
    if t is list:
        return ('list', list(x), None)
    if t is dict:
        keys = _sorted_keys(x)
        return ('dict', [x[k] for k in keys], keys)
    return None


def _sorted_keys(d):
    try:
        return tuple(sorted(d.keys()))
    except TypeError:  # keys of mixed types: JAX orders them by (type name, key)
        return tuple(sorted(d.keys(), key=lambda k: (type(k).__name__, k)))


# Every leaf and every None have the same (immutable) treedef.
_LEAF = PyTreeDef('leaf', None, ())
_NONE = PyTreeDef('none', None, ())


def _flatten(x, leaves, is_leaf):
    """The treedef of x; its leaves appended to `leaves`. The hot path of every
    pmap and jit call: no key objects are made here (see _flatten_with_keys)."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    if x is None:
        return _NONE
    t = type(x)
    node = _nodes.get(t)
    if node is not None:
        children, aux = node.flatten(x)
        return PyTreeDef('custom', (t, aux), [_flatten(c, leaves, is_leaf) for c in children])
    if _is_namedtuple(x):
        return PyTreeDef('namedtuple', t, [_flatten(c, leaves, is_leaf) for c in x])
    if t is tuple or t is list:
        return PyTreeDef('tuple' if t is tuple else 'list', None, [_flatten(c, leaves, is_leaf) for c in x])
    if t is dict:
        keys = _sorted_keys(x)
        return PyTreeDef('dict', keys, [_flatten(x[k], leaves, is_leaf) for k in keys])
    leaves.append(x)
    return _LEAF


def _flatten_with_keys(x, leaves, is_leaf, paths, path):
    """_flatten, also appending each leaf's key path to `paths`."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        paths.append(path)
        return _LEAF
    if x is None:
        return _NONE
    t = type(x)
    node = _nodes.get(t)
    if node is not None:
        if node.flatten_with_keys is not None:
            keyed, aux = node.flatten_with_keys(x)
        else:
            children, aux = node.flatten(x)
            keyed = [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]
        return PyTreeDef('custom', (t, aux), [_flatten_with_keys(c, leaves, is_leaf, paths, path + (k,))
                                              for k, c in keyed])
    if _is_namedtuple(x):
        return PyTreeDef('namedtuple', t, [_flatten_with_keys(c, leaves, is_leaf, paths, path + (GetAttrKey(f),))
                                           for f, c in zip(t._fields, x)])
    if t is tuple or t is list:
        return PyTreeDef('tuple' if t is tuple else 'list', None,
                         [_flatten_with_keys(c, leaves, is_leaf, paths, path + (SequenceKey(i),))
                          for i, c in enumerate(x)])
    if t is dict:
        keys = _sorted_keys(x)
        return PyTreeDef('dict', keys, [_flatten_with_keys(x[k], leaves, is_leaf, paths, path + (DictKey(k),))
                                        for k in keys])
    leaves.append(x)
    paths.append(path)
    return _LEAF


# --- the public functions ---------------------------------------------------------------

def tree_flatten(tree, is_leaf=None):
    leaves = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def tree_flatten_with_path(tree, is_leaf=None):
    leaves, paths = [], []
    treedef = _flatten_with_keys(tree, leaves, is_leaf, paths, ())
    return list(zip(paths, leaves)), treedef


def tree_unflatten(treedef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def _rest_leaves(treedef, rest):
    try:
        return [treedef.flatten_up_to(r) for r in rest]
    except ValueError:
        for r in rest:
            rdef = tree_structure(r)
            if rdef != treedef:
                raise ValueError(f'Custom node type mismatch; expected type: {treedef}, got {rdef}.') from None
        raise


def tree_map(f, tree, *rest, is_leaf=None):
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = _rest_leaves(treedef, rest)
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    keyed, treedef = tree_flatten_with_path(tree, is_leaf)
    others = _rest_leaves(treedef, rest)
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(keyed, *others)])


def tree_reduce(function, tree, initializer=None, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is None:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None):
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable, is_leaf=None):
    return all(tree_structure(x, is_leaf) == _LEAF for x in iterable)


def treedef_is_leaf(treedef):
    return treedef.num_nodes == 1


def treedef_children(treedef):
    return treedef.children()


def treedef_tuple(treedefs):
    return PyTreeDef('tuple', None, list(treedefs))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    flat = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(flat[0])
    inner = [inner_treedef.flatten_up_to(x) for x in flat]
    columns = list(zip(*inner)) if inner else [[] for _ in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in columns])


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    full_def = tree_structure(full_tree, is_leaf)
    return full_def.unflatten(broadcast_prefix(prefix_tree, full_def, 'tree_broadcast', lambda x: False))


class _Unmerged:
    """Holds a functools.partial given to Partial, so that partial.__new__
    does not merge its bound arguments into the Partial's (they stay static)."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        return self.fun == (other.fun if isinstance(other, _Unmerged) else other)


class Partial(functools.partial):
    """functools.partial as a pytree: the bound arguments are its children,
    the function static (so a Partial can cross jit and be traced)."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            func = _Unmerged(func)
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))


# --- spmdsim's helpers (reports and pmap/shard_map specs) -----------------------------

def tree_paths(treedef):
    """The key path of every leaf, as JAX's keystr prints it: "['w']", "[0]", ".bias"."""
    out = []

    def walk(d, prefix):
        if d.kind == 'leaf':
            out.append(prefix)
            return
        for i, c in enumerate(d._children):
            if d.kind == 'dict':
                walk(c, f'{prefix}[{d.meta[i]!r}]')
            elif d.kind == 'namedtuple':
                walk(c, f'{prefix}.{d.meta._fields[i]}')
            else:
                walk(c, f'{prefix}[{i}]')
    walk(treedef, '')
    return out


def _axis_spec(x):
    return x is None or isinstance(x, int)


def broadcast_prefix(prefix_tree, full_treedef, what, is_spec=_axis_spec):
    """One value per leaf of `full_treedef` from a tree that is a prefix of it
    (pmap's in_axes / out_axes; shard_map's specs, with their own `is_spec`).
    Raises ValueError as JAX does otherwise."""
    out = []

    def walk(prefix, d):
        if is_spec(prefix) or d.kind == 'leaf':
            out.extend([prefix] * d.num_leaves)
            return
        kids = d._children_of(prefix, compare_custom_aux=False)
        if kids is None:
            # JAX names the whole specification and value tree, not the part that differs.
            raise ValueError(f'{what} specification must be a tree prefix of the corresponding value, got '
                             f'specification {prefix_tree!r} for value tree {full_treedef}.')
        for p, c in zip(kids, d._children):
            walk(p, c)
    walk(prefix_tree, full_treedef)
    return out
