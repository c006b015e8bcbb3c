"""`spmd run prog.py` against `python3 prog.py` (issue 35): the same program, run both ways with spmdsim's jax,
must print the same stdout, exit with the same status and leave the same files; its stderr too where the
program ends without an uncaught exception (an uncaught one is spmdsim's report under `spmd run`, by design).

Each case is a program; the harness runs it under the test venv's python3 (spmdsim's jax first on PYTHONPATH) and
under the spmd binary (SPMD_BIN, set by ctest), from the program's directory as `python3 prog.py a b` and
`spmd run prog.py a b`, and compares."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

SPMD = os.path.abspath(os.environ['SPMD_BIN']) if os.environ.get('SPMD_BIN') else None
pytestmark = pytest.mark.skipif(not SPMD, reason='SPMD_BIN (the spmd binary) is set by ctest')

CASES = {
    'unclosed_file_atexit_thread_exit_status': '''
        import atexit, sys, threading, time
        import jax, jax.numpy as jnp
        f = open('result.txt', 'w')
        f.write('loss 0.25\\n')
        atexit.register(lambda: print('atexit', jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i')(jnp.ones(2))))
        def save():
            time.sleep(0.2)
            print('saved', jax.pmap(lambda x: x + 1)(jnp.arange(2.0)))
        threading.Thread(target=save).start()
        print('main done')
        sys.exit(3)
    ''',
    'sys_exit_message': 'import sys\nprint("working")\nsys.exit("could not converge")\n',
    'sys_exit_none_and_list': 'import sys\ntry:\n    sys.exit(None)\nfinally:\n    print("bye")\n',
    'sys_exit_list': 'import sys\nsys.exit([1, 2])\n',
    'sys_exit_huge': 'import sys\nsys.exit(2**70)\n',
    'sys_exit_in_a_thread_ends_only_it': '''
        import sys, threading
        t = threading.Thread(target=lambda: sys.exit(4))
        t.start(); t.join()
        print('still here')
    ''',
    'sys_exit_in_a_jit_callback': '''
        import sys, jax, jax.numpy as jnp
        def cb(v):
            if float(v) > 2:
                sys.exit(7)
        jax.jit(lambda x: jax.debug.callback(cb, x))(jnp.float32(3))
        print('not reached')
    ''',
    'sys_exit_in_a_pmap_callback': '''
        import sys, jax, jax.numpy as jnp
        jax.pmap(lambda x: jax.debug.callback(lambda v: sys.exit(5), x) or x)(jnp.arange(2.0))
        print('not reached')
    ''',
    'os_exit_in_a_pmap_callback': '''
        import os, jax, jax.numpy as jnp
        def cb(v):
            print('in callback', flush=True)
            os._exit(9)
        jax.pmap(lambda x: jax.debug.callback(cb, x) or x)(jnp.arange(2.0))
        print('not reached')
    ''',
    'os_exit_skips_atexit': '''
        import atexit, os
        atexit.register(lambda: print('never'))
        print('exiting', flush=True)
        os._exit(4)
    ''',
    'atexit_exception_and_exit_are_printed_not_fatal': '''
        import atexit, sys
        def boom():
            raise RuntimeError('boom in atexit')
        atexit.register(lambda: sys.exit(3))
        atexit.register(boom)
        print('main done')
    ''',
    'thread_exception_goes_to_threading_excepthook': '''
        import threading
        def work():
            raise ValueError('bad batch')
        t = threading.Thread(target=work, name='loader')
        t.start(); t.join()
        print('main goes on')
    ''',
    'warnings_at_module_level': '''
        import warnings
        warnings.warn('learning rate is high')
        warnings.warn('deprecated flag', DeprecationWarning)
        print('ok')
    ''',
    'main_module_attributes_and_flags': '''
        import faulthandler, os, sys, threading, warnings
        print(__name__, os.path.isabs(__file__), os.path.basename(__file__), __doc__, __package__, __spec__)
        print(sys.argv, sys.orig_argv[sys.orig_argv.index(sys.argv[0]):])
        print(sys.flags.optimize, sys.flags.dont_write_bytecode, sys.flags.inspect, sys.flags.interactive)
        # Known differences, by design: spmd preloads numpy (so its own warning filters are there before the
        # program imports it), and threading.excepthook is spmd's, which keeps a thread's deadlock report and
        # hands every other exception to the hook before it (a hook the program sets is used as in python3).
        print(sys.excepthook is sys.__excepthook__, faulthandler.is_enabled())
        print([f for f in warnings.filters if 'numpy' not in repr(f)])
        seen = []
        threading.excepthook = lambda args: seen.append(type(args.exc_value).__name__)
        t = threading.Thread(target=lambda: 1 / 0)
        t.start(); t.join()
        print(seen)
        print(sys.stdout.isatty(), sys.stdin is not None, sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
    ''',
    'stderr_and_stdout_at_exit': '''
        import atexit, sys
        atexit.register(lambda: sys.stderr.write('closing log\\n'))
        sys.stdout.write('partial line without newline')
        print('err line', file=sys.stderr)
    ''',
}


def normalized(stderr, directory):
    """Without spmd's own summary lines, object addresses, and the run's directory: python3's tracebacks name
    the script by its absolute path, spmd's (like its reports) by the path as given."""
    lines = [l for l in stderr.splitlines() if not l.startswith('spmd: ')]
    return re.sub(r' at 0x[0-9a-f]+', ' at 0x?', '\n'.join(lines)).replace(str(directory) + '/', '')


def run_both(tmp_path, name, source, *args):
    runs = {}
    for how in ('python3', 'spmd'):
        d = tmp_path / how
        d.mkdir()
        prog = d / f'{name}.py'
        prog.write_text(textwrap.dedent(source))
        env = {k: v for k, v in os.environ.items() if k not in ('VIRTUAL_ENV', 'XLA_FLAGS')}
        if how == 'python3':
            env['XLA_FLAGS'] = '--xla_force_host_platform_device_count=2'
            cmd = [sys.executable, prog.name, *args]
        else:
            env.pop('PYTHONPATH', None)
            cmd = [SPMD, 'run', '--devices', '2', prog.name, *args]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=d)
        files = {f.name: f.read_text() for f in d.iterdir() if f.name != prog.name and f.is_file()}
        runs[how] = (p.returncode, p.stdout, normalized(p.stderr, d), files)
    return runs['python3'], runs['spmd']


@pytest.mark.parametrize('name', sorted(CASES))
def test_spmd_run_ends_a_program_as_python3_does(tmp_path, name):
    (rc3, out3, err3, files3), (rc, out, err, files) = run_both(tmp_path, name, CASES[name], 'a', 'b')
    assert (rc, out, files) == (rc3, out3, files3), f'python3 stderr:\n{err3}\nspmd stderr:\n{err}'
    assert err == err3
