// The embedded interpreter: start-up, one run of a program, and its errors.

#include "python/python_runner.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <iostream>

#include "python/bindings.h"
#include "spmd/config.h"
#include "spmd/error.h"

namespace spmd::python {

namespace {

// sys.stdout / sys.stderr of a run: the streams the CLI gave us, so program
// output, device prints and reports interleave in one order.
struct StreamWriter {
  std::ostream* os;
  std::size_t write(const std::string& s) {
    *os << s;
    return s.size();
  }
  void flush() { os->flush(); }
};

void start_interpreter() {
  link_embedded_module();
  static bool started = false;
  if (started) return;
  started = true;
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // the CLI owns SIGINT/SIGTERM
  config.parse_argv = 0;
  py::initialize_interpreter(&config, 0, nullptr, false);
  py::class_<StreamWriter>(py::module_::import("_spmd"), "StreamWriter")
      .def("write", &StreamWriter::write)
      .def("flush", &StreamWriter::flush)
      .def("isatty", [](const StreamWriter&) { return false; })
      .def_property_readonly("encoding", [](const StreamWriter&) { return "utf-8"; });
  py::module_ sys = py::module_::import("sys");
  sys.attr("path").attr("insert")(0, package_dir());
  py::module_::import("numpy");
  // What a run may not unload: the standard library loaded so far and numpy.
  sys.attr("_spmd_baseline_modules") = py::set(sys.attr("modules").attr("keys")());
}

void unload_earlier_run(const py::module_& sys) {
  py::set baseline = sys.attr("_spmd_baseline_modules");
  py::dict modules = sys.attr("modules");
  py::list names(modules.attr("keys")());
  for (auto name : names) {
    if (!baseline.contains(name)) PyDict_DelItem(modules.ptr(), name.ptr());
  }
}

// Column of a 0-based UTF-8 byte offset within `line`, 1-based in characters.
std::uint32_t column_of(const std::string& line, long byte_offset) {
  std::uint32_t col = 1;
  for (long i = 0; i < byte_offset && i < static_cast<long>(line.size()); ++i) {
    if ((static_cast<unsigned char>(line[static_cast<std::size_t>(i)]) & 0xC0) != 0x80) ++col;
  }
  return col;
}

std::string line_of(const std::string& text, std::uint32_t n) {
  std::size_t start = 0;
  for (std::uint32_t i = 1; i < n; ++i) {
    start = text.find('\n', start);
    if (start == std::string::npos) return {};
    ++start;
  }
  std::size_t end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

[[noreturn]] void throw_syntax_error(const py::error_already_set& e, const std::string& path, const std::string& source) {
  py::object v = e.value();
  std::string kind = py::str(e.type().attr("__name__"));
  std::string msg = py::str(v.attr("msg"));
  SourceLoc where;
  py::object file = v.attr("filename");
  where.file = intern_path(file.is_none() ? path : file.cast<std::string>());
  py::object lineno = v.attr("lineno");
  py::object offset = v.attr("offset");
  where.line = lineno.is_none() ? 0 : lineno.cast<std::uint32_t>();
  where.column = offset.is_none() ? 0 : offset.cast<std::uint32_t>();
  Report r = make_report(kind, msg);
  r.where = where;
  if (where.file == intern_path(path)) r.source_line = line_of(source, where.line);
  throw SyntaxError(std::move(r));
}

// The import a JAX program usually has for a name it uses undefined.
std::string import_hint(const py::object& name) {
  if (name.is_none()) return {};
  static const std::pair<const char*, const char*> known[] = {
      {"jax", "import jax"},
      {"jnp", "import jax.numpy as jnp"},
      {"lax", "from jax import lax"},
      {"np", "import numpy as np"},
      {"pmap", "from jax import pmap"},
      {"jit", "from jax import jit"},
      {"partial", "from functools import partial"},
  };
  std::string n = py::str(name);
  for (const auto& [k, stmt] : known) {
    if (n == k) return std::string("add `") + stmt + "` at the top of the program";
  }
  return {};
}

// A Python exception that escaped the program, as a report: its class name,
// message, the user's innermost frame, and the traceback without spmdsim's
// frames (as JAX filters its own).
[[noreturn]] void throw_python_error(const py::error_already_set& e, const std::string& path, const std::string& source) {
  if (std::exception_ptr original = original_error(e.value())) std::rethrow_exception(original);
  if (e.matches(PyExc_SyntaxError)) throw_syntax_error(e, path, source);
  std::string kind = py::str(e.type().attr("__name__"));
  std::string message = py::str(e.value());
  Report r = make_report(kind, message);
  py::object hint = py::getattr(e.value(), "_spmd_hint", py::none());
  if (!hint.is_none()) r.hint = py::str(hint);
  if (e.matches(PyExc_NameError) && r.hint.empty()) r.hint = import_hint(py::getattr(e.value(), "name", py::none()));

  py::module_ tb = py::module_::import("traceback");
  py::list frames = tb.attr("extract_tb")(e.trace());
  const std::string ours = package_dir();
  py::list kept;
  for (auto f : frames) {
    std::string file = f.attr("filename").cast<std::string>();
    if (file.rfind(ours, 0) != 0) kept.append(f);
  }
  if (py::len(kept) > 0) {
    py::object last = kept[py::len(kept) - 1];
    r.where.file = intern_path(last.attr("filename").cast<std::string>());
    r.where.line = last.attr("lineno").cast<std::uint32_t>();
    py::object col = last.attr("colno");
    std::string text = last.attr("line").cast<std::string>();
    std::string full = r.where.file == intern_path(path) ? line_of(source, r.where.line) : text;
    if (!col.is_none()) r.where.column = column_of(full, col.cast<long>());
    if (r.where.file == intern_path(path)) r.source_line = full;
    r.details.push_back("Traceback (most recent call last):");
    py::list lines = tb.attr("StackSummary").attr("from_list")(kept).attr("format")();
    for (auto l : lines) {
      std::string s = py::str(l);
      while (!s.empty() && s.back() == '\n') s.pop_back();
      std::size_t pos = 0;
      while (pos <= s.size()) {
        std::size_t nl = s.find('\n', pos);
        r.details.push_back(s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
        if (nl == std::string::npos) break;
        pos = nl + 1;
      }
    }
    r.details.push_back(kind + ": " + message);
  }
  throw ProgramError(std::move(r));
}

}  // namespace

std::string package_dir() {
  if (const char* env = std::getenv("SPMD_PYTHON_DIR"); env != nullptr && *env != '\0') return env;
  return SPMD_PYTHON_SOURCE_DIR;
}

void run_program(const std::string& path, const std::string& source, const RunOptions& options) {
  start_interpreter();
  set_runtime(options.runtime);
  struct Reset {
    ~Reset() { set_runtime(nullptr); }
  } reset;
  StreamWriter out{options.out ? options.out : &std::cout};
  StreamWriter err{options.err ? options.err : &std::cerr};
  py::module_ sys = py::module_::import("sys");
  unload_earlier_run(sys);
  try {
    sys.attr("stdout") = py::cast(&out, py::return_value_policy::reference);
    sys.attr("stderr") = py::cast(&err, py::return_value_policy::reference);
    py::list argv;
    argv.append(path);
    for (const std::string& a : options.argv) argv.append(a);
    sys.attr("argv") = argv;
    py::module_ types = py::module_::import("types");
    py::object main = types.attr("ModuleType")("__main__");
    main.attr("__file__") = path;
    main.attr("__builtins__") = py::module_::import("builtins");
    sys.attr("modules")["__main__"] = main;
    py::object code;
    try {
      code = py::module_::import("builtins").attr("compile")(py::bytes(source), path, "exec");
    } catch (py::error_already_set& e) {
      throw_syntax_error(e, path, source);
    }
    try {
      py::module_::import("builtins").attr("exec")(code, main.attr("__dict__"));
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_SystemExit)) {
        py::object c = e.value().attr("code");
        if (c.is_none() || (py::isinstance<py::int_>(c) && c.cast<long>() == 0)) return;
        throw ProgramError(make_report("SystemExit", "the program called sys.exit(" + std::string(py::repr(c)) + ")"));
      }
      throw_python_error(e, path, source);
    }
  } catch (...) {
    sys.attr("stdout") = sys.attr("__stdout__");
    sys.attr("stderr") = sys.attr("__stderr__");
    throw;
  }
  sys.attr("stdout").attr("flush")();
  sys.attr("stdout") = sys.attr("__stdout__");
  sys.attr("stderr") = sys.attr("__stderr__");
}

}  // namespace spmd::python
