"""jax.experimental.mesh_utils: device meshes for jax.sharding.Mesh. Virtual
devices have no physical topology (no ICI rings or slices to follow), so a
mesh is the devices in id order, reshaped; that is what JAX builds for CPU
devices too."""

import math

import numpy as np

import jax


def _checked_devices(mesh_shape, devices, what):
    devices = list(jax.devices() if devices is None else devices)
    size = math.prod(mesh_shape)
    if size != len(devices):
        raise ValueError(f'Number of devices {len(devices)} must equal the product of {what} {tuple(mesh_shape)}')
    return devices


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False, allow_split_physical_axes=False):
    """The devices (all of them by default) as an array of shape mesh_shape."""
    mesh_shape = tuple(int(d) for d in mesh_shape)
    devices = _checked_devices(mesh_shape, devices, 'mesh_shape')
    mesh = np.empty(len(devices), dtype=object)
    mesh[:] = devices
    return mesh.reshape(mesh_shape)
