"""pytest plugin: a test suite's pmaps on spmdsim's simulated devices.

    PYTHONPATH=/path/to/spmdsim/src/python:/path/to/spmdsim/build/python \
        python3 -m pytest -p spmd_pytest tests/

With spmdsim's jax first on the path, a test whose pmap would hang on GPUs
(a device skipping a psum) fails at once with the deadlock report instead of
hanging the CI job; a collective mismatch fails with the per-device table.
Each test gets fresh devices: `@pytest.mark.spmd(devices=4)` sets how many
(default: the program's XLA_FLAGS / jax_num_cpu_devices, else 8).
"""

import pytest

import _spmd


def pytest_configure(config):
    config.addinivalue_line('markers', 'spmd(devices=N): run the test on N simulated devices')


@pytest.fixture(autouse=True)
def _spmd_devices(request):
    marker = request.node.get_closest_marker('spmd')
    _spmd.configure_standalone(marker.kwargs.get('devices') if marker else None)
    yield

