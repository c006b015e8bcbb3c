"""jax._src.compiler: the step where JAX hands a traced program to a
backend. spmdsim has no compiler (devices execute the traced program), but a
jit or pmap still passes each newly traced top-level program through
backend_compile_and_load, so that tools which watch or restrict compilation
(chex.restrict_backends patches these names) see the same events as in JAX."""


class Backend:
    """The backend a program is 'compiled' for: platform 'cpu' on the
    simulator (what the devices report), 'gpu' on the CUDA backend."""

    def __init__(self, platform):
        self.platform = platform

    def __repr__(self):
        return f'Backend({self.platform!r})'


def backend_compile(backend, program, *args, **kwargs):
    return program


def backend_compile_and_load(backend, program, *args, **kwargs):
    return backend_compile(backend, program, *args, **kwargs)


def compile_traced(program):
    """What api.jit/pmap call on a cache miss at top level. The global name is
    looked up at each call, so a patched backend_compile_and_load is used."""
    from jax._src import api
    return backend_compile_and_load(Backend(api.default_backend()), program)
