"""jax.lib.xla_bridge as JAX 0.8.1 has it: its functions were removed in
0.8.0, and asking for one is the AttributeError JAX raises, with the new name."""

_MOVED = {'get_backend': 'jax.extend.backend.get_backend', 'default_backend': 'jax.default_backend',
          'device_count': 'jax.device_count', 'local_device_count': 'jax.local_device_count',
          'process_index': 'jax.process_index'}


def __getattr__(name):
    if name in _MOVED:
        extend = ', and please note that you must `import jax.extend` explicitly' if 'extend' in _MOVED[name] else ''
        raise AttributeError(f'jax.lib.xla_bridge.{name} is deprecated and will be removed in JAX v0.8.0; use '
                             f'{_MOVED[name]}{extend}.')
    raise AttributeError(f"module 'jax.lib.xla_bridge' has no attribute '{name}'")
