"""jax.vmap as a batching transformation of the traced program, as in JAX
(jax/_src/interpreters/batching.py): the function is traced once on one
example, then each equation of its program is rewritten by its primitive's
batching rule into equations over the whole batch. The batched program has
as many equations as the function's, whatever the batch size, and runs on
the kernels as whole arrays (a batched dot_general is one batched product).

interpreter.py walks a program; rules.py (numeric primitives),
collective_rules.py (collectives over the vmapped axis and others) and
control_rules.py (cond, while, calls, pmap, debugging) hold the rules.
"""

from jax._src.batching.interpreter import Axis, batch_program  # noqa: F401
from jax._src.batching import rules, collective_rules, control_rules  # noqa: F401  (register the rules)
