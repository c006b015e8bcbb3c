"""A clear error for libraries of the JAX ecosystem that spmdsim does not
provide (flax, optax, ...): ModuleNotFoundError naming the module and what to
do, instead of Python's bare "No module named 'flax'". It is the last finder
on sys.meta_path, so a library that is installed is imported as usual."""

import sys

_KNOWN = {
    'flax': 'a neural-network library over JAX',
    'optax': 'gradient transformations and optimizers',
    'haiku': 'a neural-network library over JAX',
    'equinox': 'a neural-network library over JAX',
    'chex': 'testing utilities for JAX',
    'orbax': 'checkpointing for JAX',
    'jaxlib': "JAX's compiled backend",
    'jraph': 'graph networks over JAX',
}


class _ExplainMissing:
    _spmd_missing_modules = True

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split('.')[0]
        if top not in _KNOWN:
            return None
        e = ModuleNotFoundError(
            f"No module named '{fullname}': spmdsim provides jax itself, not {top} ({_KNOWN[top]})",
            name=fullname)
        e._spmd_hint = (f'pip install {top} into a virtual environment made with /usr/bin/python3 -m venv, and run '
                        f'spmd with it active (VIRTUAL_ENV set): spmd puts its packages after spmdsim\'s jax; in a '
                        f'plain python3 of that venv, put spmdsim\'s src/python and build/python first on PYTHONPATH')
        raise e


def install():
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, '_spmd_missing_modules', False)]
    sys.meta_path.append(_ExplainMissing())
