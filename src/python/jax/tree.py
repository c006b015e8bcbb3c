"""jax.tree: the short names of jax.tree_util."""

import functools as _functools

from jax._src.tree_util import tree_all as all
from jax._src.tree_util import tree_broadcast as broadcast
from jax._src.tree_util import tree_flatten as flatten
from jax._src.tree_util import tree_flatten_with_path as flatten_with_path
from jax._src.tree_util import tree_leaves as leaves
from jax._src.tree_util import tree_leaves_with_path as leaves_with_path
from jax._src.tree_util import tree_map as map
from jax._src.tree_util import tree_map_with_path as map_with_path
from jax._src.tree_util import tree_reduce as reduce
from jax._src.tree_util import tree_structure as structure
from jax._src.tree_util import tree_transpose as _tree_transpose
from jax._src.tree_util import tree_unflatten as unflatten


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    return _tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def reduce_associative(operation, tree, *, identity=None, is_leaf=None):
    """Pairwise (tree-shaped) reduction of the leaves, as JAX's does."""
    xs = leaves(tree, is_leaf=is_leaf)
    if not xs:
        if identity is None:
            raise TypeError('Must specify identity for parallel reduction of empty sequence.')
        return identity

    def halves(seq):
        if len(seq) == 1:
            return seq[0]
        mid = len(seq) // 2
        return operation(halves(seq[:mid]), halves(seq[mid:]))
    return halves(xs)


__all__ = ['all', 'broadcast', 'flatten', 'flatten_with_path', 'leaves', 'leaves_with_path', 'map', 'map_with_path',
           'reduce', 'reduce_associative', 'structure', 'transpose', 'unflatten']
