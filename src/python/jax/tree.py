"""jax.tree: the short names of jax.tree_util."""

from jax._src.tree_util import tree_flatten as flatten
from jax._src.tree_util import tree_leaves as leaves
from jax._src.tree_util import tree_map as map
from jax._src.tree_util import tree_structure as structure
from jax._src.tree_util import tree_unflatten as unflatten

__all__ = ['flatten', 'leaves', 'map', 'structure', 'unflatten']
