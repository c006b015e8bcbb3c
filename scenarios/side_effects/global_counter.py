# spmd: devices=4 expect=ok
# spmd: expect-stdout: calls counted: 1
# Rebinding a global inside the mapped function happens once (at trace time),
# not once per device: the counter ends at 1, not 4.
import jax
import jax.numpy as jnp

calls = 0


def f(x):
    global calls
    calls += 1
    return x

jax.pmap(f)(jnp.arange(4.0))
print("calls counted:", calls)
