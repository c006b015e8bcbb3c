"""jax.errors: the errors JAX raises while tracing, with JAX's class names
(a program's `except jax.errors.ConcretizationTypeError` keeps working)."""


class JAXTypeError(TypeError):
    pass


class ConcretizationTypeError(JAXTypeError):
    pass


class TracerBoolConversionError(ConcretizationTypeError):
    pass


class TracerIntegerConversionError(JAXTypeError):
    pass


class TracerArrayConversionError(JAXTypeError):
    pass


class UnexpectedTracerError(JAXTypeError):
    pass


class KeyReuseError(JAXTypeError):
    pass


class JaxRuntimeError(RuntimeError):
    """An error while a program runs (a failed checkify check): XLA's runtime error in JAX."""
