# Issue 33: vmap's error for mapped sizes that disagree over a large pytree (JAX PR #12800's case) is JAX's grouped
# text: a line per size, the most common first, with its first leaf and its type.
import jax
import jax.numpy as jnp

params = {f'layer{i}': {'w': jnp.ones((8, 3)), 'b': jnp.ones((8,))} for i in range(51)}
cases = [
    lambda: jax.vmap(lambda params, batch: batch)(params, jnp.ones((7, 2))),
    lambda: jax.vmap(lambda a, b, c: a)(jnp.ones((8,)), jnp.ones((4,)), jnp.ones((4, 2), jnp.int32)),
    lambda: jax.vmap(lambda a, b: a)(jnp.ones((8,)), jnp.ones((4,))),
    lambda: jax.vmap(lambda a, b: a, in_axes=(0, 1))(jnp.ones((3, 2)), jnp.ones((3, 2))),
]
for case in cases:
    try:
        case()
    except ValueError as e:
        print(e)
