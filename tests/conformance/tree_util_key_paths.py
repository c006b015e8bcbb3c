# jax.tree_util as flax, equinox and optax walk trees: key paths (SequenceKey, DictKey, GetAttrKey),
# keystr, OrderedDict/defaultdict/namedtuple/dataclass nodes, prefix trees in tree_map, transpose, Partial.
import collections, dataclasses, jax, jax.numpy as jnp
from jax import tree_util as tu
t = {'b': [1, (2, 3)], 'a': collections.OrderedDict(z=4, y=5), 'n': None}
kl, d = tu.tree_flatten_with_path(t)
print([tu.keystr(p) for p, _ in kl]); print(d)
print(tu.keystr(kl[0][0], simple=True, separator='/'))
P = collections.namedtuple('P', 'x y'); print(tu.tree_flatten_with_path(P(1, 2)))
print(tu.tree_map(lambda a, b: (a, b), [1, 2], [[3], {'q': 4}]))
print(jax.tree.transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0)), [(1, 2), (3, 4)]))
print(jax.tree.reduce_associative(lambda a, b: f'({a}+{b})', [1, 2, 3, 4, 5]))
@dataclasses.dataclass
class C:
    w: int
    s: str = dataclasses.field(metadata=dict(static=True), default='k')
tu.register_dataclass(C)
print(tu.tree_flatten_with_path(C(3))); print(tu.tree_map(lambda x: x * 2, C(3)))
print(tu.tree_leaves(tu.Partial(lambda a, b: a + b, 1)), tu.Partial(lambda a, b: a + b, 1)(2))
try: tu.tree_unflatten(d, [1])
except ValueError as e: print('ValueError', e)
try: tu.tree_map(lambda a, b: a, [1, 2], [1])
except ValueError as e: print('ValueError', type(e).__name__)
print(tu.treedef_is_leaf(tu.tree_structure(1)), tu.tree_structure((1, [2])).children(), tu.tree_structure((1, 2)).num_nodes)
print(tu.tree_all([True, 1]), tu.all_leaves([1, 2]), tu.all_leaves([[1]]))
print(tu.tree_leaves(collections.defaultdict(list, b=1, a=2)))
class D(dict): pass
print(tu.tree_leaves(D(a=1)))
print(jax.tree.leaves_with_path({'a': [1]}))
