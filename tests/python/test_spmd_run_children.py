"""Children of a program under `spmd run` (issue 36, finding 21): sys.executable is a
Python that can import the program's modules and spmdsim's jax, so multiprocessing's
spawn workers and `subprocess.run([sys.executable, ...])` work as under python3."""

import os
import subprocess
import sys
import textwrap

import pytest

SPMD = os.path.abspath(os.environ['SPMD_BIN']) if os.environ.get('SPMD_BIN') else None
pytestmark = pytest.mark.skipif(not SPMD, reason='SPMD_BIN (the spmd binary) is set by ctest')


def spmd_run(tmp_path, source, *args):
    prog = tmp_path / 'prog.py'
    prog.write_text(textwrap.dedent(source))
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'VIRTUAL_ENV')}
    return subprocess.run([SPMD, 'run', *args, str(prog)], capture_output=True, text=True, env=env,
                          timeout=120, cwd=tmp_path)


def test_spawn_workers_run_the_programs_functions_on_spmdsims_jax(tmp_path):
    r = spmd_run(tmp_path, '''
        import multiprocessing as mp, sys
        import jax, jax.numpy as jnp

        def work(n):
            return float(jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')(jnp.full(4, float(n)))[0])

        if __name__ == '__main__':
            with mp.get_context('spawn').Pool(2) as pool:
                print(pool.map(work, [1, 2, 3]))
            print(jax.pmap(lambda x: x * 2)(jnp.arange(4.0)))
    ''', '--devices', '4')
    assert r.returncode == 0, r.stderr
    assert r.stdout == '[4.0, 8.0, 12.0]\n[0. 2. 4. 6.]\n'


def test_sys_executable_is_the_python_spmd_embeds(tmp_path):
    r = spmd_run(tmp_path, '''
        import subprocess, sys
        print(sys.version_info[:2] == tuple(map(int, subprocess.run(
            [sys.executable, '-c', 'import sys; print(*sys.version_info[:2])'],
            capture_output=True, text=True, check=True).stdout.split())))
        child = subprocess.run([sys.executable, '-c', 'import sys; sys.path[:] = %r; import jax; print(jax.device_count())'
                                % sys.path], capture_output=True, text=True)
        print(child.stdout.strip(), child.returncode)
    ''')
    assert r.returncode == 0, r.stderr
    assert r.stdout == 'True\n8 0\n'
