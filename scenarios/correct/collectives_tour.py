# spmd: devices=4 expect=ok
# spmd: expect-stdout: psum [6. 6. 6. 6.]
# spmd: expect-stdout: pmax [3. 3. 3. 3.]
# spmd: expect-stdout: psum_scatter [24 28 32 36]
# spmd: expect-stdout: all_to_all [ 0  4  8 12]
# spmd: expect-stdout: groups [2. 4. 2. 4.]
# Each collective's result, checked against the values worked out by hand.
import jax
import jax.numpy as jnp
from jax import lax


def tour(x, m):
    return (lax.psum(x, 'i'), lax.pmax(x, 'i'), lax.psum_scatter(m, 'i'), lax.all_to_all(m, 'i', 0, 0),
            lax.psum(x, 'i', axis_index_groups=[[0, 2], [1, 3]]))

x = jnp.arange(4.0)
m = jnp.arange(16).reshape(4, 4)
s, mx, sc, a2a, g = jax.pmap(tour, axis_name='i')(x, m)
print("psum", s)
print("pmax", mx)
print("psum_scatter", sc)
print("all_to_all", a2a[0])
print("groups", g)
