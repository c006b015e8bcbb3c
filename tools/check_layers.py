#!/usr/bin/env python3
"""The layering of src/ as a DAG, checked (ctest "layering").

Every directory of src/ sits on one level of LAYERS, lowest first. A file may
include headers of its own directory and of directories on lower levels,
never of its own level or above. DEBT lists the upward includes that remain,
each with why: they are allowed, printed, and must go; one that no longer
exists fails the check until it is removed from the list, so the list only
shrinks. Exit 0 when the includes fit, 1 with each offending include
(file:line) otherwise.

    tools/check_layers.py [SRC_DIR]      # default: src next to this script
    tools/check_layers.py --self-test    # the check fails on an upward include and on a cycle
"""
import os
import re
import sys

# Lowest first; directories on one level do not include each other.
LAYERS = [
    ["util"],                                  # strings, JSON, files, logging: no spmd concept
    ["core"],                                  # arrays, dtypes, arenas, placement
    ["rendezvous"],                            # collective signatures, communicators, axis names (data)
    ["dataplane", "backend/cuda/kernels"],     # how each collective's data moves; CUDA kernels
    ["backend"],                               # the backend interface: spawn devices, park/unpark, move data
    ["dist"],                                  # several processes: the store, cross-process checks
    ["backend/sim", "backend/cuda"],           # the backends
    ["runtime"],                               # Run, devices' lifecycle, the rendezvous, pmap, reports
    ["collectives", "program", "trace", "diagnose"],  # public collectives, traced programs, traces, spmd diagnose
    ["python"],                                # the front end's bindings
    ["python/embed", "python/extension"],      # embedded CPython; the _spmd extension module
    ["cli"],                                   # the spmd command
]

# Upward includes still there: (from directory, to directory) -> why. Empty
# since the CUDA backend reaches the run through LaunchedRun (backend.h); an
# entry here is debt to pay, never a way around the check.
DEBT = {}

INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')


def level_of():
    levels = {}
    for n, dirs in enumerate(LAYERS):
        for d in dirs:
            levels[d] = n
    return levels


def self_test():
    """A tree with one include of each kind: the check must flag exactly the upward ones."""
    import contextlib
    import io
    import tempfile
    with tempfile.TemporaryDirectory() as src:
        def write(path, text):
            os.makedirs(os.path.join(src, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(src, path), "w") as f:
                f.write(text)
        write("core/array.cc", '#include "util/json.h"\n#include "core/shape.h"\n')    # down, own
        write("util/json.cc", '#include "core/array.h"\n')                            # up: core is above util
        write("dataplane/plan.cc", '#include "backend/cuda/kernels/sum.h"\n')         # same level
        write("backend/cuda/x.cc", '#include "runtime/run.h"\n')                      # listed as debt below
        write("oddity/y.cc", "")                                                        # on no level
        out = io.StringIO()
        DEBT[("backend/cuda", "runtime")] = "the self-test's debt"
        try:
            with contextlib.redirect_stdout(out):
                code = check(src)
        finally:
            del DEBT[("backend/cuda", "runtime")]
        text = out.getvalue()
        expected = ["src/util/json.cc:1: util includes core/array.h, from a higher level (core)",
                    "src/dataplane/plan.cc:1: dataplane includes backend/cuda/kernels/sum.h, from its own level",
                    "directory 'oddity' is on no level", "known upward include backend/cuda -> runtime",
                    "check_layers: 3 problem(s)"]
        missing = [e for e in expected if e not in text]
        if code != 1 or missing or "core/array.cc" in text:
            print(text)
            print(f"check_layers --self-test: FAILED (exit {code}; missing {missing})")
            return 1
    print("check_layers --self-test: an upward include, a same-level include and an unplaced directory are caught")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    return check(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")))


def check(src):
    levels = level_of()
    problems, debt_seen = [], set()
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".h", ".cc", ".cu", ".cuh")):
                continue
            path = os.path.join(root, name)
            here = os.path.relpath(root, src)
            if here not in levels:
                problems.append(f"{os.path.relpath(path, src)}: directory '{here}' is on no level of LAYERS in "
                                f"tools/check_layers.py: place it in the picture (and the README's)")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for line_no, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1).startswith("spmd/"):
                        continue
                    target = os.path.dirname(m.group(1))
                    if target in ("", here) or target not in levels:
                        continue  # its own directory, or a generated/system header
                    if levels[target] < levels[here]:
                        continue
                    if (here, target) in DEBT:
                        debt_seen.add((here, target))
                        continue
                    where = "its own level" if levels[target] == levels[here] else "a higher level"
                    problems.append(f"src/{os.path.relpath(path, src)}:{line_no}: {here} includes {m.group(1)}, "
                                    f"from {where} ({target}); move the code down, or pass what it needs down "
                                    f"through the lower layer's interface")
    for edge, why in sorted(DEBT.items()):
        if edge in debt_seen:
            print(f"check_layers: known upward include {edge[0]} -> {edge[1]}: {why}")
        else:
            problems.append(f"DEBT lists {edge[0]} -> {edge[1]}, which no file includes any more: remove it from "
                            f"tools/check_layers.py")
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s)")
        return 1
    print(f"check_layers: the includes of {src} fit the {len(LAYERS)} levels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
