# spmd: devices=4 expect=error:InputSplitError expect-line=13
# The learning rate is a scalar: it has no axis to split. It must be
# replicated with in_axes=None.
import jax
import jax.numpy as jnp


def sgd(w, lr):
    return w - lr * w

w = jnp.ones((4, 2))
lr = jnp.array(0.1)
print(jax.pmap(sgd, in_axes=(0, 0))(w, lr))
