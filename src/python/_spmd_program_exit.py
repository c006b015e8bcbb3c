"""How a program started by `spmd run` (or `spmd test`) begins and ends.

`python3 prog.py` does more than run the main module: it puts the script's
directory first on sys.path and gives `__main__` its loader; after the
module returns (or raises), Py_FinalizeEx joins the non-daemon threads, runs
the atexit callbacks, releases the program's objects (so unclosed files are
flushed and closed) and flushes sys.stdout and sys.stderr; SystemExit's code
becomes the exit status. The embedded interpreter lives on after a run (numpy
cannot be loaded twice), so python_runner.cc does these steps itself, in
CPython's order, through `begin` and `finish`.

One deliberate difference, for debugging: an error of spmdsim's checks (a
deadlock, a collective mismatch, a split error: any _spmd.SpmdError) that
escapes a thread or an atexit callback is the run's verdict, with its report,
where CPython would print it and exit 0 (and real JAX would often hang).
Other exceptions there are printed as CPython prints them and change nothing.
"""

import atexit
import gc
import importlib.machinery
import io
import os
import sys
import threading

import _spmd


class _Run:
    """What one run changed and must undo, and the errors its threads and
    atexit callbacks raised."""

    def __init__(self):
        self.script_dir = None
        self.errors = []
        self.previous_thread_hook = None
        self.previous_unraisable_hook = None


_run = _Run()


def _is_verdict(exc):
    return isinstance(exc, (_spmd.SpmdError, _spmd.HostStop))


def _thread_hook(args):
    # A thread's own SystemExit ends just that thread, as in CPython.
    if _is_verdict(args.exc_value) and not _run.errors:
        _run.errors.append(args.exc_value)
        return
    _run.previous_thread_hook(args)


def _unraisable_hook(unraisable):
    if _is_verdict(unraisable.exc_value) and not _run.errors:
        _run.errors.append(unraisable.exc_value)
        if isinstance(unraisable.exc_value, _spmd.HostStop):
            # Interrupted or out of time: no further callback runs.
            atexit._clear()
        return
    _run.previous_unraisable_hook(unraisable)


def begin(main_module, path):
    """Sets up `__main__` and sys.path as `python3 path` does, and starts
    collecting the errors of the program's threads."""
    main_module.__loader__ = importlib.machinery.SourceFileLoader('__main__', path)
    main_module.__spec__ = None
    main_module.__package__ = None
    main_module.__cached__ = None
    main_module.__doc__ = None
    main_module.__annotations__ = {}
    # The script's directory (symbolic links resolved) is sys.path[0], so the
    # program imports its own modules beside it; spmdsim's jax comes next.
    _run.script_dir = os.path.dirname(os.path.realpath(path))
    sys.path.insert(0, _run.script_dir)
    _run.errors = []
    _run.previous_thread_hook = threading.excepthook
    threading.excepthook = _thread_hook


def exit_status(code):
    """The exit status of `sys.exit(code)`, as CPython computes it
    (_Py_HandleSystemExit): None is 0; an int is taken as a C long (one out
    of its range is -1) and the system keeps its low 8 bits; anything else
    is printed on sys.stderr and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        value = int(code)
        if not -2**63 <= value < 2**63:
            value = -1
        return value & 0xFF
    try:
        text = str(code)
    except Exception:  # CPython prints what it can; here, nothing
        text = ''
    sys.stderr.write(text + '\n')
    return 1


def _other_threads_alive():
    me = threading.current_thread()
    return any(t is not me and t.is_alive() for t in threading.enumerate())


def _join_threads():
    # threading._shutdown's work, repeatable: it can run once per interpreter
    # and this one runs a program after another. A thread may start another.
    me = threading.current_thread()
    while True:
        pending = [t for t in threading.enumerate() if t is not me and not t.daemon and t.is_alive()]
        if not pending:
            return
        for t in pending:
            try:
                while t.is_alive():  # in steps: a stop (SIGINT, the budget) lands between them
                    t.join(0.05)
            except _spmd.HostStop as stop:
                _say_where_joined(stop, t)
                raise


def _say_where_joined(stop, thread):
    # Stopped (SIGINT, --max-seconds) while the exit waited for `thread`: the
    # report points at the line that thread stood at, as python3's
    # KeyboardInterrupt in threading._shutdown would not.
    frame = sys._current_frames().get(thread.ident)
    while frame is not None and not os.path.realpath(frame.f_code.co_filename).startswith(_run.script_dir + os.sep):
        frame = frame.f_back  # out of threading's and the libraries' frames, to the program's own
    where = f' at {frame.f_code.co_filename}:{frame.f_lineno}' if frame is not None else ''
    stop._spmd_note = (f"the program's end was waiting for the non-daemon thread {thread.name!r}{where} "
                       "(python3 joins them before it exits)")
    if frame is not None:
        stop._spmd_where = (frame.f_code.co_filename, frame.f_lineno, 0)


def _release_main(main_module):
    # CPython clears the main module's names (those with one leading
    # underscore first, __builtins__ last), so what only they held is freed:
    # an unclosed file is flushed and closed, a __del__ runs. A daemon thread
    # may still use those names; then they stay and files are only flushed.
    if _other_threads_alive():
        return
    names = vars(main_module)
    for first in (True, False):
        for name in list(names):
            if name == '__builtins__':
                continue
            if (name.startswith('_') and not name.startswith('__')) == first:
                names[name] = None
    gc.collect()


def _flush_open_files():
    # Files the program still holds somewhere else (a list, a library's
    # logger): their data reaches the disk as it would at CPython's exit.
    standard = {id(s) for s in (sys.__stdout__, sys.__stderr__, sys.__stdin__) if s is not None}
    for obj in gc.get_objects():
        if not isinstance(obj, io.IOBase) or id(obj) in standard:
            continue
        try:
            if not obj.closed and obj.writable():
                obj.flush()
        except Exception:
            pass


def _flush_std_streams():
    # The original streams too (the process's descriptors 1 and 2): what the
    # program wrote to sys.__stdout__ leaves before spmd's report, as at exit.
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None and not getattr(stream, 'closed', False):
                stream.flush()
        except Exception:
            pass


def finish(main_module, run_user_code):
    """Ends the run as Py_FinalizeEx ends `python3 prog.py`: joins the
    non-daemon threads, runs the atexit callbacks, releases the main module
    and flushes every open file and sys.stdout/sys.stderr. With
    run_user_code False (the run was interrupted or ran out of time) the
    threads and callbacks are skipped: the run stops where it stood.
    Returns the first error of spmdsim's checks raised by a thread or a
    callback, or None; an interrupt while joining or in a callback raises."""
    try:
        if run_user_code:
            _join_threads()
            _run.previous_unraisable_hook = sys.unraisablehook
            sys.unraisablehook = _unraisable_hook
            try:
                atexit._run_exitfuncs()
            finally:
                sys.unraisablehook = _run.previous_unraisable_hook
        else:
            atexit._clear()
        _release_main(main_module)
        _flush_open_files()
        _flush_std_streams()
    finally:
        threading.excepthook = _run.previous_thread_hook
        if _run.script_dir is not None:
            try:
                sys.path.remove(_run.script_dir)
            except ValueError:
                pass
            _run.script_dir = None
    errors, _run.errors = _run.errors, []
    for exc in errors:
        if isinstance(exc, _spmd.HostStop):
            raise exc
    return errors[0] if errors else None
