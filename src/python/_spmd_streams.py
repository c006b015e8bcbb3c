"""sys.stdout and sys.stderr of a program that `spmd run` runs.

The bytes go to spmdsim's own streams (python_runner.cc's StreamWriter), so
the program's output, device prints and the reports keep one order, and a
device's print() under disable_jit goes through the ordered print queue.
Around that sink these are the io classes programs and libraries expect of
sys.stdout: io.TextIOBase with reconfigure, writelines, fileno (faulthandler),
closed, tell and the rest, and a binary .buffer, as CPython's own streams
have them: UTF-8; on stdout the error handler CPython picked for its own
from the locale (surrogateescape under the C and C.UTF-8 locales, where a lone
surrogate from os.fsdecode prints as its byte; strict elsewhere), on stderr
backslashreplace.
"""

import io
import os
import sys


class ProgramBinaryStream(io.RawIOBase):
    """sys.stdout.buffer: bytes to the same sink."""

    def __init__(self, sink, name):
        super().__init__()
        self._sink = sink
        self.name = name
        self.mode = 'wb'

    def writable(self):
        return True

    def write(self, data):
        if self.closed:
            raise ValueError('write to closed file')
        data = bytes(memoryview(data).cast('B'))
        self._sink.write_bytes(data)
        return len(data)

    def flush(self):
        if not self.closed:
            self._sink.flush()

    def fileno(self):
        if self._sink.fd < 0:
            raise io.UnsupportedOperation('fileno')
        return self._sink.fd

    def isatty(self):
        return self._sink.fd >= 0 and os.isatty(self._sink.fd)


class ProgramTextStream(io.TextIOBase):
    """sys.stdout / sys.stderr: text encoded as CPython's stream would."""

    def __init__(self, sink, name, errors):
        super().__init__()
        self._buffer = ProgramBinaryStream(sink, name)
        self._encoding = 'utf-8'
        self._errors = errors
        self._line_buffering = False
        self._write_through = False
        self.name = name
        self.mode = 'w'

    encoding = property(lambda self: self._encoding)
    errors = property(lambda self: self._errors)
    buffer = property(lambda self: self._buffer)
    line_buffering = property(lambda self: self._line_buffering)
    write_through = property(lambda self: self._write_through)

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f'write() argument must be str, not {type(text).__name__}')
        if self.closed:
            raise ValueError('I/O operation on closed file.')
        self._buffer.write(text.encode(self._encoding, self._errors))
        return len(text)

    def flush(self):
        if self.closed:
            raise ValueError('I/O operation on closed file.')
        self._buffer.flush()

    def close(self):
        if not self.closed:
            super().close()  # flushes
            self._buffer.close()

    def fileno(self):
        return self._buffer.fileno()

    def isatty(self):
        return self._buffer.isatty()

    def reconfigure(self, *, encoding=None, errors=None, newline=None, line_buffering=None, write_through=None):
        if encoding is not None:
            self._encoding = encoding  # codecs.lookup's error for an unknown one comes at the next write
            if errors is None:
                errors = 'strict'
        if errors is not None:
            self._errors = errors
        if line_buffering is not None:
            self._line_buffering = bool(line_buffering)
        if write_through is not None:
            self._write_through = bool(write_through)

    def __repr__(self):
        return f"<_io.TextIOWrapper name='{self.name}' mode='w' encoding='{self._encoding}'>"


class _FinishedRun:
    """The sink of a stream that outlived its run (a logging handler keeps
    sys.stderr): the run's own streams are gone."""
    fd = -1

    def write_bytes(self, data):
        raise ValueError('I/O operation on the stream of an spmd run that has finished')

    def flush(self):
        pass


def detach(stream):
    """Called as the run ends: the stream stops using the run's sink."""
    stream.buffer._sink = _FinishedRun()


def program_streams(out_sink, err_sink):
    """(sys.stdout, sys.stderr) over the run's two sinks."""
    stdout_errors = getattr(sys.__stdout__, 'errors', None) or 'strict'
    return (ProgramTextStream(out_sink, '<stdout>', stdout_errors),
            ProgramTextStream(err_sink, '<stderr>', 'backslashreplace'))
