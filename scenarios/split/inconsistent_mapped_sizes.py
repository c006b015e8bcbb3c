# spmd: devices=4 expect=error:InputSplitError expect-line=14 expect-message=argument y has size 3 along axis 0, where argument x has size 4
# Two mapped arguments whose leading axes differ: x has 4 rows (one per
# device), y has 3 elements. Every mapped axis must equal the device count;
# an argument meant to be the same on every device needs in_axes=None.
import jax
import jax.numpy as jnp


def f(x, y):
    return x + y

x = jnp.ones((4, 3))
y = jnp.arange(3.0)
print(jax.pmap(f)(x, y))
