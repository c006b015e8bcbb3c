#pragma once
// Runs a user's program on the embedded CPython, with spmdsim's `jax`
// package first on sys.path.

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace spmd {
class Runtime;
}

namespace spmd::python {

struct RunOptions {
  std::ostream* out = nullptr;  ///< sys.stdout (default std::cout)
  std::ostream* err = nullptr;  ///< sys.stderr (default std::cerr)
  /// The Runtime jax.devices() and pmap use, made on first use (required).
  /// Its argument is the device count the program asked for before that
  /// (XLA_FLAGS=--xla_force_host_platform_device_count=N, or
  /// jax.config.update('jax_num_cpu_devices', N)), if any.
  std::function<Runtime&(std::optional<int> program_devices)> runtime;
  /// True once the run was interrupted (SIGINT/SIGTERM), even before the
  /// Runtime exists; the program's Python code then stops (host_watch.h).
  std::function<bool()> interrupted;
  std::vector<std::string> argv;  ///< sys.argv[1:]
  /// Wall-clock seconds the program may run (0: no limit): past them its
  /// Python code stops with BudgetExceeded where it is (pmap runs have
  /// their own budget, RuntimeOptions::time_budget_s).
  double max_host_seconds = 0;
  /// Warnings about the program (parameter drift) become errors: the jax
  /// package reads it as `_spmd.strict`.
  bool strict = false;
};

/// How a program that raised nothing ended: the exit status `python3` would
/// give it (0, or `sys.exit(n)`'s n in 0..255, or 1 for `sys.exit("text")`).
struct ProgramExit {
  int status = 0;
  std::string call;  ///< "sys.exit(3)" when the program called sys.exit with a non-zero status
};

/// Runs `source` as the program at `path` (its `__main__`, its directory
/// first on sys.path), blocking until it ends as `python3` ends it: the
/// non-daemon threads joined, the atexit callbacks run, unclosed files
/// flushed (_spmd_program_exit.py). Throws spmd::Error: SyntaxError (kind
/// "SyntaxError" and its subclasses, file:line:column) when it does not
/// compile; the runtime's own error (DeadlockError, CollectiveMismatch, ...)
/// when one escapes the program, one of its threads or an atexit callback;
/// ProgramError whose kind is the Python exception's class name otherwise,
/// with the user's innermost frame as `where` and the traceback, without
/// spmdsim's own frames, in `details`. `sys.exit(n)` is no error: its status
/// is returned.
///
/// The interpreter starts on the first call and lives until the process ends
/// (numpy cannot be loaded twice); each run gets a fresh `__main__`, and the
/// modules an earlier run imported (jax included) are unloaded first.
ProgramExit run_program(const std::string& path, const std::string& source, const RunOptions& options);

/// Whether `module` can be imported by a program (spmdsim's jax, the user's
/// venv, Debian's packages), without importing it: `spmd test` skips a
/// scenario whose `requires=` names one that cannot.
bool module_available(const std::string& module);

}  // namespace spmd::python
