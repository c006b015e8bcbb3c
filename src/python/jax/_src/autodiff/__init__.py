"""Automatic differentiation over traced programs (see engine.py)."""

from jax._src.autodiff import collective_rules, control_rules, rules  # noqa: F401  (they register the rules)
from jax._src.autodiff.api import grad, hessian, jacfwd, jacobian, jacrev, jvp, linearize, value_and_grad, vjp
from jax._src.autodiff.custom import custom_jvp, custom_vjp
