"""jax.extend: what libraries that extend JAX (flax, equinox) import."""
from jax.extend import backend, core, linear_util, source_info_util
