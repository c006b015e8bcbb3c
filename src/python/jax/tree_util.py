"""jax.tree_util"""
from jax._src.tree_util import (PyTreeDef, register_pytree_node, register_pytree_node_class, tree_flatten,
                                tree_leaves, tree_map, tree_reduce, tree_structure, tree_unflatten)

__all__ = ['PyTreeDef', 'register_pytree_node', 'register_pytree_node_class', 'tree_flatten', 'tree_leaves',
           'tree_map', 'tree_reduce', 'tree_structure', 'tree_unflatten']
