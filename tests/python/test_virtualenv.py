"""_spmd_virtualenv: how `spmd run` finds the user's venv and puts its
packages after spmdsim's jax and before Debian's dist-packages."""

import io
import os
import sys

import _spmd_virtualenv as venv


def _fake_venv(tmp_path, python=None, with_jax=False):
    python = python or f'python{sys.version_info[0]}.{sys.version_info[1]}'
    site_dir = tmp_path / 'lib' / python / 'site-packages'
    site_dir.mkdir(parents=True)
    (tmp_path / 'pyvenv.cfg').write_text('home = /usr/bin\n')
    (tmp_path / 'bin').mkdir()
    (site_dir / 'extra.pth').write_text(str(tmp_path / 'editable') + '\n')
    (tmp_path / 'editable').mkdir()
    if with_jax:
        (site_dir / 'jax').mkdir()
        (site_dir / 'jax' / '__init__.py').write_text('')
        (site_dir / 'jax-0.8.1.dist-info').mkdir()
    return site_dir


def test_virtual_env_variable_wins_then_the_venv_spmd_was_installed_into(tmp_path):
    _fake_venv(tmp_path)
    assert venv.find_virtualenv({'VIRTUAL_ENV': '/somewhere'}, str(tmp_path / 'bin' / 'spmd')) == '/somewhere'
    assert venv.find_virtualenv({}, str(tmp_path / 'bin' / 'spmd')) == str(tmp_path)
    assert venv.find_virtualenv({}, '/usr/bin/spmd') is None


def test_activate_puts_site_packages_and_pth_entries_right_after_path_0(tmp_path, monkeypatch):
    site_dir = _fake_venv(tmp_path, with_jax=True)
    monkeypatch.setenv('VIRTUAL_ENV', str(tmp_path))
    monkeypatch.setattr(sys, 'path', ['/spmd/src/python', '/usr/lib/python3/dist-packages'])
    err = io.StringIO()
    assert venv.activate(stderr=err) == str(site_dir)
    assert sys.path == ['/spmd/src/python', str(site_dir), str(tmp_path / 'editable'), '/usr/lib/python3/dist-packages']
    assert err.getvalue() == (f"spmd: note: {tmp_path} has JAX 0.8.1 installed; spmd runs the program on spmdsim's "
                              "own jax, which shadows it\n")


def test_a_venv_of_another_python_is_named_with_the_fix(tmp_path, monkeypatch):
    _fake_venv(tmp_path, python='python3.99')
    monkeypatch.setenv('VIRTUAL_ENV', str(tmp_path))
    monkeypatch.setattr(sys, 'path', ['/spmd/src/python'])
    err = io.StringIO()
    assert venv.activate(stderr=err) is None
    assert sys.path == ['/spmd/src/python']
    here = f'{sys.version_info[0]}.{sys.version_info[1]}'
    assert err.getvalue() == (f'spmd: note: not using the virtual environment {tmp_path}: it holds packages for '
                              f'Python 3.99, and spmd runs Python {here}\n'
                              f'  hint: make the venv with the Python spmd embeds: /usr/bin/python3 -m venv {tmp_path}\n')


def test_no_venv_changes_nothing(monkeypatch):
    monkeypatch.delenv('VIRTUAL_ENV', raising=False)
    before = list(sys.path)
    assert venv.activate(executable='/usr/bin/spmd', stderr=io.StringIO()) is None
    assert sys.path == before
