// Python exceptions as spmd errors: what the CLI reports when one escapes
// the program, or is raised by the program on a device.

#include "python/python_errors.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "python/bindings.h"
#include "python/host_watch.h"
#include "spmd/error.h"

namespace spmd::python {

namespace {

const ProgramText* g_program = nullptr;

// A Python str as UTF-8 for a report, never an exception: a lone surrogate
// (os.fsdecode of a name that is not UTF-8) comes out as \udcff, as CPython
// writes it to stderr, so the text and any JSON holding it stay valid.
std::string utf8_text(PyObject* text) {
  if (text == nullptr || !PyUnicode_Check(text)) return {};
  Py_ssize_t size = 0;
  if (const char* utf8 = PyUnicode_AsUTF8AndSize(text, &size)) return std::string(utf8, static_cast<std::size_t>(size));
  PyErr_Clear();
  py::object bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace"));
  if (!bytes) {
    PyErr_Clear();
    return {};
  }
  return std::string(PyBytes_AS_STRING(bytes.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(bytes.ptr())));
}

// str(obj) for a report; `failed` when its __str__ raises (CPython prints
// "<exception str() failed>" for an exception whose __str__ does).
std::string str_text(const py::handle& obj, const char* failed = "<str() failed>") {
  py::object text = py::reinterpret_steal<py::object>(PyObject_Str(obj.ptr()));
  if (!text) {
    PyErr_Clear();
    return failed;
  }
  return utf8_text(text.ptr());
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

[[noreturn]] void throw_syntax_error(const py::handle& v, const std::string& path, const std::string& source) {
  std::string kind = str_text(py::type::of(v).attr("__name__"));
  std::string msg = str_text(v.attr("msg"));
  SourceLoc where;
  py::object file = v.attr("filename");
  where.file = intern_path(file.is_none() ? path : str_text(file));
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
// The user's innermost frame (spmdsim's own frames skipped): where a report
// points, with the traceback of the user's frames.
struct UserFrames {
  SourceLoc where;
  std::string source_line;
  std::vector<std::string> traceback;
};

// Calls f(*args) through the C API, without pybind11's call path: this also
// runs on device fibers (pmap under disable_jit), where pybind11's debug
// checks of the GIL state and its error objects (which take the GIL through
// the PyGILState API) do not work. A failure gives None.
py::object call(const py::handle& f, std::initializer_list<py::handle> args) {
  std::vector<PyObject*> argv;
  for (const py::handle& a : args) argv.push_back(a.ptr());
  PyObject* r = PyObject_Vectorcall(f.ptr(), argv.data(), argv.size(), nullptr);
  if (r == nullptr) {
    PyErr_Clear();
    return py::none();
  }
  return py::reinterpret_steal<py::object>(r);
}

// Whether `file` belongs to Python's standard library or an installed
// package (numpy...), not to the user's program.
bool is_library_file(const std::string& file) {
  // The C API only: this may first run on a device fiber (pmap under
  // disable_jit), where pybind11's call path checks a GIL state it cannot see.
  static const std::vector<std::string> prefixes = [] {
    std::vector<std::string> out;
    py::object paths = call(py::module_::import("sysconfig").attr("get_paths"), {});
    if (paths.is_none() || !PyDict_Check(paths.ptr())) return out;
    for (const char* key : {"stdlib", "platstdlib", "purelib", "platlib"}) {
      PyObject* p = PyDict_GetItemString(paths.ptr(), key);  // borrowed
      if (p != nullptr && PyUnicode_Check(p)) {
        if (const char* text = PyUnicode_AsUTF8(p)) out.push_back(std::string(text) + "/");
      }
    }
    return out;
  }();
  if (file.find("/dist-packages/") != std::string::npos || file.find("/site-packages/") != std::string::npos) return true;
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return file.rfind(p, 0) == 0; });
}

UserFrames user_frames(const py::handle& trace, const std::string& path, const std::string& source) {
  UserFrames u;
  py::module_ tb = py::module_::import("traceback");
  py::object extracted = call(tb.attr("extract_tb"), {trace});
  if (extracted.is_none()) return u;
  py::list frames(extracted);
  const std::string ours = package_dir();
  py::list kept;
  // The frame a report points at: the innermost of the user's own code,
  // else (an error inside a library called from nowhere of theirs) the
  // innermost kept. Library frames stay in the traceback, as CPython shows them.
  py::object last = py::none();
  py::object last_tb = py::none();  // its traceback entry
  bool last_is_users = false;
  py::object entry = py::reinterpret_borrow<py::object>(trace);
  for (auto f : frames) {
    std::string file = str_text(f.attr("filename"));
    if (file.rfind(ours, 0) != 0) {
      kept.append(f);
      const bool users = !is_library_file(file);
      if (users || !last_is_users) {
        last = py::reinterpret_borrow<py::object>(f);
        last_tb = entry;
        last_is_users = users;
      }
    }
    if (!entry.is_none()) entry = entry.attr("tb_next");
  }
  if (py::len(kept) == 0) return u;
  u.where.file = intern_path(str_text(last.attr("filename")));
  u.where.line = last.attr("lineno").cast<std::uint32_t>();
  py::object col = last.attr("colno");
  py::object text = last.attr("line");
  const bool in_program = !path.empty() && u.where.file == intern_path(path);
  std::string full = in_program ? line_of(source, u.where.line) : (text.is_none() ? "" : str_text(text));
  if (!col.is_none()) u.where.column = column_of(full, col.cast<long>());
  // An `if` on a bare value: CPython points at the whole statement; the
  // position of the value tested is what the user needs.
  if (!last_tb.is_none()) {
    py::object pos = call(py::module_::import("jax._src.source_info").attr("instruction_position"),
                          {last_tb.attr("tb_frame").attr("f_code"), last_tb.attr("tb_lasti")});
    if (!pos.is_none() && !pos[py::int_(0)].is_none() && pos[py::int_(0)].cast<std::uint32_t>() == u.where.line) {
      u.where.column = pos[py::int_(1)].cast<std::uint32_t>();
    }
  }
  if (in_program) u.source_line = full;
  u.traceback.push_back("Traceback (most recent call last):");
  py::object summary = call(tb.attr("StackSummary").attr("from_list"), {kept});
  py::object formatted = summary.is_none() ? py::list() : call(summary.attr("format"), {});
  py::list lines = formatted.is_none() ? py::list() : py::list(formatted);
  for (auto l : lines) {
    std::string s = str_text(l);
    while (!s.empty() && s.back() == '\n') s.pop_back();
    std::size_t pos = 0;
    while (pos <= s.size()) {
      std::size_t nl = s.find('\n', pos);
      u.traceback.push_back(s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
  }
  return u;
}

// "did you mean 'results'?" for a misspelt name or attribute: the closest
// name the failing frame (or the object) has, as CPython's own display
// suggests (its traceback module does not, in 3.11).
std::string spelling_hint(const py::handle& exc, const py::handle& trace) {
  py::object name = py::getattr(exc, "name", py::none());
  if (name.is_none()) return {};
  py::list candidates;
  if (PyErr_GivenExceptionMatches(exc.ptr(), PyExc_ImportError)) {
    // "cannot import name 'pmapp' from 'jax' (...)": the module's names.
    std::string message = exception_text(exc);
    const std::string lead = "cannot import name '";
    if (message.rfind(lead, 0) != 0 || py::module_::import("sys").attr("modules").attr("get")(name).is_none()) return {};
    std::string missing = message.substr(lead.size(), message.find('\'', lead.size()) - lead.size());
    candidates = py::list(py::module_::import("builtins").attr("dir")(py::module_::import("sys").attr("modules")[name]));
    name = py::str(missing);
  } else if (PyErr_GivenExceptionMatches(exc.ptr(), PyExc_AttributeError)) {
    py::object obj = py::getattr(exc, "obj", py::none());
    if (obj.is_none()) return {};
    py::object names = call(py::module_::import("builtins").attr("dir"), {obj});
    if (names.is_none()) return {};
    candidates = py::list(names);
  } else {
    py::object entry = py::reinterpret_borrow<py::object>(trace);
    if (entry.is_none()) return {};
    while (!entry.attr("tb_next").is_none()) entry = entry.attr("tb_next");
    py::object frame = entry.attr("tb_frame");
    for (const char* scope : {"f_locals", "f_globals"}) {
      for (auto k : py::dict(frame.attr(scope))) candidates.append(k.first);
    }
    for (auto k : py::dict(py::module_::import("builtins").attr("__dict__"))) candidates.append(k.first);
  }
  py::object close = py::module_::import("difflib").attr("get_close_matches")(name, candidates, 1, 0.75);
  if (py::len(close) == 0) return {};
  return "did you mean '" + py::str(close[py::int_(0)]).cast<std::string>() + "'?";
}

// A Python exception as a report: its class name, message, the user's
// innermost frame, and the traceback without spmdsim's frames (as JAX
// filters its own). A runtime error that crossed Python (_spmd.SpmdError)
// is rethrown as itself, located at the user's frame when it has no place.
[[noreturn]] void throw_python_error(const py::handle& exc, const py::handle& trace, const std::string& path,
                                    const std::string& source) {
  std::exception_ptr original = original_error(exc);
  if (!original && PyErr_GivenExceptionMatches(exc.ptr(), host_stop_type())) original = host_stop_error();
  if (original) {
    try {
      std::rethrow_exception(original);
    } catch (Error& err) {
      Report& r = err.mutable_report();
      // Where the Python side says it stood (an interrupt while the program's
      // exit joined a thread: that thread's line), and a line saying why.
      py::object where = py::getattr(exc, "_spmd_where", py::none());
      if (!r.where.valid() && !where.is_none()) {
        r.where = to_loc(where);
        if (!path.empty() && r.where.file == intern_path(path)) r.source_line = line_of(source, r.where.line);
      }
      py::object note = py::getattr(exc, "_spmd_note", py::none());
      if (!note.is_none()) {
        r.details.push_back(str_text(note));
        exc.attr("_spmd_note") = py::none();  // said once
      }
      if (!r.where.valid()) {
        UserFrames u = user_frames(trace, path, source);
        r.where = u.where;
        r.source_line = u.source_line;
      } else if (r.source_line.empty() && !path.empty() && r.where.file == intern_path(path)) {
        r.source_line = line_of(source, r.where.line);
      }
      throw;
    }
  }
  if (PyErr_GivenExceptionMatches(exc.ptr(), PyExc_SyntaxError)) throw_syntax_error(exc, path, source);
  std::string kind = str_text(py::type::of(exc).attr("__name__"));
  std::string message = exception_text(exc);
  Report r = make_report(kind, message);
  py::object hint = py::getattr(exc, "_spmd_hint", py::none());
  if (!hint.is_none()) r.hint = str_text(hint);
  if (PyErr_GivenExceptionMatches(exc.ptr(), PyExc_NameError) && r.hint.empty()) {
    r.hint = import_hint(py::getattr(exc, "name", py::none()));
  }
  if (r.hint.empty() && (PyErr_GivenExceptionMatches(exc.ptr(), PyExc_NameError) ||
                         PyErr_GivenExceptionMatches(exc.ptr(), PyExc_AttributeError) ||
                         PyErr_GivenExceptionMatches(exc.ptr(), PyExc_ImportError))) {
    try {
      r.hint = spelling_hint(exc, trace);
    } catch (const py::error_already_set&) {
      // No suggestion is better than a failed report.
    }
  }
  UserFrames u = user_frames(trace, path, source);
  r.where = u.where;
  r.source_line = u.source_line;
  // An error about another line than the one running (parameter drift names
  // the update that used an un-averaged gradient) says where it points.
  py::object where = py::getattr(exc, "_spmd_where", py::none());
  if (!where.is_none()) {
    r.where = to_loc(where);
    r.source_line = !path.empty() && r.where.file == intern_path(path) ? line_of(source, r.where.line) : std::string();
  }
  // A bare `assert x > 5` says nothing; the statement says what failed.
  if (kind == "AssertionError" && r.message.empty() && !u.source_line.empty()) {
    std::string stmt = u.source_line;
    stmt.erase(0, stmt.find_first_not_of(" \t"));
    r.message = stmt;
  }
  if (!u.traceback.empty()) {
    r.details = std::move(u.traceback);
    r.details.push_back(kind + ": " + message);
  }
  throw ProgramError(std::move(r));
}

}  // namespace

std::string exception_text(const py::handle& exc) { return str_text(exc, "<exception str() failed>"); }

void set_program_text(const ProgramText* text) { g_program = text; }

void throw_spmd_error(const py::handle& exception) {
  static const std::string none;
  py::object trace = exception.attr("__traceback__");
  throw_python_error(exception, trace, g_program ? g_program->path : none, g_program ? g_program->source : none);
}

void throw_spmd_error(const py::error_already_set& e) {
  static const std::string none;
  // pybind11 keeps the traceback beside the exception, not always on it.
  py::object trace = e.trace() ? py::reinterpret_borrow<py::object>(e.trace()) : e.value().attr("__traceback__");
  throw_python_error(e.value(), trace, g_program ? g_program->path : none, g_program ? g_program->source : none);
}

}  // namespace spmd::python
