"""jax.core: the public names of JAX's tracing core that libraries use
(flax checks which trace it runs under; chex and optax test for Tracer)."""

from jax._src.api import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var  # noqa: F401  (what make_jaxpr returns)
from jax._src.core import Array, ShapedArray, Tracer, current_trace as _current_trace


class _TraceState:
    """What get_opaque_trace_state returns: equal for code under the same
    trace (flax compares the state at a Module's creation and its use)."""
    __slots__ = ('trace',)

    def __init__(self, trace):
        self.trace = trace

    def __eq__(self, other):
        return isinstance(other, _TraceState) and self.trace is other.trace

    def __hash__(self):
        return id(self.trace)

    def __repr__(self):
        return f'OpaqueTraceState({type(self.trace).__name__ if self.trace is not None else "eval"})'


def get_opaque_trace_state(convention=None):
    return _TraceState(_current_trace())


def concrete_or_error(force, val, context=''):
    """val itself when it is concrete; the ConcretizationTypeError JAX raises otherwise."""
    if isinstance(val, Tracer):
        from jax import errors
        raise errors.ConcretizationTypeError(
            f'Abstract tracer value encountered where concrete value is expected: {val}\n{context}')
    return val if force is None else force(val)


__all__ = ['Array', 'ShapedArray', 'Tracer', 'concrete_or_error', 'get_opaque_trace_state']
