"""The pytest plugin and spmdsim's jax in a plain python3 (ctest python:pytest).

The suite runs itself on spmdsim; the last test runs pytest on a small suite
whose pmap deadlocks and checks that it fails at once with the report.
"""

import os
import subprocess
import sys
import textwrap

import pytest

import jax
import jax.numpy as jnp
from jax import lax
import _spmd


@pytest.mark.spmd(devices=4)
def test_devices_from_the_marker():
    assert jax.device_count() == 4
    out = jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(jnp.arange(4.0))
    assert out.tolist() == [6.0, 6.0, 6.0, 6.0]


def test_default_is_eight_devices():
    assert jax.device_count() == 8


@pytest.mark.spmd(devices=3)
def test_a_skipped_psum_is_a_deadlock_error_not_a_hang():
    def f(x):
        return lax.cond(lax.axis_index('i') == 1, lambda v: v, lambda v: lax.psum(v, 'i'), x)
    with pytest.raises(_spmd.SpmdError) as e:
        jax.pmap(f, axis_name='i')(jnp.arange(3.0))
    assert e.value.kind == 'Deadlock'
    assert 'devices {0, 2} wait at psum' in e.value.message
    assert 'first differing decision: lax.cond' in str(e.value)


def test_a_failing_suite_fails_fast_with_the_report(tmp_path):
    suite = tmp_path / 'test_hangs_on_gpus.py'
    suite.write_text(textwrap.dedent('''
        import jax, jax.numpy as jnp
        from jax import lax

        def test_step():
            def step(x):
                return lax.cond(lax.axis_index('d') == 0, lambda v: v, lambda v: lax.pmean(v, 'd'), x)
            jax.pmap(step, axis_name='d')(jnp.ones(2))
    '''))
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(os.path.abspath(p) for p in env.get('PYTHONPATH', '').split(os.pathsep) if p)
    r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'spmd_pytest', str(suite)],
                       capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == 1
    assert '1 failed' in r.stdout
    assert 'deadlock: device 1 waits at pmean over' in r.stdout
    assert 'first differing decision: lax.cond' in r.stdout


@pytest.mark.parametrize('daemon', [True, False])
def test_a_thread_still_in_a_pmap_as_the_next_test_starts(tmp_path, daemon):
    # Issue 36: each test's fresh Runtime replaced the old one under a background thread still in a pmap on it.
    suite = tmp_path / 'test_background_pmaps.py'
    suite.write_text(textwrap.dedent(f'''
        import threading
        import jax, jax.numpy as jnp
        from jax import lax

        results = []

        def loop():
            for _ in range(300):
                n = jax.local_device_count()
                out = jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(jnp.arange(float(n)))
                results.append(out.tolist() == [n * (n - 1) / 2] * n)

        worker = threading.Thread(target=loop, daemon={daemon})

        def test_starts_the_thread():
            worker.start()

        def test_runs_pmaps_of_its_own():
            for k in range(50):
                assert jax.pmap(lambda x: x * 2)(jnp.arange(8.0)).tolist()[3] == 6.0

        def test_joins_it():
            worker.join()
            assert results == [True] * 300
    '''))
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(os.path.abspath(p) for p in env.get('PYTHONPATH', '').split(os.pathsep) if p)
    r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'spmd_pytest', str(suite)],
                       capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '3 passed' in r.stdout


def test_a_suites_atexit_pmap_and_unclosed_file_run_at_its_exit(tmp_path):
    # Issue 35 under the plugin: python3 itself ends the session; a test's atexit handler may still pmap.
    suite = tmp_path / 'test_at_exit.py'
    suite.write_text(textwrap.dedent('''
        import atexit
        import jax, jax.numpy as jnp
        from jax import lax

        def test_registers():
            f = open('metrics.txt', 'w')
            f.write('loss 0.5\\n')
            atexit.register(lambda: print('at exit', jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(jnp.ones(8))[0]))
            globals()['kept'] = f
    '''))
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(os.path.abspath(p) for p in env.get('PYTHONPATH', '').split(os.pathsep) if p)
    r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-s', '-p', 'spmd_pytest', str(suite)],
                       capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '1 passed' in r.stdout
    assert r.stdout.rstrip().endswith('at exit 8.0')
    assert (tmp_path / 'metrics.txt').read_text() == 'loss 0.5\n'
