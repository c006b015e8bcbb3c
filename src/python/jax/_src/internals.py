"""Names of JAX's internals that libraries reach only on paths spmdsim does
not support yet (flax's nn.scan lifting calls partial_eval's tracing): the
module exists so that the library imports, and each name it lacks is an
AttributeError saying why, not a stub that pretends."""


def missing_attribute(module, attr, what):
    if attr.startswith('__'):
        return AttributeError(attr)
    return AttributeError(f"module '{module}' has no attribute '{attr}': spmdsim does not implement JAX's {what} "
                          f'({module}.{attr}); the library path that needs it does not run on spmdsim yet')
