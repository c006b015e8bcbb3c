"""jax.scipy.stats"""
from jax.scipy.stats import norm
