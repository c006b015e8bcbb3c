"""The user's virtual environment inside `spmd run`.

`spmd` embeds Debian's CPython, which knows nothing of the venv the user
activated. So that `pip install optax flax` in that venv is all a user does,
the embedded interpreter puts the venv's site-packages on sys.path right
after spmdsim's own package (so spmdsim's jax still wins) and before Debian's
dist-packages (so the venv's numpy 2.x, say, is the numpy the program gets).
The venv is $VIRTUAL_ENV, else the one `spmd` itself was installed into
(its bin/ next to a pyvenv.cfg).

Runs before numpy is imported, so it imports nothing beyond the standard
library's os, site and sys.
"""

import os
import site
import sys


def find_virtualenv(environ=None, executable=None):
    """The venv's directory, or None."""
    environ = os.environ if environ is None else environ
    env = environ.get('VIRTUAL_ENV', '')
    if env:
        return env
    if executable:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(executable)))
        if os.path.isfile(os.path.join(prefix, 'pyvenv.cfg')):
            return prefix
    return None


def _site_packages(venv):
    return os.path.join(venv, 'lib', f'python{sys.version_info[0]}.{sys.version_info[1]}', 'site-packages')


def _other_pythons(venv):
    lib = os.path.join(venv, 'lib')
    try:
        return sorted(d for d in os.listdir(lib) if d.startswith('python'))
    except OSError:
        return []


def _real_jax_version(site_dir):
    """The version of a real JAX pip installed there, or None."""
    if not os.path.isfile(os.path.join(site_dir, 'jax', '__init__.py')):
        return None
    for name in sorted(os.listdir(site_dir)):
        if name.startswith('jax-') and name.endswith('.dist-info'):
            return name[len('jax-'):-len('.dist-info')]
    return 'of unknown version'


def activate(executable=None, stderr=None):
    """Puts the venv's site-packages (and its .pth entries) after sys.path[0].
    Returns the site-packages directory used, or None."""
    stderr = sys.stderr if stderr is None else stderr
    venv = find_virtualenv(executable=executable)
    if venv is None:
        return None
    site_dir = _site_packages(venv)
    here = f'{sys.version_info[0]}.{sys.version_info[1]}'
    if not os.path.isdir(site_dir):
        others = _other_pythons(venv)
        what = (f"it holds packages for {', '.join(o.replace('python', 'Python ') for o in others)}"
                if others else 'it has no lib/python*/site-packages')
        stderr.write(f'spmd: note: not using the virtual environment {venv}: {what}, and spmd runs Python {here}\n'
                     f'  hint: make the venv with the Python spmd embeds: /usr/bin/python3 -m venv {venv}\n')
        return None
    before = list(sys.path)
    site.addsitedir(site_dir)  # also reads its .pth files (editable installs)
    added = [p for p in sys.path if p not in before]
    sys.path[:] = before[:1] + added + before[1:]
    version = _real_jax_version(site_dir)
    if version is not None:
        stderr.write(f'spmd: note: {venv} has JAX {version} installed; spmd runs the program on spmdsim\'s own jax, '
                     'which shadows it\n')
    return site_dir


def child_python(site_dir=None):
    """The interpreter a child of the program should run: the venv's python when
    its site-packages are in use, else the base Python of the version spmd embeds
    (Debian's /usr/bin/python3.11), or None where neither exists."""
    candidates = []
    if site_dir:
        venv = os.path.dirname(os.path.dirname(os.path.dirname(site_dir)))
        candidates.append(os.path.join(venv, 'bin', 'python'))
    version = f'{sys.version_info[0]}.{sys.version_info[1]}'
    candidates.append(os.path.join(sys.base_prefix, 'bin', f'python{version}'))
    for path in candidates:
        if os.access(path, os.X_OK):
            return path
    return None


def set_child_python(extension_dir, site_dir=None):
    """sys.executable inside `spmd run`: CPython embedded in spmd guesses it from
    PATH (a pyenv shim, another Python version), so multiprocessing's spawn and
    forkserver workers, and `subprocess.run([sys.executable, ...])`, started a
    Python that could not import the program's modules. Such a child runs as a
    plain python3 with spmdsim's jax: it gets the parent's sys.path (spawn passes
    it on), which therefore also holds the directory of the _spmd extension
    module (the parent's own _spmd is built into spmd and found first)."""
    python = child_python(site_dir)
    if python is not None:
        sys.executable = python
        sys._base_executable = python
    if extension_dir and os.path.isdir(extension_dir) and extension_dir not in sys.path:
        sys.path.append(extension_dir)
