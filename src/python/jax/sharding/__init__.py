"""jax.sharding: device meshes and partition specs, as shard_map reads them.

A Mesh names the axes of an array of devices (`Mesh(devices, ('data',
'model'))`); a PartitionSpec says, per array dimension, which mesh axes split
it (`P('data', None)`); mesh axes a spec does not name hold copies.
"""

from jax._src.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding,
                               get_abstract_mesh, make_mesh, set_mesh, use_mesh)

P = PartitionSpec

__all__ = ['AbstractMesh', 'AxisType', 'Mesh', 'get_abstract_mesh', 'NamedSharding', 'PartitionSpec', 'P', 'Sharding', 'SingleDeviceSharding', 'make_mesh', 'set_mesh', 'use_mesh']
