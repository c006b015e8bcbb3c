// The embedded interpreter: start-up, one run of a program, and its errors.

#include "python/embed/python_runner.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>

#include <unistd.h>

#include "python/bindings.h"
#include "python/host_watch.h"
#include "python/program_threads.h"
#include "python/python_errors.h"
#include "spmd/debug/debug_print.h"
#include "spmd/error.h"
#include "spmd/runtime/device.h"
#include "util/utf8.h"

namespace spmd::python {

namespace {

// The sink under sys.stdout / sys.stderr of a run (_spmd_streams.py builds
// the io classes over it): the streams the CLI gave us, so program output,
// device prints and reports interleave in one order.
struct StreamWriter {
  std::ostream* os;
  bool is_stdout;
  int fd;  // 1 or 2 where os is the process's own stdout / stderr, else -1
  void put(std::string_view bytes) {
    // A device's own print() (pmap under disable_jit) goes through the
    // ordered print queue, so its order does not depend on the schedule.
    if (is_stdout && in_device()) {
      program_print(std::string(bytes));
    } else {
      os->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
  }
  void write_bytes(const py::bytes& data) {
    char* bytes = nullptr;
    Py_ssize_t n = 0;
    if (PyBytes_AsStringAndSize(data.ptr(), &bytes, &n) != 0) throw py::error_already_set();
    put(std::string_view(bytes, static_cast<std::size_t>(n)));
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
      .def("write_bytes", &StreamWriter::write_bytes)
      .def("flush", &StreamWriter::flush)
      .def_readonly("fd", &StreamWriter::fd);
  py::module_ sys = py::module_::import("sys");
  sys.attr("path").attr("insert")(0, package_dir());
  // The user's venv (its numpy, flax, optax...) after spmdsim's jax and
  // before Debian's dist-packages: _spmd_virtualenv.py says why and how.
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  py::module_ virtualenv = py::module_::import("_spmd_virtualenv");
  py::object venv = virtualenv.attr("activate")(n > 0 ? py::str(std::string(exe, static_cast<std::size_t>(n))) : py::str(""));
  virtualenv.attr("set_child_python")(extension_dir(), venv);
  py::module_::import("numpy");
  // What a run may not unload: the standard library loaded so far and numpy.
  sys.attr("_spmd_baseline_modules") = py::set(sys.attr("modules").attr("keys")());
}

// The process's arguments as the kernel recorded them, as Python strings
// (undecodable bytes as surrogates, as CPython decodes its own argv).
py::list process_command_line() {
  py::list out;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(in, arg, '\0')) out.append(py::module_::import("os").attr("fsdecode")(py::bytes(arg)));
  return out;
}

// CPython reads a source file as UTF-8 unless a coding cookie (PEP 263) in
// its first two lines says otherwise, and refuses other bytes before it
// parses anything. compile() of the bytes would instead fail later with a
// misleading error ("invalid decimal literal" for a truncated character).
void check_utf8_source(const std::string& path, const std::string& source) {
  std::size_t line_end = source.find('\n');
  line_end = line_end == std::string::npos ? source.size() : source.find('\n', line_end + 1);
  const std::string head = source.substr(0, line_end == std::string::npos ? source.size() : line_end);
  if (head.find("coding:") != std::string::npos || head.find("coding=") != std::string::npos) return;
  std::uint32_t line = 1, column = 1;
  for (std::size_t i = 0; i < source.size();) {
    const std::size_t n = utf8_sequence_length(std::string_view(source).substr(i));
    if (n == 0) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "\\x%02x", static_cast<unsigned char>(source[i]));
      Report r = make_report("SyntaxError",
                             std::string("Non-UTF-8 code starting with '") + byte + "' in file " + path + " on line " +
                                 std::to_string(line) + ", but no encoding declared; see https://peps.python.org/pep-0263/ "
                                 "for details",
                             "save the file as UTF-8, or declare its encoding in its first line: "
                             "# -*- coding: latin-1 -*-");
      r.where = SourceLoc{intern_path(path), line, column};
      throw SyntaxError(std::move(r));
    }
    if (source[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += n;
  }
}

// Every run starts from the modules the interpreter had before the first one
// (spmdsim's jax and the program's own imports are fresh each time), except
// packages with a compiled extension (ml_dtypes, scipy, tensorstore: a venv's
// flax pulls them in): CPython cannot import one of those a second time, so
// they join the baseline. They import no jax, so they keep no earlier state.
void unload_earlier_run(const py::module_& sys) {
  py::set baseline = sys.attr("_spmd_baseline_modules");
  py::dict modules = sys.attr("modules");
  py::list names(modules.attr("keys")());
  std::set<std::string> compiled_packages;
  for (auto name : names) {
    if (baseline.contains(name)) continue;
    py::object module = modules.attr("get")(name);
    py::object file = py::getattr(module, "__file__", py::none());
    if (file.is_none()) continue;
    const std::string path = py::str(file);
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0) {
      const std::string full = py::str(name);
      compiled_packages.insert(full.substr(0, full.find('.')));
    }
  }
  for (auto name : names) {
    if (baseline.contains(name)) continue;
    const std::string full = py::str(name);
    if (compiled_packages.count(full.substr(0, full.find('.'))) > 0) {
      baseline.add(name);
      continue;
    }
    PyDict_DelItem(modules.ptr(), name.ptr());
  }
}

}  // namespace


bool module_available(const std::string& module) {
  start_interpreter();
  py::gil_scoped_acquire gil;
  try {
    return !py::module_::import("importlib.util").attr("find_spec")(module).is_none();
  } catch (const py::error_already_set&) {
    return false;  // spmdsim's explanation of a missing flax/optax is an exception here
  }
}

ProgramExit run_program(const std::string& path, const std::string& source, const RunOptions& options) {
  start_interpreter();
  set_runtime_factory(options.runtime);
  const ProgramText text{path, source};
  set_program_text(&text);
  struct Reset {
    ~Reset() {
      set_runtime_factory(nullptr);
      set_program_text(nullptr);
    }
  } reset;
  std::ostream* out_stream = options.out ? options.out : &std::cout;
  std::ostream* err_stream = options.err ? options.err : &std::cerr;
  StreamWriter out{out_stream, true, out_stream == &std::cout ? 1 : -1};
  StreamWriter err{err_stream, false, err_stream == &std::cerr ? 2 : -1};
  py::module_ sys = py::module_::import("sys");
  unload_earlier_run(sys);
  py::module_ stream_classes = py::module_::import("_spmd_streams");
  const py::tuple streams = stream_classes.attr("program_streams")(
      py::cast(&out, py::return_value_policy::reference), py::cast(&err, py::return_value_policy::reference));
  struct RestoreStreams {
    py::module_& sys;
    py::module_& stream_classes;
    const py::tuple& streams;
    ~RestoreStreams() {
      sys.attr("stdout") = sys.attr("__stdout__");
      sys.attr("stderr") = sys.attr("__stderr__");
      // A stream the program kept (a logging handler's) must not reach `out`
      // and `err` once they are gone.
      for (py::handle s : streams) stream_classes.attr("detach")(s);
    }
  } restore_streams{sys, stream_classes, streams};
  sys.attr("stdout") = streams[0];
  sys.attr("stderr") = streams[1];
  py::list argv;
  argv.append(path);
  for (const std::string& a : options.argv) argv.append(a);
  sys.attr("argv") = argv;
  // As python3's: the command line that started the process (spmd's own,
  // so a program that re-runs itself with sys.orig_argv runs under spmd).
  sys.attr("orig_argv") = process_command_line();
  py::module_::import("_spmd").attr("strict") = options.strict;
  py::module_ types = py::module_::import("types");
  py::object main = types.attr("ModuleType")("__main__");
  // Absolute, as python3 (3.9+) sets it for the script it runs; code objects
  // and reports keep the path as given.
  main.attr("__file__") = py::module_::import("os").attr("path").attr("abspath")(path);
  main.attr("__builtins__") = py::module_::import("builtins");
  sys.attr("modules")["__main__"] = main;
  // Tracebacks and reports quote the text that runs, even when the file on
  // disk changed since or never existed (a program given as text).
  py::str text_lines = py::bytes(source).attr("decode")("utf-8", "replace");
  py::module_::import("linecache").attr("cache")[py::str(path)] =
      py::make_tuple(source.size(), py::none(), text_lines.attr("splitlines")(true), path);
  // `import flax` before `import jax` gets the explaining error too.
  py::module_::import("jax._src.missing_modules").attr("install")();
  check_utf8_source(path, source);
  py::object code;
  try {
    code = py::module_::import("builtins").attr("compile")(py::bytes(source), path, "exec");
  } catch (py::error_already_set& e) {
    throw_spmd_error(e);
  }
  auto as_error = [](const auto& exception) {
    try {
      throw_spmd_error(exception);
    } catch (...) {
      return std::current_exception();
    }
  };
  py::module_ program_exit = py::module_::import("_spmd_program_exit");
  program_exit.attr("begin")(main, path);
  program_begins();
  ProgramExit ended;
  std::exception_ptr error;
  bool stopped = false;  // interrupted or out of time: no more of the program's code runs
  {
    // The budget and interrupts cover the whole program, its exit included.
    HostWatch watch(options.interrupted ? options.interrupted : [] { return false; }, options.max_host_seconds);
    try {
      py::module_::import("builtins").attr("exec")(code, main.attr("__dict__"));
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_SystemExit)) {
        py::object c = e.value().attr("code");
        ended.status = program_exit.attr("exit_status")(c).cast<int>();
        if (ended.status != 0) ended.call = "sys.exit(" + std::string(py::repr(c)) + ")";
      } else {
        stopped = e.matches(host_stop_type());
        error = as_error(e);
      }
    }
    // As CPython after the main module, whatever it ended with (a report of
    // its error is printed after this, as the run's last word).
    try {
      py::object late = program_exit.attr("finish")(main, !stopped);
      if (!late.is_none() && !error && ended.status == 0) error = as_error(late);
    } catch (py::error_already_set& e) {
      if (!error) error = as_error(e);
    }
  }
  // Its daemon threads end with it, before its Runtime does.
  program_ended(started_runtime(), /*end_threads=*/true);
  if (error) std::rethrow_exception(error);
  return ended;
}

}  // namespace spmd::python
