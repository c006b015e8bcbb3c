"""jax.scipy.special basics."""
from jax.nn import logsumexp
from jax.nn import sigmoid as expit
from jax.lax import erf
from jax.lax import erf_inv as erfinv
