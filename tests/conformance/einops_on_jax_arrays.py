# einops on jax arrays: rearrange, reduce, repeat, einsum, pack/unpack, under jit and grad.
import jax, jax.numpy as jnp, numpy as np
from einops import rearrange, reduce, repeat, einsum, pack, unpack
x = jnp.arange(2 * 3 * 4 * 5, dtype=jnp.float32).reshape(2, 3, 4, 5)
print(rearrange(x, 'b c h w -> b (h w) c').shape, np.asarray(rearrange(x, 'b c h w -> b (h w) c'))[1, 7].tolist())
print(rearrange(x, 'b c (h1 h2) w -> b h1 c h2 w', h1=2).shape)
print(np.asarray(reduce(x, 'b c h w -> b c', 'mean')).tolist())
print(np.asarray(reduce(x, 'b c (h 2) (w 5) -> c h w', 'max')).tolist())
print(repeat(x[0, 0], 'h w -> h w r', r=3).shape, np.asarray(repeat(jnp.arange(3.), 'n -> b n', b=2)).tolist())
print(np.asarray(einsum(x, x, 'b c h w, b c h w -> b c')).tolist())
p, ps = pack([x[:, 0], x[:, :2]], 'b * w'); print(p.shape, ps, [t.shape for t in unpack(p, ps, 'b * w')])
f = jax.jit(lambda t: rearrange(t, 'b (c k) h w -> b c k h w', k=1).sum())
print(float(f(x)))
print(jax.grad(lambda t: reduce(t ** 2, 'b c h w -> ', 'sum'))(x)[0, 0, 0].tolist())
