# optax unchanged on spmdsim's jax: sgd with momentum, adam, adamw with a schedule, a chain with
# clip_by_global_norm, multi_transform, jitted steps; the losses optax ships.
import jax, jax.numpy as jnp, numpy as np, optax
params = {'w': jnp.array([[0.5, -1.0], [2.0, 0.25]], jnp.float32), 'b': jnp.array([0.1, -0.2], jnp.float32)}
x = jnp.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], jnp.float32); y = jnp.array([1.0, -1.0, 0.0], jnp.float32)
def loss(p):
    return jnp.mean((jnp.sum(x @ p['w'] + p['b'], axis=1) - y) ** 2)
sched = optax.warmup_cosine_decay_schedule(0.0, 0.1, 2, 10, 0.01)
for name, opt in [('sgd', optax.sgd(0.1, momentum=0.9)), ('adam', optax.adam(1e-2)), ('adamw', optax.adamw(sched, weight_decay=1e-2)),
                  ('chain', optax.chain(optax.clip_by_global_norm(1.0), optax.scale_by_adam(), optax.scale(-0.05))),
                  ('multi', optax.multi_transform({'a': optax.sgd(0.1), 'b': optax.adam(0.1)}, {'w': 'a', 'b': 'b'}))]:
    p = params; st = opt.init(p)
    @jax.jit
    def step(p, st):
        l, g = jax.value_and_grad(loss)(p)
        u, st = opt.update(g, st, p)
        return optax.apply_updates(p, u), st, l
    for i in range(5):
        p, st, l = step(p, st)
    print(name, np.round(float(l), 5), np.round(np.asarray(p['w']), 5).tolist(), np.round(np.asarray(p['b']), 5).tolist())
print([round(float(sched(i)), 5) for i in range(0, 12, 3)])
logits = jnp.array([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]]); labels = jnp.array([1, 2])
print(np.round(np.asarray(optax.softmax_cross_entropy_with_integer_labels(logits, labels)), 5).tolist())
print(np.round(np.asarray(optax.softmax_cross_entropy(logits, jax.nn.one_hot(labels, 3))), 5).tolist())
print(np.round(np.asarray(optax.l2_loss(logits, logits * 0.5)), 5).tolist())
print(np.round(np.asarray(optax.sigmoid_binary_cross_entropy(logits, (logits > 1).astype(jnp.float32))), 5).tolist())
