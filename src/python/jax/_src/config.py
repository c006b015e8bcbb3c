"""jax.config: the flags programs set with jax.config.update(name, value)."""

_values = {
    'jax_enable_x64': False,
    'jax_platform_name': '',
    'jax_platforms': '',
    'jax_disable_jit': False,
    'jax_debug_nans': False,
    'jax_num_cpu_devices': -1,
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
