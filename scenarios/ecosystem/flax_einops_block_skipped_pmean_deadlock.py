# spmd: devices=4 requires=flax,einops expect=deadlock expect-line=30 expect-decision-line=30
# spmd: expect-message=device 0 waits at pmean over 'batch' #0
# A transformer block written with flax.linen and einops (LayerNorm,
# MultiHeadDotProductAttention, a residual, tokens flattened with
# rearrange), whose __call__ synchronises its loss with a pmean only where the
# loss is large. Device 0's is; the others skip the pmean and return. On GPUs
# the job hangs; spmdsim reports the deadlock at the user's line inside the
# Module method (library frames are never the location) and the lax.cond
# whose outcome differed.
from functools import partial

import jax
import jax.numpy as jnp
import flax.linen as nn
from einops import rearrange


class Block(nn.Module):
    heads: int = 2

    @nn.compact
    def __call__(self, x):
        h = nn.LayerNorm()(x)
        h = nn.MultiHeadDotProductAttention(num_heads=self.heads)(h)
        x = x + h
        tokens = rearrange(x, "b t d -> (b t) d")
        y = nn.Dense(x.shape[-1])(tokens)
        # BUG: only devices whose loss is large synchronise; the others skip the pmean
        loss = jnp.mean(y ** 2)
        loss = jax.lax.cond(loss > 0.5, lambda l: jax.lax.pmean(l, "batch"), lambda l: l, loss)
        return rearrange(y, "(b t) d -> b t d", b=x.shape[0]), loss


model = Block()
n = jax.local_device_count()
x = jnp.arange(n * 2 * 3 * 4, dtype=jnp.float32).reshape(n, 2, 3, 4) / 10.0
x = x * jnp.arange(1, n + 1, dtype=jnp.float32).reshape(n, 1, 1, 1) ** -3
params = jax.pmap(model.init, axis_name="batch", in_axes=(None, 0))(jax.random.PRNGKey(0), x)


@partial(jax.pmap, axis_name="batch")
def forward(params, x):
    return model.apply(params, x)


out, loss = forward(params, x)
print(out.shape, loss)
