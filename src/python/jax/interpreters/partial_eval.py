"""jax.interpreters.partial_eval: PartialVal (flax annotates with it and
builds known/unknown inputs). Tracing to a jaxpr with unknowns
(trace_to_jaxpr_nounits, which flax's nn.scan uses) is not implemented:
asking for it is an AttributeError that says so."""

from jax._src.internals import missing_attribute


class PartialVal(tuple):
    """(aval, None) for an unknown value, (None, const) for a known one."""

    def __new__(cls, xs):
        pv, const = xs
        return tuple.__new__(cls, (pv, const))

    @classmethod
    def known(cls, const):
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval):
        return PartialVal((aval, None))

    def is_known(self):
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        if self[0] is not None:
            return self[0]
        from jax._src import core
        return core.aval_of(self[1])


def __getattr__(name):
    raise missing_attribute(__name__, name, 'partial evaluation')
