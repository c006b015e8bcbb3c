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


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *, process_is_granule=False,
                              should_sort_granules_by_key=True, allow_split_physical_axes=False):
    """A mesh for hybrid (fast inner, slow outer network) parallelism: the
    devices grouped into granules (slices, or processes with
    process_is_granule), a create_device_mesh(mesh_shape) per granule, laid out
    as blocks of dcn_mesh_shape; the result's shape is mesh_shape *
    dcn_mesh_shape, elementwise."""
    devices = list(jax.devices() if devices is None else devices)
    attr = 'process_index' if process_is_granule else 'slice_index'
    if not hasattr(devices[0], attr):
        raise ValueError(f'Device {devices[0]} does not have attribute {attr}. See `process_is_granule` option.')
    granule_of = {}
    for device in devices:
        granule_of.setdefault(getattr(device, attr), []).append(device)
    granules = [granule_of[k] for k in sorted(granule_of)] if should_sort_granules_by_key else list(granule_of.values())
    if math.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(f'Number of slices {len(granules)} must equal the product of dcn_mesh_shape {dcn_mesh_shape}')
    meshes = [create_device_mesh(mesh_shape, g, allow_split_physical_axes=allow_split_physical_axes)
              for g in granules]
    order = np.arange(len(granules)).reshape(tuple(dcn_mesh_shape))
    blocks = np.vectorize(lambda i: meshes[i], otypes=[object])(order)
    return np.block(blocks.tolist())
