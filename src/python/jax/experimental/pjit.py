"""jax.experimental.pjit: since JAX 0.4.1 pjit is jax.jit (in_shardings and
out_shardings are jit's arguments of those names)."""

from jax._src.api import jit


def pjit(fun=None, in_shardings=None, out_shardings=None, static_argnums=(), static_argnames=(),
         donate_argnums=(), donate_argnames=(), keep_unused=False, device=None, backend=None, inline=False,
         abstracted_axes=None):
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings, static_argnums=static_argnums,
               static_argnames=static_argnames, donate_argnums=donate_argnums, keep_unused=keep_unused,
               device=device, backend=backend, inline=inline, abstracted_axes=abstracted_axes)


__all__ = ['pjit']
