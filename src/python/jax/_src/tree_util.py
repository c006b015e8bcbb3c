"""Pytrees as JAX defines them: tuples, lists, dicts (sorted keys), None
(no leaves), namedtuples, and registered node types; everything else is a leaf."""

import collections


class _Registry:
    def __init__(self):
        self.nodes = {}


_registry = _Registry()


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    _registry.nodes[nodetype] = (flatten_func, unflatten_func)


def register_pytree_node_class(cls):
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), '_fields')


class PyTreeDef:
    """Immutable once made: its key (what equality and hashing compare) is
    computed once, since every pmap or jit call looks its tree up in a cache."""
    __slots__ = ('kind', 'meta', 'children', 'num_leaves', '_k', '_h')

    def __init__(self, kind, meta, children):
        self.kind = kind          # 'leaf', 'none', 'tuple', 'list', 'dict', 'namedtuple', 'custom'
        self.meta = meta
        self.children = children
        self.num_leaves = 1 if kind == 'leaf' else sum(c.num_leaves for c in children)
        self._k = None
        self._h = None

    def _key(self):
        if self._k is None:
            self._k = (self.kind, repr(self.meta) if self.kind == 'custom' else self.meta,
                       tuple(c._key() for c in self.children))
        return self._k

    def __eq__(self, other):
        return self is other or (isinstance(other, PyTreeDef) and self._key() == other._key())

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
        inner = ', '.join(c._str() for c in self.children)
        if self.kind == 'tuple':
            return f'({inner}{"," if len(self.children) == 1 else ""})'
        if self.kind == 'list':
            return f'[{inner}]'
        if self.kind == 'dict':
            return '{' + ', '.join(f'{k!r}: {c._str()}' for k, c in zip(self.meta, self.children)) + '}'
        if self.kind == 'namedtuple':
            return f'{self.meta.__name__}({inner})'
        return f'CustomNode({self.meta[0].__name__}, [{inner}])'

    def unflatten(self, leaves):
        it = iter(leaves)
        out = self._build(it)
        return out

    def _build(self, it):
        if self.kind == 'leaf':
            return next(it)
        if self.kind == 'none':
            return None
        kids = [c._build(it) for c in self.children]
        if self.kind == 'tuple':
            return tuple(kids)
        if self.kind == 'list':
            return kids
        if self.kind == 'dict':
            return dict(zip(self.meta, kids))
        if self.kind == 'namedtuple':
            return self.meta(*kids)
        cls, aux = self.meta
        return _registry.nodes[cls][1](aux, kids)

    @property
    def num_nodes(self):
        return 1 + sum(c.num_nodes for c in self.children)


# Every leaf and every None have the same (immutable) treedef.
_LEAF = PyTreeDef('leaf', None, ())
_NONE = PyTreeDef('none', None, ())


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    if x is None:
        return _NONE
    t = type(x)
    if t in _registry.nodes:
        children, aux = _registry.nodes[t][0](x)
        return PyTreeDef('custom', (t, aux), [_flatten(c, leaves, is_leaf) for c in children])
    if _is_namedtuple(x):
        return PyTreeDef('namedtuple', t, [_flatten(c, leaves, is_leaf) for c in x])
    if t is tuple:
        return PyTreeDef('tuple', None, [_flatten(c, leaves, is_leaf) for c in x])
    if t is list:
        return PyTreeDef('list', None, [_flatten(c, leaves, is_leaf) for c in x])
    if isinstance(x, dict):
        keys = sorted(x.keys()) if not isinstance(x, collections.OrderedDict) else list(x.keys())
        return PyTreeDef('dict', tuple(keys), [_flatten(x[k], leaves, is_leaf) for k in keys])
    leaves.append(x)
    return _LEAF


def tree_flatten(tree, is_leaf=None):
    leaves = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def tree_unflatten(treedef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        rl, rdef = tree_flatten(r, is_leaf)
        if rdef != treedef:
            raise ValueError(f'Custom node type mismatch; expected type: {treedef}, got {rdef}.')
        others.append(rl)
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_reduce(function, tree, initializer=None, is_leaf=None):
    import functools
    leaves = tree_leaves(tree, is_leaf)
    if initializer is None:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_paths(treedef):
    """The key path of every leaf, as JAX's keystr prints it: "['w']", "[0]", ".bias"."""
    out = []

    def walk(d, prefix):
        if d.kind == 'leaf':
            out.append(prefix)
            return
        for i, c in enumerate(d.children):
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
        pleaves_def = _flatten(prefix, [], is_spec)
        if pleaves_def.kind != d.kind or len(pleaves_def.children) != len(d.children) or \
                (d.kind == 'dict' and tuple(sorted(prefix.keys())) != d.meta):
            # JAX names the whole specification and value tree, not the part that differs.
            raise ValueError(f'{what} specification must be a tree prefix of the corresponding value, got '
                             f'specification {prefix_tree!r} for value tree {full_treedef}.')
        kids = list(prefix.values()) if d.kind != 'dict' and isinstance(prefix, dict) else (
            [prefix[k] for k in d.meta] if d.kind == 'dict' else list(prefix))
        for p, c in zip(kids, d.children):
            walk(p, c)
    walk(prefix_tree, full_treedef)
    return out
