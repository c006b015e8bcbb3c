"""Where the user's code is: the innermost Python frame outside spmdsim's own
package, with its PEP 657 position (line and column of the expression)."""

import os
import sys

# src/python: the jax package and anything else spmdsim ships.
OWN_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def is_own_file(filename):
    return filename.startswith(OWN_DIR + os.sep)


def _library_prefixes():
    import sysconfig
    paths = sysconfig.get_paths()
    return tuple(paths[k] + os.sep for k in ('stdlib', 'platstdlib', 'purelib', 'platlib') if k in paths)


_LIBRARY_PREFIXES = None
_library_files = {}  # filename -> bool


def is_library_file(filename):
    """A file of an installed library (flax, optax: site-packages or
    dist-packages) or of the standard library, as the C++ report side decides."""
    known = _library_files.get(filename)
    if known is None:
        global _LIBRARY_PREFIXES
        if _LIBRARY_PREFIXES is None:
            _LIBRARY_PREFIXES = _library_prefixes()
        from jax._src import traceback_util
        known = _library_files[filename] = (
            '/site-packages/' in filename or '/dist-packages/' in filename or filename.startswith(_LIBRARY_PREFIXES)
            or traceback_util.is_excluded(filename))
    return known


def user_frame(depth=1):
    """The innermost frame of the user's own code: not spmdsim's, and not a
    library's (a psum inside a flax layer is reported at the user's line that
    called the layer), else the innermost frame outside spmdsim."""
    f = sys._getframe(depth)
    while f is not None and is_own_file(f.f_code.co_filename):
        f = f.f_back
    first = f
    while f is not None and (is_own_file(f.f_code.co_filename) or is_library_file(f.f_code.co_filename)):
        f = f.f_back
    return f if f is not None else first


_positions = {}  # (code, instruction offset) -> (file, line, column): a loop asks again and again


def frame_location(f):
    """(file, line, column) of the instruction `f` runs, column 1-based, or None."""
    if f is None:
        return None
    key = (f.f_code, f.f_lasti)
    loc = _positions.get(key)
    if loc is None:
        loc = _positions[key] = _locate(f)
    return loc


def _locate(f):
    line, col = instruction_position(f.f_code, f.f_lasti)
    if line is None:
        line = f.f_lineno
    return (f.f_code.co_filename, line, col)


def _is_conditional_jump(code, lasti):
    import opcode
    op = opcode.opname[code.co_code[lasti]] if 0 <= lasti < len(code.co_code) else ''
    return 'JUMP' in op and 'IF' in op


def instruction_position(code, lasti):
    """(line, column) of the expression the instruction at byte offset `lasti`
    belongs to, column 1-based (0 when unknown). CPython places the test of an
    `if`/`while` on a bare value at the whole statement; the value tested is
    the instruction before the jump, so that is where the error points."""
    if lasti < 0:
        return None, 0
    index = lasti // 2
    if index > 0 and _is_conditional_jump(code, lasti):
        index -= 1
        while index > 0 and code.co_code[2 * index] == 0:  # CACHE entries hold no position of their own
            index -= 1
    for i, pos in enumerate(code.co_positions()):
        if i == index:
            if pos[0] is None:
                return None, 0
            return pos[0], (_char_column(code.co_filename, pos[0], pos[2]) if pos[2] is not None else 0)
    return None, 0


_forced = [None]  # the location `at` gives the equations recorded under it


class at:
    """with source_info.at(loc): operations record `loc` as their position
    instead of the calling frame's (autodiff gives the equations of a
    gradient the position of the expression they differentiate). at(None)
    restores the frame's position, e.g. around a user's rule."""

    def __init__(self, loc):
        self.loc = loc

    def __enter__(self):
        self.previous = _forced[0]
        _forced[0] = self.loc
        return self

    def __exit__(self, *exc):
        _forced[0] = self.previous
        return False


def current_location():
    forced = _forced[0]
    if forced is not None:
        return forced
    return frame_location(user_frame(2))


def _char_column(filename, line, byte_offset):
    """co_positions gives UTF-8 byte offsets; reports count characters (1-based)."""
    import linecache
    text = linecache.getline(filename, line)
    if not text or text.isascii():
        return byte_offset + 1
    return len(text.encode('utf-8')[:byte_offset].decode('utf-8', 'replace')) + 1


def describe(loc):
    if loc is None:
        return '<unknown>'
    return f'{loc[0]}:{loc[1]}:{loc[2]}' if loc[2] else f'{loc[0]}:{loc[1]}'
