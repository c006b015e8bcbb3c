"""jax.profiler: the calls programs make around their training loops, kept so
those programs run. spmdsim has no XLA profiler, so a trace records nothing;
the first start says so once, and where spmdsim's own per-device record is
(spmd run --trace FILE / --timeline FILE)."""

import contextlib
import functools
import sys
import warnings

_active_dir = None
_noted = False


def _note(what):
    global _noted
    if not _noted:
        _noted = True
        # At the program's line: the first frame outside this module and contextlib (trace() is a with).
        level, frame = 1, sys._getframe(1)
        while frame is not None and frame.f_code.co_filename in (__file__, contextlib.__file__):
            level, frame = level + 1, frame.f_back
        warnings.warn(f'jax.profiler.{what}: spmdsim has no XLA profiler, so nothing is recorded; spmd run --trace '
                      "FILE (every collective, per device) and --timeline FILE (Chrome's trace format) record "
                      "spmdsim's own timeline", stacklevel=level + 1)


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    global _active_dir
    if _active_dir is not None:
        raise RuntimeError('Profile has already been started. Only one profile may be run at a time.')
    _note('start_trace')
    _active_dir = str(log_dir)


def stop_trace():
    global _active_dir
    if _active_dir is None:
        raise RuntimeError('No profile started')
    _active_dir = None


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A named region of the (unrecorded) trace: a context manager and decorator."""

    def __init__(self, name, **kwargs):
        self.name = name
        self.kwargs = kwargs

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fun):
        @functools.wraps(fun)
        def wrapped(*args, **kwargs):
            with self:
                return fun(*args, **kwargs)
        return wrapped


class StepTraceAnnotation(TraceAnnotation):
    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    return TraceAnnotation(name or getattr(func, '__qualname__', 'function'), **decorator_kwargs)(func)


class ProfileOptions:
    def __init__(self):
        self.host_tracer_level = 2
        self.python_tracer_level = 0
        self.enable_hlo_proto = True
        self.start_timestamp_ns = 0
        self.duration_ms = 0
        self.repository_path = ''


def start_server(port):
    _note('start_server')


def stop_server():
    pass


def device_memory_profile(backend=None):
    """An empty pprof profile: spmdsim's arenas report their use in the out-of-memory report instead."""
    return b''


def save_device_memory_profile(filename, backend=None):
    with open(filename, 'wb') as f:
        f.write(device_memory_profile(backend))
