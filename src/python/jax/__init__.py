"""spmdsim's jax: JAX's API over simulated devices.

`spmd run prog.py` runs a program with this package first on sys.path, so
`import jax` finds it even where JAX is installed. pmap and jit trace the
function once into a program that every simulated device executes in C++,
with spmdsim's rendezvous checking each collective and detecting deadlocks
exactly.
"""

from jax._src.config import config
from jax import debug, errors, lax, nn, numpy, scipy, tree_util
from jax._src.api import (Device, block_until_ready, default_backend, device_count, device_get, device_put, devices,
                          disable_jit, jit, local_device_count, local_devices, make_jaxpr, pmap, process_count,
                          process_index)
from jax._src.core import Array
from jax._src.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten
from jax._src.transformations import (ShapeDtypeStruct, checkpoint, ensure_compile_time_eval, eval_shape, named_call,
                                      named_scope, remat)
from jax._src.vmap import vmap
from jax._src.autodiff import (custom_jvp, custom_vjp, grad, hessian, jacfwd, jacobian, jacrev, jvp, linearize,
                               value_and_grad, vjp)
from jax import distributed, dtypes, random, sharding, tree, typing
from jax._src.sharding import make_mesh, set_mesh
from jax._src.shard_map import shard_map

__version__ = '0.8.1+spmdsim'  # the API and pmap behaviour modelled (jax_pmap_shmap_merge on)
__version_info__ = (0, 8, 1)  # what libraries compare (flax: jax.__version_info__ <= (0, 4, 33))

from jax._src import missing_modules as _missing_modules, side_effects as _side_effects
_side_effects.install()
_missing_modules.install()



host_id = process_index


# Deprecated in JAX 0.8.1, still all over existing code: they work and warn
# as JAX does (a DeprecationWarning where the program uses them).
_DEPRECATED = {
    'device_put_replicated': 'jax.device_put_replicated is deprecated; use jax.device_put instead. See '
                             'https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements for a drop-in '
                             'replacement.',
    'device_put_sharded': 'jax.device_put_sharded is deprecated; use jax.device_put instead. See '
                          'https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements for a drop-in '
                          'replacement.',
}


def __getattr__(name):
    if name in ('experimental', 'core', 'extend', 'interpreters', 'flatten_util', 'lib', 'test_util',
                'profiler', 'example_libraries'):
        import importlib
        return importlib.import_module(f'jax.{name}')
    if name in _DEPRECATED:
        import warnings
        from jax._src import api as _api
        warnings.warn(_DEPRECATED[name], DeprecationWarning, stacklevel=2)
        return getattr(_api, name)
    raise AttributeError(f"module 'jax' has no attribute '{name}'")
