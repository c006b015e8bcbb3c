"""jax.scipy"""
from jax.scipy import special, stats
