"""jax.config: the flags programs set with jax.config.update(name, value)."""

import os


def _env_flag(name, default):
    """A boolean flag's default from the environment, as JAX reads JAX_* variables."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in ('0', 'false', 'f', 'no', 'n', 'off', '')


_values = {
    'jax_enable_x64': False,
    'jax_platform_name': '',
    'jax_platforms': '',
    'jax_disable_jit': False,
    # JAX's counter layout for jax.random since JAX 0.5 (random/__init__.py).
    'jax_threefry_partitionable': True,
    'jax_debug_nans': False,
    'jax_num_cpu_devices': -1,
    # JAX >= 0.8: pmap is jit + shard_map (nested pmaps are an error, outputs
    # carry a NamedSharding, inputs placed on other devices are refused).
    # False: the original pmap. JAX_PMAP_SHMAP_MERGE=0 sets it from outside.
    'jax_pmap_shmap_merge': _env_flag('JAX_PMAP_SHMAP_MERGE', True),
}


class Config:
    def update(self, name, value):
        if name == 'jax_num_cpu_devices':
            import _spmd
            if _spmd.runtime_started():
                raise RuntimeError('jax_num_cpu_devices config should be updated before backends are initialized '
                                   '(before the first jax.devices(), device_count() or pmap)')
        if name not in _values:
            # Unknown flags are JAX's many tuning knobs: accepted and ignored.
            _values[name] = value
            return
        _values[name] = value

    def read(self, name):
        return _values[name]

    def __getattr__(self, name):
        try:
            return _values[name]
        except KeyError:
            raise AttributeError(f"jax.config has no flag '{name}'") from None


config = Config()


def x64_enabled():
    return bool(_values['jax_enable_x64'])
