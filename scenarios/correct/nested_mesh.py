# spmd: devices=8 expect=ok
# spmd: expect-stdout: per data row: [[ 6.  6.  6.  6.]
# spmd: expect-stdout:  [22. 22. 22. 22.]]
# spmd: expect-stdout: per model column: [[ 4.  6.  8. 10.]
# spmd: expect-stdout:  [ 4.  6.  8. 10.]]
# spmd: expect-stdout: over both: 28.0
# A 2 x 4 mesh built from nested pmaps: 'data' outside, 'model' inside. Nested
# pmaps are the original pmap's (JAX < 0.8, or jax_pmap_shmap_merge off); since
# JAX 0.8 a mesh is one jax.shard_map (scenarios/shard_map/).
# Collectives run over one axis or over a tuple of axes.
import jax
import jax.numpy as jnp
from jax import lax

jax.config.update('jax_pmap_shmap_merge', False)


def inner(x):
    return (lax.psum(x, 'model'), lax.psum(x, 'data'), lax.psum(x, ('data', 'model')))

def outer(x):
    return jax.pmap(inner, axis_name='model')(x)

rows, cols, both = jax.pmap(outer, axis_name='data')(jnp.arange(8.0).reshape(2, 4))
print("per data row:", rows)
print("per model column:", cols)
print("over both:", float(both[1, 3]))
