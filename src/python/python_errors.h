#pragma once
// Python exceptions as spmd errors, for the runner (an exception that escapes
// the program) and for eager devices (one raised by the program on a device).

#include <pybind11/pybind11.h>

#include <string>

namespace spmd::python {

namespace py = pybind11;

/// The program being run: its path and text give reports their source lines.
struct ProgramText {
  std::string path;
  std::string source;
};
/// Set while a program runs (nullptr afterwards); not owned.
void set_program_text(const ProgramText* text);

/// An exception's message as CPython's traceback prints it, never raising:
/// "<exception str() failed>" when its __str__ raises, a lone surrogate as
/// \udcff.
std::string exception_text(const py::handle& exc);

/// Throws the spmd::Error for a Python exception: the original C++ error
/// when it carries one (_spmd.SpmdError); SyntaxError for a syntax error,
/// located; otherwise ProgramError whose kind is the exception's class name,
/// located at the user's innermost frame, with the traceback without
/// spmdsim's own frames, and a hint where one fits (a missing import).
[[noreturn]] void throw_spmd_error(const py::error_already_set& e);
/// The same for an exception object (one a device's Python code caught and
/// handed over, see pmap_eager).
[[noreturn]] void throw_spmd_error(const py::handle& exception);

}  // namespace spmd::python
