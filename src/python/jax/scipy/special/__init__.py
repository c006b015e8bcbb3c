"""jax.scipy.special basics."""
from jax.nn import logsumexp
from jax.nn import sigmoid as expit
