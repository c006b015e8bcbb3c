"""Runs one Python program under real JAX and under spmdsim's jax, in the
same venv's python3, and compares what the user would see: stdout exactly,
and the exit status. Real JAX gets 8 CPU devices (XLA_FLAGS), as a user
without GPUs would run it; spmdsim's jax is put first on PYTHONPATH.

    python tools/conformance/compare.py --spmd-path SRC/python:BUILD/python prog.py

Exit 0 when they agree; 1 with both outputs and a diff when they do not.
A program may bound real JAX's run (one that hangs under JAX) with a header
line `# conformance: jax-timeout=SECONDS`.
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
import time


def run(program, env, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run([sys.executable, program], env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or '')
        return None, out, f'hung: stopped after {timeout} s', time.monotonic() - start


def header_timeout(program, default):
    with open(program, encoding='utf-8') as f:
        for line in f:
            m = re.match(r'#\s*conformance:\s*jax-timeout=(\d+)', line)
            if m:
                return int(m.group(1))
    return default


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--spmd-path', required=True, help="PYTHONPATH that puts spmdsim's jax first")
    ap.add_argument('--devices', type=int, default=8)
    ap.add_argument('program')
    args = ap.parse_args()

    base = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'XLA_FLAGS', 'VIRTUAL_ENV')}
    base['PYTHONHASHSEED'] = '0'
    jax_env = dict(base, JAX_PLATFORMS='cpu',
                   XLA_FLAGS=f'--xla_force_host_platform_device_count={args.devices}')
    spmd_env = dict(base, PYTHONPATH=args.spmd_path,
                    XLA_FLAGS=f'--xla_force_host_platform_device_count={args.devices}')

    jax_rc, jax_out, jax_err, jax_s = run(args.program, jax_env, header_timeout(args.program, 240))
    spmd_rc, spmd_out, spmd_err, spmd_s = run(args.program, spmd_env, 240)
    print(f'{args.program}: real JAX exit {jax_rc} in {jax_s:.2f} s, spmdsim exit {spmd_rc} in {spmd_s:.2f} s')
    if jax_rc == spmd_rc and jax_out == spmd_out:
        print(f'agree: {len(jax_out.splitlines())} lines of stdout')
        return 0
    print('DIFFER')
    sys.stdout.writelines(difflib.unified_diff(jax_out.splitlines(True), spmd_out.splitlines(True),
                                               'real JAX', 'spmdsim'))
    for name, err in (('real JAX', jax_err), ('spmdsim', spmd_err)):
        if err.strip():
            print(f'--- {name} stderr (last lines)')
            print('\n'.join(err.strip().splitlines()[-15:]))
    return 1


if __name__ == '__main__':
    sys.exit(main())
