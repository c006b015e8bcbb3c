"""jax._src.xla_bridge: the backend queries real programs import (the Pmap
Cookbook: `xla_bridge.get_backend().platform`), over spmdsim's devices."""

from jax._src import api


class _Backend:
    """The one backend: platform 'cpu' on the simulator, 'gpu' on CUDA."""

    @property
    def platform(self):
        return api.default_backend()

    def device_count(self):
        return api.device_count()

    def local_device_count(self):
        return api.local_device_count()

    def devices(self):
        return api.devices()

    def local_devices(self):
        return api.local_devices()

    def process_index(self):
        return api.process_index()

    def __repr__(self):
        return f'<spmdsim backend {self.platform!r}: {self.device_count()} devices>'


_backend = _Backend()


def get_backend(platform=None):
    if platform is not None and platform != _backend.platform:
        raise RuntimeError(f"Unknown backend {platform}: spmdsim runs every program on its '{_backend.platform}' "
                           'devices')
    return _backend


def backends():
    return {_backend.platform: _backend}


def __getattr__(name):
    if name == '_backends':  # optax reads it to see whether backends are initialized
        return backends()
    raise AttributeError(f"module 'jax._src.xla_bridge' has no attribute '{name}'")


def default_backend():
    return api.default_backend()


device_count = api.device_count
local_device_count = api.local_device_count
process_index = api.process_index
process_count = api.process_count
devices = api.devices
local_devices = api.local_devices
