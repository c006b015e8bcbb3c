#pragma once
// Runs a user's program on the embedded CPython, with spmdsim's `jax`
// package first on sys.path.

#include <iosfwd>
#include <string>
#include <vector>

namespace spmd {
class Runtime;
}

namespace spmd::python {

struct RunOptions {
  std::ostream* out = nullptr;  ///< sys.stdout (default std::cout)
  std::ostream* err = nullptr;  ///< sys.stderr (default std::cerr)
  Runtime* runtime = nullptr;   ///< what jax.devices() and pmap use (required)
  std::vector<std::string> argv;  ///< sys.argv[1:]
  /// Wall-clock seconds the program may run (0: no limit): past them its
  /// Python code stops with BudgetExceeded where it is (pmap runs have
  /// their own budget, RuntimeOptions::time_budget_s).
  double max_host_seconds = 0;
};

/// Runs `source` as the program at `path` (its `__main__`), blocking until it
/// ends. Throws spmd::Error: SyntaxError (kind "SyntaxError" and its
/// subclasses, file:line:column) when it does not compile; the runtime's own
/// error (DeadlockError, CollectiveMismatch, ...) when one escapes the
/// program; ProgramError whose kind is the Python exception's class name
/// otherwise, with the user's innermost frame as `where` and the traceback,
/// without spmdsim's own frames, in `details`. `sys.exit(0)` ends it normally.
///
/// The interpreter starts on the first call and lives until the process ends
/// (numpy cannot be loaded twice); each run gets a fresh `__main__`, and the
/// modules an earlier run imported (jax included) are unloaded first.
void run_program(const std::string& path, const std::string& source, const RunOptions& options);

/// Where the jax package lives: $SPMD_PYTHON_DIR, else the source tree's
/// src/python of this build.
std::string package_dir();

}  // namespace spmd::python
