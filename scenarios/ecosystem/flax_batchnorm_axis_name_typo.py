# spmd: devices=8 requires=flax,optax expect=error:AxisNameError expect-line=17
# spmd: expect-message=pmean: unbound axis name: 'batchh'
# An axis_name typo inside a library layer: flax's BatchNorm averages its
# statistics with a pmean over axis_name, and 'batchh' is not the pmap's
# 'batch'. Real JAX raises a NameError from deep inside flax; spmdsim points
# at the user's line that built the layer and suggests the bound name.
from functools import partial
import jax, jax.numpy as jnp, numpy as np, optax
import flax.linen as nn
from flax.training import train_state
from flax import jax_utils

class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool = True):
        x = nn.Conv(4, (3, 3))(x)
        x = nn.BatchNorm(use_running_average=not train, axis_name="batchh")(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dropout(0.5, deterministic=not train)(x)
        x = nn.LayerNorm()(x)
        return nn.Dense(3)(x)

model = CNN()
x = jnp.asarray(np.random.default_rng(0).normal(size=(8, 2, 6, 6, 1)).astype(np.float32))
labels = jnp.asarray(np.arange(16).reshape(8, 2) % 3)
variables = model.init({'params': jax.random.PRNGKey(0), 'dropout': jax.random.PRNGKey(1)}, x[0], train=False)
state = train_state.TrainState.create(apply_fn=model.apply, params=variables['params'], tx=optax.sgd(0.1))
batch_stats = variables['batch_stats']
print(jax.tree.map(lambda a: a.shape, variables))

@partial(jax.pmap, axis_name='batch')
def train_step(state, batch_stats, x, labels, rng):
    def loss_fn(params):
        logits, updates = state.apply_fn({'params': params, 'batch_stats': batch_stats}, x, train=True,
                                         rngs={'dropout': rng}, mutable=['batch_stats'])
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), updates
    (loss, updates), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    grads = jax.lax.pmean(grads, 'batch')
    return state.apply_gradients(grads=grads), updates['batch_stats'], jax.lax.pmean(loss, 'batch')

state = jax_utils.replicate(state)
batch_stats = jax_utils.replicate(batch_stats)
rngs = jax.random.split(jax.random.PRNGKey(2), 8)
for i in range(3):
    state, batch_stats, loss = train_step(state, batch_stats, x, labels, rngs)
    print(i, round(float(loss[0]), 4))
final = jax_utils.unreplicate(state)
print(int(final.step), np.round(np.asarray(final.params['Dense_0']['bias']), 4).tolist())
print(np.round(np.asarray(jax_utils.unreplicate(batch_stats)['BatchNorm_0']['mean']), 4).tolist())
