# spmd: devices=8 requires=flax,optax expect=ok
# spmd: expect-stdout: {'batch_stats': {'BatchNorm_0': {'mean': (4,), 'var': (4,)}}, 'params': {'BatchNorm_0': {'bias': (4,), 'scale': (4,)}, 'Conv_0': {'bias': (4,), 'kernel': (3, 3, 1, 4)}, 'Dense_0': {'bias': (3,), 'kernel': (36, 3)}, 'LayerNorm_0': {'bias': (36,), 'scale': (36,)}}}
# spmd: expect-stdout: 0 1.2458
# spmd: expect-stdout: 1 1.057
# spmd: expect-stdout: 2 0.9067
# spmd: expect-stdout: 3 [0.01889999955892563, -0.015200000256299973, -0.003700000001117587]
# spmd: expect-stdout: [0.00019999999494757503, 0.00019999999494757503, -0.0005000000237487257, 9.999999747378752e-05]
# The classic flax recipe for data parallelism: a linen CNN (Conv, BatchNorm
# whose statistics are averaged across devices through axis_name, Dropout
# with an rng per device, LayerNorm, Dense), a flax.training TrainState with
# an optax optimizer, flax.jax_utils.replicate / unreplicate, and a pmapped
# step with the gradients pmean'ed. The expected output is real JAX 0.8.1's
# for the same program on 8 CPU devices.
from functools import partial
import jax, jax.numpy as jnp, numpy as np, optax
import flax.linen as nn
from flax.training import train_state
from flax import jax_utils

class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool = True):
        x = nn.Conv(4, (3, 3))(x)
        x = nn.BatchNorm(use_running_average=not train, axis_name='batch')(x)
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
