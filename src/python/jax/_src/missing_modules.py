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
        e._spmd_hint = (f'write the parts of {top} the program needs with jax.numpy and jax.lax (e.g. the '
                        f'optimizer update as a jax.tree_util.tree_map), or install {top} where spmdsim\'s jax '
                        'is on the path before the real one')
        raise e


def install():
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, '_spmd_missing_modules', False)]
    sys.meta_path.append(_ExplainMissing())
