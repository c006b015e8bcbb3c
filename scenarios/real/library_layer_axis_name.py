# spmd: devices=4 expect=error:AxisNameError expect-line=23 expect-message=data
# A reusable layer hard-codes the axis it averages batch statistics over
# (cross-replica batch norm, axis "batch"), while the training script maps
# its step over an axis named "data". JAX fails when it traces the pmean;
# spmdsim's report names the unbound axis, the axes that are bound, and
# the line inside the layer.
from functools import partial

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


class CrossReplicaBatchNorm:
    def __init__(self, features, axis_name="batch", eps=1e-5):
        self.scale = jnp.ones(features)
        self.bias = jnp.zeros(features)
        self.axis_name = axis_name
        self.eps = eps

    def __call__(self, x):
        mean = lax.pmean(jnp.mean(x, axis=0), self.axis_name)
        var = lax.pmean(jnp.mean((x - mean) ** 2, axis=0), self.axis_name)
        return (x - mean) / jnp.sqrt(var + self.eps) * self.scale + self.bias


norm = CrossReplicaBatchNorm(3)


@partial(jax.pmap, axis_name="data")
def forward(x):
    return norm(x)


x = np.random.default_rng(0).normal(size=(4, 8, 3)).astype(np.float32)
print(forward(x).shape)
