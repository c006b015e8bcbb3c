# spmd: devices=4 expect=ok
# spmd: expect-stdout: step 0 loss 0.656
# spmd: expect-stdout: step 10 loss 0.079
# spmd: expect-stdout: step 20 loss 0.028
# spmd: expect-stdout: accuracy on 32 new images: 1.00
# A small convolutional classifier trained data-parallel, written the way
# such scripts are: XLA_FLAGS for CPU devices, a NamedTuple of parameters,
# NHWC images with an HWIO kernel (lax.conv_general_dilated), a cross-entropy
# through take_along_axis, pmean'd gradients and a loss averaged over devices.
import os
os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=4'
from typing import NamedTuple

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


class Params(NamedTuple):
    kernel: jnp.ndarray  # 3x3, 1 -> 4 channels
    dense: jnp.ndarray
    bias: jnp.ndarray


def init(key):
    k1, k2 = jax.random.split(key)
    return Params(jax.random.normal(k1, (3, 3, 1, 4)) * 0.3, jax.random.normal(k2, (4 * 4 * 4, 2)) * 0.1,
                  jnp.zeros(2))


def logits(p, images):
    h = lax.conv_general_dilated(images, p.kernel, (2, 2), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
    h = jax.nn.relu(h)
    return h.reshape(h.shape[0], -1) @ p.dense + p.bias


def loss(p, images, labels):
    logp = jax.nn.log_softmax(logits(p, images))
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def step(p, images, labels):
    l, g = jax.value_and_grad(loss)(p, images, labels)
    g = lax.pmean(g, 'devices')
    return jax.tree_util.tree_map(lambda w, d: w - 0.5 * d, p, g), lax.pmean(l, 'devices')


def batch(rng, n):
    labels = rng.integers(0, 2, size=(n, 8))
    images = rng.normal(size=(n, 8, 8, 8, 1)).astype(np.float32) * 0.5
    images[:, :, :4] += labels[..., None, None, None]  # class 1: a bright top half
    return images, labels


n = jax.device_count()
train = jax.pmap(step, axis_name='devices', in_axes=(None, 0, 0), out_axes=(None, None))
rng = np.random.default_rng(0)
params = init(jax.random.PRNGKey(0))
for i in range(30):
    params, l = train(params, *batch(rng, n))
    if i % 10 == 0:
        print(f'step {i} loss {float(l):.3f}')
images, labels = batch(rng, n)
predicted = jnp.argmax(logits(params, images.reshape(-1, 8, 8, 1)), axis=-1)
print(f'accuracy on {labels.size} new images: {float(jnp.mean(predicted == labels.reshape(-1))):.2f}')
