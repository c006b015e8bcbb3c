"""jax._src.traceback_util: the paths libraries register as their own (flax
does) so that tracebacks and reports point past them at the user's code.
spmdsim's source locations treat these paths like installed libraries."""

_exclude_paths = []


def register_exclusion(path):
    _exclude_paths.append(path)


def is_excluded(filename):
    return any(filename.startswith(p) for p in _exclude_paths)


def api_boundary(fun=None, **kwargs):
    """JAX filters the frames below a boundary out of tracebacks; spmdsim's
    reports already point at the user's frame, so the function is unchanged."""
    if fun is None:
        return lambda f: f
    return fun
