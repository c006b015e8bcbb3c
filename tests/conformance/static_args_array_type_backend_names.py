# Issue 33's programs: static_argnames passed positionally (jax issue #10969), pmap in_axes with static
# arguments (#4638), static_argnums
# passed by keyword, type(x) of an array, the Pmap Cookbook's xla_bridge, and jax.lib.xla_bridge
# as JAX 0.8.1 has it (its functions removed, with the new name in the error).
import jax
import jax.numpy as jnp
from jax._src import xla_bridge


def func(a, b, c):
    return jnp.arange(a) * b + c


print(jax.jit(func, static_argnames=["a", "b", "c"])(5, 4, 2))
print(jax.jit(func, static_argnums=(0,))(a=3, b=1, c=0))
print(jax.jit(func, static_argnames="a")(4, b=jnp.float32(2), c=1))
print(type(jnp.ones(2)))
try:
    hash(jnp.ones(2))
except TypeError as e:
    print(e)
print(xla_bridge.get_backend().platform, xla_bridge.device_count(), xla_bridge.get_backend().device_count())
from jax.lib import xla_bridge as old_bridge
try:
    old_bridge.get_backend()
except AttributeError as e:
    print(e)
import jax.extend
print(jax.extend.backend.get_backend().platform)


def scaled(x, n, scale):  # jax issue #4638: in_axes covers the dynamic argument only
    return x * n * scale


print(jax.pmap(scaled, in_axes=(0,), static_broadcasted_argnums=(1, 2))(jnp.arange(8.0), 2, 3))
