"""jax.extend.linear_util: JAX's wrapped functions (flax's nn.scan uses
them with partial_eval); see jax._src.internals."""

from jax._src.internals import missing_attribute


def __getattr__(name):
    raise missing_attribute(__name__, name, 'linear_util wrapped functions')
