# spmd: devices=4 expect=error:ShapeError expect-message=note: argument 1 'w' (shape (4, 3)) is replicated
# in_axes=None where a split was meant: each device should get one row of w
# (shape (3,)) but receives the whole (4, 3) matrix, so the dot product inside
# sees the wrong shapes. spmdsim adds a note naming the suspicious argument.
import jax
import jax.numpy as jnp


def f(x, w):
    return jnp.dot(w, x) + jnp.ones(3)

x = jnp.ones((4, 3))
w = jnp.ones((4, 3))
print(jax.pmap(f, in_axes=(0, None))(x, w))
