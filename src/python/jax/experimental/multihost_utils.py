"""jax.experimental.multihost_utils: host values shared between processes.

With one process these are JAX's identities (numpy copies; process_allgather
adds the leading process axis). With several processes each process runs
its own devices (--process-devices local), and the data crosses processes in a
pmap over them: a psum where only the source (or only this process's row) is
non-zero, checked at the rendezvous like any collective. Where every process
simulates every device, processes share no data, so the calls are refused."""

import zlib

import numpy as np

import jax
from jax import lax


def _across_processes(rows):
    """psum over every device of (local_device_count,) + shape rows; the sum as numpy."""
    if jax.local_device_count() * jax.process_count() != jax.device_count():
        err = NotImplementedError(
            f'multihost_utils with {jax.process_count()} processes that each simulate all {jax.device_count()} '
            'devices: the processes share no data')
        err._spmd_hint = ('run with --process-devices local (header process-devices=local): each process then runs '
                          'its share of the devices and collectives cross processes, as on several hosts')
        raise err
    summed = jax.pmap(lambda v: lax.psum(v, '_spmd_processes'), '_spmd_processes')(rows)
    return np.asarray(summed[0])


def _local_rows(x, put):
    """(local_device_count,) + put's shape zeros, with `put` on this process's first device."""
    rows = np.zeros((jax.local_device_count(),) + put.shape, dtype=put.dtype)
    rows[0] = put
    return rows


def broadcast_one_to_all(in_tree, is_source=None):
    """Every leaf as the source process has it (process 0 unless is_source says otherwise)."""
    if jax.process_count() == 1:
        return jax.tree.map(np.asarray, in_tree)
    if is_source is None:
        is_source = jax.process_index() == 0

    def broadcast(x):
        x = np.asarray(x)
        return _across_processes(_local_rows(x, x if is_source else np.zeros_like(x)))
    return jax.tree.map(broadcast, in_tree)


def process_allgather(in_tree, tiled=False):
    """Each leaf of every process, stacked on a new leading axis (tiled: concatenated along axis 0)."""
    def gather(x):
        x = np.asarray(x)
        if jax.process_count() == 1:
            return x if tiled else np.expand_dims(x, axis=0)
        slots = np.zeros((jax.process_count(),) + x.shape, dtype=x.dtype)
        slots[int(jax.process_index())] = x
        out = _across_processes(_local_rows(x, slots))
        return out.reshape((-1,) + x.shape[1:]) if tiled and x.ndim > 0 else out
    return jax.tree.map(gather, in_tree)


def assert_equal(in_tree, fail_message=''):
    """AssertionError unless every process holds the same values."""
    def check(x):
        gathered = process_allgather(x)
        expected = gathered[0]
        if not all(np.array_equal(expected, g) for g in gathered[1:]):
            raise AssertionError(f'{fail_message} Expected: {expected}; got: {gathered}.')
    jax.tree.map(check, in_tree)


def sync_global_devices(name):
    """A barrier of every process, which must all name it alike."""
    assert_equal(np.uint32(zlib.crc32(name.encode())), f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id):
    """spmdsim's processes are never preempted."""
    return False
