# spmd: devices=2 expect=ok
# spmd: expect-stdout: breakpoint: 2 devices stopped at breakpoint_shows_every_device.py:15:5
# spmd: expect-stdout:   [device 0] x = [0. 1.]
# spmd: expect-stdout:   [device 0] y = [0. 2.]
# spmd: expect-stdout:   [device 1] x = [2. 3.]
# spmd: expect-stdout:   [device 1] y = [4. 6.]
# spmd: expect-stdout: [[4. 8.]
# spmd: expect-stdout:  [4. 8.]]
import jax
import jax.numpy as jnp


def f(x):
    y = x * 2
    jax.debug.breakpoint()
    return jax.lax.psum(y, 'i')

print(jax.pmap(f, axis_name='i')(jnp.arange(4.0).reshape(2, 2)))
