"""A clear error for libraries of the JAX ecosystem that spmdsim does not
provide (flax, optax, ...) and for modules of JAX it lacks (jax.lax.linalg):
ModuleNotFoundError naming the module and what to do, instead of Python's
bare "No module named 'flax'". It is the last finder
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

# The public modules of JAX 0.8.1 (tests/requirements.txt's jax), without "jax.": importing one that spmdsim's jax
# lacks gets a message saying so. Any other missing jax.* name is a typo, with Python's own error.
_JAX_MODULES = frozenset('''
    ad_checkpoint api_util cloud_tpu_init collect_profile core custom_batching custom_derivatives
    custom_transpose debug distributed dlpack dtypes errors example_libraries example_libraries.optimizers
    example_libraries.stax experimental experimental.array_serialization experimental.buffer_callback
    experimental.checkify experimental.colocated_python experimental.compilation_cache
    experimental.compute_on experimental.custom_dce experimental.custom_partitioning experimental.fused
    experimental.hijax experimental.jax2tf experimental.jet experimental.key_reuse experimental.layout
    experimental.mesh_utils experimental.mosaic experimental.multihost_utils experimental.ode
    experimental.pallas experimental.pjit experimental.profiler experimental.rnn experimental.roofline
    experimental.scheduling_groups experimental.serialize_executable experimental.shard_alike
    experimental.shard_map experimental.source_mapper experimental.sparse experimental.topologies
    experimental.transfer experimental.x64_context experimental.xla_metadata export extend extend.backend
    extend.core extend.core.primitives extend.ifrt_programs extend.linear_util extend.mlir extend.random
    extend.sharding extend.source_info_util ffi flatten_util image interpreters interpreters.ad
    interpreters.batching interpreters.mlir interpreters.partial_eval interpreters.pxla interpreters.xla lax
    lax.linalg lib lib.xla_bridge lib.xla_client lib.xla_extension memory monitoring nn nn.initializers
    numpy numpy.fft numpy.linalg ops profiler random ref scipy scipy.cluster scipy.cluster.vq scipy.fft
    scipy.integrate scipy.interpolate scipy.linalg scipy.ndimage scipy.optimize scipy.signal scipy.sparse
    scipy.sparse.linalg scipy.spatial scipy.spatial.transform scipy.special scipy.stats sharding stages
    test_util tools tree tree_util typing version
'''.split())


def _probed():
    """True inside importlib.util.find_spec: a library asking whether a
    module exists gets the usual None, not an error."""
    import importlib.util
    probe = importlib.util.find_spec.__code__
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code is probe:
            return True
        frame = frame.f_back
    return False


class _ExplainMissing:
    _spmd_missing_modules = True

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split('.')[0]
        in_jax = top == 'jax' and fullname[len('jax.'):] in _JAX_MODULES
        if top not in _KNOWN and not in_jax:
            return None
        if _probed():
            return None
        if in_jax:
            # No name=: `from jax.experimental import x` then shows this error, where Python would replace
            # one naming the module it looked for by a bare "cannot import name 'x'" (right for a typo,
            # which is not in the table).
            e = ModuleNotFoundError(f"No module named '{fullname}': spmdsim's jax does not provide it")
            e._spmd_hint = ('spmdsim implements the parts of JAX that data-parallel programs use (jax, jax.numpy, '
                            'jax.lax, jax.random, jax.nn, jax.tree_util, jax.sharding, jax.experimental.shard_map, '
                            'mesh_utils, multihost_utils, pjit, jax.profiler, jax.example_libraries.optimizers); '
                            'the README lists what each provides. Import this module only where the program runs '
                            'under real JAX, or file an issue naming it')
            raise e
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
