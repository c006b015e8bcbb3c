# jax.nn: every activation, logsumexp/softmax with where= and b=, the initializers (the same draws as
# JAX from the same key), dot_product_attention; reductions with where=/initial=.
import jax, jax.numpy as jnp, numpy as np
x = jnp.array([-3.0, -1.5, -0.5, 0.0, 0.7, 2.0, 4.0])
for f in ['log_sigmoid', 'soft_sign', 'squareplus', 'sparse_plus', 'sparse_sigmoid', 'mish', 'hard_tanh', 'hard_sigmoid', 'hard_silu', 'celu', 'selu', 'gelu', 'silu', 'elu', 'standardize', 'log1mexp']:
    print(f, np.round(np.asarray(getattr(jax.nn, f)(jnp.abs(x) + 0.1 if f == 'log1mexp' else x)), 5).tolist())
print(np.round(np.asarray(jax.nn.gelu(x, approximate=False)), 5).tolist())
print(np.round(np.asarray(jax.nn.glu(jnp.arange(8.).reshape(2, 4))), 5).tolist())
print(np.round(float(jax.nn.logmeanexp(x)), 5), np.round(float(jax.nn.logsumexp(x, b=2.0)), 5), [np.round(float(v), 5) for v in jax.nn.logsumexp(x, b=-1.0, return_sign=True)])
print(np.round(np.asarray(jax.nn.softmax(x, where=x > 0)), 5).tolist(), np.round(np.asarray(jax.nn.log_softmax(x[:3])), 5).tolist())
k = jax.random.PRNGKey(1)
I = jax.nn.initializers
for name, init in [('zeros', I.zeros), ('ones', I.ones), ('const', I.constant(0.5)), ('uniform', I.uniform()), ('normal', I.normal(1.0)),
                   ('glorot_uniform', I.glorot_uniform()), ('lecun_normal', I.lecun_normal()), ('he_uniform', I.he_uniform()), ('vs', I.variance_scaling(2.0, 'fan_avg', 'normal'))]:
    print(name, np.round(np.asarray(init(k, (2, 3), jnp.float32)), 4).tolist())
q = jax.random.normal(k, (2, 4, 2, 8)); kv = jax.random.normal(jax.random.PRNGKey(2), (2, 5, 1, 8))
print(np.round(np.asarray(jax.nn.dot_product_attention(q, kv, kv)).sum(axis=(0, 3)), 4).tolist())
print(np.round(np.asarray(jax.nn.dot_product_attention(q, q, q, is_causal=True))[0, :, 0, :3], 4).tolist())
print(jnp.sum(jnp.arange(4.), where=jnp.array([1, 0, 1, 1], bool)), jnp.max(jnp.arange(4.), initial=7.0), jnp.mean(jnp.arange(4.), where=jnp.arange(4) > 1), jnp.var(jnp.arange(4.), ddof=1), jnp.std(jnp.arange(5.), where=jnp.arange(5) < 3))
for bad in [lambda: jnp.max(x, where=x > 0), lambda: jnp.sum(x, out=x)]:
    try: bad()
    except Exception as e: print(type(e).__name__, e)
