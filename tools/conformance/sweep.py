"""Every scenario under real JAX and under `spmd run`, side by side: a
Markdown table of how each ends in each (issue 32's conformance table).

    build/venv/bin/python tools/conformance/sweep.py [--spmd build/bin/spmd] [--venv build/venv] scenarios/

Real JAX runs the file with the venv's python3 and XLA_FLAGS giving it the
scenario's device count (its `# spmd: devices=N`, else 8), bounded by
--jax-timeout seconds (a hang under JAX is reported as such, or as the abort
of XLA's own rendezvous timeout); spmdsim runs it with `spmd run` in the
venv. A row agrees when both end the same way: the same stdout for programs
that finish, the same exception class for programs that fail (spmdsim's
report kind, or the class JAX raised), and for a deadlock a spmdsim report
where JAX hangs.
"""

import argparse
import os
import re
import subprocess
import sys
import time


def header(path):
    devices, expect = 8, ''
    with open(path, encoding='utf-8') as f:
        for line in f:
            if not line.startswith('#'):
                break
            m = re.search(r'\bdevices=(\d+)', line)
            if m and 'spmd:' in line:
                devices = int(m.group(1))
            m = re.search(r'\bexpect=(\S+)', line)
            if m and 'spmd:' in line:
                expect = m.group(1)
    return devices, expect


# spmdsim report kinds whose Python exception is also the builtin JAX raises
# (src/python/error_binding.cc): they agree with that class.
_ALSO = {'AxisNameError': 'NameError', 'ShapeError': 'TypeError', 'AxisError': 'ValueError', 'DeviceCountError': 'ValueError',
         'InputSplitError': 'ValueError'}


def run(cmd, env, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return None, '', '', time.monotonic() - start


def exception_class(stderr):
    for line in reversed(stderr.strip().splitlines()):
        m = re.match(r'^([A-Za-z_][\w.]*(Error|Exception|Warning)):', line.strip())
        if m:
            return m.group(1).split('.')[-1]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--spmd', default='build/bin/spmd')
    ap.add_argument('--venv', default='build/venv')
    ap.add_argument('--jax-timeout', type=float, default=60)
    ap.add_argument('paths', nargs='+')
    args = ap.parse_args()
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in names if n.endswith('.py')]
        else:
            files.append(p)
    files.sort()
    base = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'XLA_FLAGS')}
    python = os.path.join(args.venv, 'bin', 'python')
    print('| scenario | real JAX | spmdsim | agree |')
    print('| --- | --- | --- | --- |')
    agree_count = 0
    for path in files:
        devices, expect = header(path)
        if 'processes=' in open(path, encoding='utf-8').read(400):
            print(f'| `{path}` | (several processes: not run) | | |')
            continue
        env = dict(base, XLA_FLAGS=f'--xla_force_host_platform_device_count={devices}', JAX_PLATFORMS='cpu')
        jrc, jout, jerr, js = run([python, path], env, args.jax_timeout)
        senv = dict(base, VIRTUAL_ENV=os.path.abspath(args.venv))
        src, sout, serr, ss = run([args.spmd, 'run', '--devices', str(devices), path], senv, 300)
        kind = re.search(r'error\[(\w+)\]', serr)
        skind = 'Deadlock' if src == 3 else 'Mismatch' if src == 4 else (kind.group(1) if kind else None)
        if jrc is None:
            jax_says = f'hung ({js:.0f} s, stopped)'
        elif jrc < 0 or 'Termination timeout' in jerr:
            jax_says = f'aborted by XLA after {js:.0f} s' if 'Termination timeout' in jerr else f'killed ({jrc})'
        elif jrc == 0:
            jax_says = f'ok ({len(jout.splitlines())} lines)'
        else:
            jax_says = exception_class(jerr) or f'exit {jrc}'
        spmd_says = f'ok ({len(sout.splitlines())} lines)' if src == 0 else f'{skind} ({ss:.2f} s)'
        if src == 0 and jrc == 0:
            same = 'yes' if sout == jout else 'stdout differs'
        elif src in (3, 4) and (jrc is None or 'aborted' in jax_says or 'killed' in jax_says):
            same = 'yes (spmdsim reports what JAX hangs on)'
        elif src not in (0, None) and jrc not in (0, None):
            same = 'yes' if jax_says in (skind, _ALSO.get(skind)) else 'class differs'
        else:
            same = 'no'
        agree_count += same.startswith('yes')
        print(f'| `{path}` | {jax_says} | {spmd_says} | {same} |', flush=True)
    print(f'\n{agree_count} of {len(files)} agree')


if __name__ == '__main__':
    sys.exit(main())
