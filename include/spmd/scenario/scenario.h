#pragma once
/// \file
/// The scenario language: JAX-style Python programs run on simulated devices.
///
///   auto m = spmd::scenario::parse_file("scenarios/psum.py");
///   spmd::Runtime rt({.devices = 4});
///   spmd::scenario::run_module(*m, {.runtime = &rt});
///
/// A scenario is a Python file written against JAX (`import jax`,
/// `import jax.numpy as jnp`, `from jax import lax, pmap`). The interpreter
/// covers a Python subset (functions, closures, control flow, containers,
/// f-strings, exceptions) and binds jax.pmap, jax.lax collectives and control
/// flow, jax.numpy, jax.random and jax.debug to the spmd runtime.
///
/// Errors in the program are thrown as spmd::ProgramError whose Report has a
/// Python exception name as `kind` ("NameError", "TypeError",
/// "TracerBoolConversionError", ...), a Python-like message, `where`
/// (file:line:column), `source_line`, a hint where one helps, and the
/// Python-style traceback in `details`. Syntax errors are spmd::SyntaxError.
/// Errors of the runtime and of array ops (ShapeError, AxisNameError,
/// DeadlockError, CollectiveMismatch, ...) keep their C++ type and kind; the
/// interpreter fills in `where` / `source_line` when they have none.

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace spmd {
class Runtime;
}

namespace spmd::scenario {

/// A parsed program; immutable, may be run several times.
class Module;

/// Reads and parses `path`. Throws SyntaxError (kind "SyntaxError",
/// "IndentationError" or "TabError"), ProgramError kind "NotImplementedError"
/// for valid Python outside the supported subset, and InvalidArgument
/// (kind "FileNotFoundError") when the file cannot be read.
std::shared_ptr<const Module> parse_file(const std::string& path);

/// Parses `source`; `path` names it in error reports.
std::shared_ptr<const Module> parse_source(std::string_view source, const std::string& path);

struct InterpreterOptions {
  std::ostream* out = nullptr;  ///< print() output (default std::cout)
  std::ostream* err = nullptr;  ///< warnings (default std::cerr)
  /// pmap runs here (required); jax.device_count() is runtime->device_count().
  Runtime* runtime = nullptr;
  /// Steps the module's own code may take on the host (outside pmap), counted
  /// like a device's steps (RuntimeOptions::step_budget); 0 = unlimited.
  /// Exceeding it throws BudgetExceeded located at the host line.
  std::uint64_t max_host_steps = 0;
  /// Wall-clock seconds the module's host code may run; 0 = unlimited.
  double max_host_seconds = 0;
};

/// Runs the module's top-level code to completion. Blocks; throws the first
/// error (spmd::Error subclasses, see above). The module must outlive the call.
/// Once `options.runtime` is interrupted (Runtime::interrupt), the host code
/// stops at its next statement with that Interrupted error.
void run_module(const Module& m, const InterpreterOptions& options);

}  // namespace spmd::scenario
