"""Signals and daemon threads around device runs in a plain python3 (issue 36, findings 1 and 8).

Each program runs in its own python3 (subprocess, bounded by a timeout) as a user runs it.
"""

import os
import subprocess
import sys
import textwrap

import pytest

# A pmap that runs for minutes unless something stops it.
LONG_PMAP = "jax.pmap(lambda x: jax.lax.fori_loop(0, 10**9, lambda i, c: c + 1.0, x))"


def run_python3(tmp_path, source, *args, timeout=60):
    prog = tmp_path / 'prog.py'
    prog.write_text(textwrap.dedent(source))
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(os.path.abspath(p) for p in env.get('PYTHONPATH', '').split(os.pathsep) if p)
    return subprocess.run([sys.executable, *args, str(prog)], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=tmp_path)


def test_a_daemon_thread_in_a_pmap_at_exit_ends_quietly(tmp_path):
    # Was `terminate called without an active exception` (rc 134) in most runs:
    # CPython ends the thread as it asks for the GIL back after its pmap.
    for eager in (False, True):
        body = "with jax.disable_jit(): f(x)" if eager else "f(x)"
        source = f'''
            import threading, time, jax, jax.numpy as jnp
            f = jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')
            def loop():
                x = jnp.ones((jax.device_count(), 1000))
                while True:
                    {body}
            threading.Thread(target=loop, daemon=True).start()
            time.sleep(0.2)
            print("main done")
        '''
        for _ in range(3):
            r = run_python3(tmp_path, source)
            assert (r.returncode, r.stdout, r.stderr) == (0, "main done\n", "")


def test_a_daemon_thread_in_a_long_pmap_at_exit_is_stopped_first(tmp_path):
    # The Runtime (a static of the extension) went away under the thread's run: SIGSEGV.
    r = run_python3(tmp_path, f'''
        import threading, time, jax, jax.numpy as jnp
        f = {LONG_PMAP}
        threading.Thread(target=lambda: f(jnp.zeros(jax.device_count())), daemon=True).start()
        time.sleep(0.3)
        print("main done")
    ''')
    assert (r.returncode, r.stdout, r.stderr) == (0, "main done\n", "")


def test_a_signal_handler_that_raises_stops_the_pmap_with_its_report(tmp_path):
    r = run_python3(tmp_path, f'''
        import signal, time, jax, jax.numpy as jnp
        def on_alarm(signum, frame):
            raise TimeoutError("took too long")
        signal.signal(signal.SIGALRM, on_alarm)
        f = {LONG_PMAP}
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        start = time.monotonic()
        try:
            f(jnp.zeros(jax.device_count()))
        except TimeoutError as e:
            print(type(e).__name__, e, time.monotonic() - start < 5)
            note = e.__notes__[0].splitlines()
            print(note[0])
            print(sum(1 for line in note if line.strip().startswith('device ') and 'stopped' in line))
        f2 = jax.pmap(lambda x: x + 1)
        print(f2(jnp.zeros(jax.device_count())))
    ''')
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("TimeoutError took too long True\n"
                        "error[Interrupted]: a Python signal handler raised TimeoutError: took too long during the "
                        "device run\n"
                        "7\n"
                        "[1. 1. 1. 1. 1. 1. 1. 1.]\n")


def test_a_signal_handler_that_returns_lets_the_pmap_finish(tmp_path):
    r = run_python3(tmp_path, '''
        import signal, jax, jax.numpy as jnp
        calls = []
        signal.signal(signal.SIGALRM, lambda signum, frame: calls.append(signum))
        f = jax.pmap(lambda x: jax.lax.fori_loop(0, 200000, lambda i, c: c + 1.0, x))
        signal.setitimer(signal.ITIMER_REAL, 0.02, 0.02)
        out = f(jnp.zeros(jax.device_count()))
        signal.setitimer(signal.ITIMER_REAL, 0)
        print(out, len(calls) > 0)
    ''')
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[200000. 200000. 200000. 200000. 200000. 200000. 200000. 200000.] True\n"


def test_ctrl_c_during_a_pmap_is_a_keyboard_interrupt_with_the_report(tmp_path):
    r = run_python3(tmp_path, f'''
        import os, signal, threading, jax, jax.numpy as jnp
        f = {LONG_PMAP}
        threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        f(jnp.zeros(jax.device_count()))
    ''')
    assert r.returncode == -2  # as python3 ends on an uncaught KeyboardInterrupt
    assert '\nKeyboardInterrupt\n' in r.stderr
    assert ('error[Interrupted]: a Python signal handler raised KeyboardInterrupt during the device run'
            in r.stderr)


def test_a_pytest_timeout_by_sigalrm_fails_the_test_instead_of_hanging(tmp_path):
    # pytest-timeout's signal method: a SIGALRM handler that calls pytest.fail.
    suite = tmp_path / 'test_slow.py'
    suite.write_text(textwrap.dedent(f'''
        import signal, pytest, jax, jax.numpy as jnp

        @pytest.fixture(autouse=True)
        def timeout():
            def on_alarm(signum, frame):
                pytest.fail("Timeout >0.3s")
            signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            yield
            signal.setitimer(signal.ITIMER_REAL, 0)

        def test_slow_step():
            {LONG_PMAP}(jnp.zeros(8))

        def test_next_one_runs():
            assert jax.pmap(lambda x: x * 2)(jnp.ones(8)).tolist() == [2.0] * 8
    '''))
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(os.path.abspath(p) for p in env.get('PYTHONPATH', '').split(os.pathsep) if p)
    r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'spmd_pytest', '-p', 'no:cacheprovider',
                        str(suite)], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert '1 failed, 1 passed' in r.stdout
    assert 'Failed: Timeout >0.3s' in r.stdout
    assert 'a Python signal handler raised Failed: Timeout >0.3s during the device run' in r.stdout
