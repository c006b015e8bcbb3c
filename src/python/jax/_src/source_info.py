"""Where the user's code is: the innermost Python frame outside spmdsim's own
package, with its PEP 657 position (line and column of the expression)."""

import os
import sys

# src/python: the jax package and anything else spmdsim ships.
OWN_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def is_own_file(filename):
    return filename.startswith(OWN_DIR + os.sep)


def user_frame(depth=1):
    f = sys._getframe(depth)
    while f is not None and is_own_file(f.f_code.co_filename):
        f = f.f_back
    return f


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
    line, col = f.f_lineno, 0
    if f.f_lasti >= 0:
        for i, pos in enumerate(f.f_code.co_positions()):
            if i == f.f_lasti // 2:
                if pos[0] is not None:
                    line = pos[0]
                if pos[2] is not None:
                    col = _char_column(f.f_code.co_filename, line, pos[2])
                break
    return (f.f_code.co_filename, line, col)


def current_location():
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
