"""jax.extend.core: the jaxpr classes jax.make_jaxpr returns, and ShapedArray."""
from jax._src.api import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var  # noqa: F401
from jax._src.core import ShapedArray  # noqa: F401
