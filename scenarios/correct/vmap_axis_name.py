# spmd: devices=4 expect=ok
# spmd: expect-stdout: normalized: [0.         0.16666667 0.33333334 0.5       ]
# spmd: expect-stdout: centred over i and j: [[-1.5 -0.5]
# spmd: expect-stdout:  [ 0.5  1.5]]
# spmd: expect-stdout: positions: [[0 1]
# spmd: expect-stdout:  [2 3]]
# spmd: expect-stdout: gradient averaged over 4 devices x 8 examples: [-0.7324219 -0.9394531]
# Collectives over a vmapped axis, as in JAX's tutorial: psum over the
# batch of one vmap, pmean and axis_index over a tuple of two nested vmaps'
# axes, and per-example gradients (vmap of grad) averaged over the batch
# and the devices inside a pmap.
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax


def normalize(x):
    return x / lax.psum(x, 'i')


print('normalized:', jax.vmap(normalize, axis_name='i')(jnp.arange(4.0)))

centre = jax.vmap(jax.vmap(lambda x: x - lax.pmean(x, ('i', 'j')), axis_name='j'), axis_name='i')
print('centred over i and j:', centre(jnp.arange(4.0).reshape(2, 2)))
positions = jax.vmap(jax.vmap(lambda x: lax.axis_index(('i', 'j')), axis_name='j'), axis_name='i')
print('positions:', positions(jnp.zeros((2, 2))))


def loss(w, x):
    return (jnp.dot(w, x) - 1.0) ** 2


def averaged_gradient(w, examples):
    def example_gradient(x):
        # The mean over the batch and the devices: the same for every example,
        # so out_axes=None returns it once.
        return lax.pmean(jax.grad(loss)(w, x), ('devices', 'batch'))
    return jax.vmap(example_gradient, axis_name='batch', out_axes=None)(examples)


w = jnp.array([0.5, -0.25])
examples = (jnp.arange(64.0).reshape(4, 8, 2) % 5) / 4
g = jax.pmap(averaged_gradient, axis_name='devices', in_axes=(None, 0))(w, examples)
flat = np.asarray(examples).reshape(32, 2)
reference = np.mean([2 * (np.dot(np.asarray(w), x) - 1.0) * x for x in flat], axis=0)
assert np.allclose(np.asarray(g[0]), reference, rtol=1e-6), (g, reference)
print('gradient averaged over 4 devices x 8 examples:', np.asarray(g[0]))
