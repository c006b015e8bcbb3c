"""jax.distributed: joining a multi-process run.

Under spmdsim the processes are started by `spmd run --num-processes N` (or
a `processes=N` header), which already connects them; initialize() checks
that what the program asks for matches the run it is in, as a real cluster
would refuse a wrong process id, and says how to start the run it describes.
"""

import os

import _spmd

_state = {'initialized': False}


def _from_env(value, name):
    if value is not None:
        return value
    text = os.environ.get(name)
    return int(text) if text not in (None, '') else None


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None,
               cluster_detection_method=None, initialization_timeout=300, coordinator_bind_address=None):
    if _state['initialized']:
        raise RuntimeError('jax.distributed.initialize should only be called once.')
    num_processes = _from_env(num_processes, 'JAX_NUM_PROCESSES')
    process_id = _from_env(process_id, 'JAX_PROCESS_ID')
    # A multi-process run starts its runtime at once; a single process may not
    # have one yet (its device count can still change), and is process 0 of 1.
    count, index = (_spmd.process_count(), _spmd.process_index()) if _spmd.runtime_started() else (1, 0)
    if num_processes is not None and int(num_processes) != count:
        err = RuntimeError(f'jax.distributed.initialize(num_processes={num_processes}) but this run has {count} '
                           f'process{"es" if count != 1 else ""}')
        err._spmd_hint = (f'start the run with spmd run --num-processes {num_processes} (or a processes='
                          f'{num_processes} header): spmd starts and connects the processes itself')
        raise err
    if process_id is not None and int(process_id) != index:
        err = RuntimeError(f'jax.distributed.initialize(process_id={process_id}) but this is process {index} of '
                           f'{count}')
        err._spmd_hint = ('spmd numbers the processes it starts 0..N-1; pass process_id=jax.process_index() or '
                          'leave it out')
        raise err
    _state['initialized'] = True


def shutdown():
    _state['initialized'] = False


def is_initialized():
    return _state['initialized']
