# spmd: devices=2 expect=ok
# spmd: expect-stdout: device value 0.0 -> small
# spmd: expect-stdout: device value 5.0 -> large
# spmd: expect-stdout: [0. 5.]
# Under jax.disable_jit() the mapped function runs per device with concrete
# values, so a Python `if` works (and print shows real data): a last-resort
# way to get plain Python errors, as the guide says.
import jax
import jax.numpy as jnp


def f(x):
    if x > 1.0:
        print("device value", float(x), "-> large")
    else:
        print("device value", float(x), "-> small")
    return x

with jax.disable_jit():
    print(jax.pmap(f)(jnp.array([0.0, 5.0])))
