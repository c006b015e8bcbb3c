# chex unchanged on spmdsim's jax (its asserts, dataclass, restrict_backends, chexify,
# assert_numerical_grads), and jax.experimental.checkify's user checks under jit.
import jax
import jax.numpy as jnp
import numpy as np
import chex
from jax.experimental import checkify


def outcome(f):
    try:
        f()
        return 'passed'
    except Exception as e:  # the class JAX and chex raise, and the first line of the message
        return f'{type(e).__name__}: {str(e).splitlines()[0][:100]}'


x = jnp.ones((2, 3))
print(outcome(lambda: chex.assert_shape(x, (2, 3))))
print(outcome(lambda: chex.assert_shape(x, (2, 4))))
print(outcome(lambda: chex.assert_rank(x, 2)))
print(outcome(lambda: chex.assert_type(x, jnp.float32)))
print(outcome(lambda: chex.assert_trees_all_close({'a': x}, {'a': x + 1e-7})))
print(outcome(lambda: chex.assert_trees_all_close({'a': x}, {'a': x + 1.0})))
print(outcome(lambda: chex.assert_trees_all_equal_shapes({'a': x}, {'a': x[0]})))
print(outcome(lambda: chex.assert_equal_shape([x, x])))
print(outcome(lambda: chex.assert_tree_all_finite({'a': x, 'b': jnp.array([1.0, jnp.inf])})))


@chex.dataclass
class Params:
    w: chex.Array
    b: chex.Array


p = Params(w=jnp.ones(2), b=jnp.zeros(()))
print(jax.tree.map(lambda a: a * 2, p))
print(jax.tree_util.tree_structure(p).num_leaves, p.replace(b=jnp.ones(())).b)


@jax.jit
def shapes(a):
    chex.assert_shape(a, (None, 3))
    return a.sum()


print(float(shapes(x)))
with chex.restrict_backends(allowed=['cpu']):
    print(float(jax.jit(lambda a: a * 3)(jnp.ones(())).sum()))


def positive_sum(a):
    checkify.check(jnp.all(a > 0), 'a must be positive, got min {}', a.min())
    return a.sum()


err, out = jax.jit(checkify.checkify(positive_sum))(jnp.array([1.0, -2.0]))
print(err.get(), float(out))
print(outcome(lambda: chex.chexify(lambda a: (chex.assert_tree_all_finite(a), a)[1])(jnp.array([1.0, jnp.nan]))))
chex.assert_numerical_grads(lambda a: jnp.sum(jnp.sin(a) * a), (jnp.array([0.3, 1.2]),), order=1)
print('numerical grads ok')
