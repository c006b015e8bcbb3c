// Tracing support: ProgramBuilder and Program for the jax package's tracers,
// and eager application of one primitive to concrete arrays.

#include <pybind11/stl.h>

#include <unistd.h>

#include <limits>

#include "python/bindings.h"
#include "spmd/error.h"
#include "spmd/program/executor.h"
#include "spmd/program/primitive.h"
#include "spmd/runtime/device.h"
#include "util/format_bytes.h"
#include "util/log.h"

namespace spmd::python {

namespace program = spmd::program;

SourceLoc to_loc(const py::handle& loc) {
  if (loc.is_none()) return {};
  auto t = loc.cast<py::tuple>();
  return SourceLoc{intern_path(t[0].cast<std::string>()), t[1].cast<std::uint32_t>(), t[2].cast<std::uint32_t>()};
}

namespace {

// pybind11 holds programs as shared_ptr<Program>; the C++ side shares them
// as immutable ProgramRefs.
using ProgramHolder = std::shared_ptr<program::Program>;
ProgramHolder held(program::ProgramRef p) { return std::const_pointer_cast<program::Program>(std::move(p)); }

// The machine's physical memory: no result outside pmap can be larger.
std::size_t host_memory_bytes() {
  static const std::size_t bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                                 : std::numeric_limits<std::size_t>::max();
  }();
  return bytes;
}

// What an operation outside pmap that the host could not allocate for
// reports: as a device's arena does, with the result's size.
OutOfMemoryError host_out_of_memory(const std::string& prim, const std::vector<program::Aval>& outs, SourceLoc where) {
  std::string results;
  std::size_t bytes = 0;
  for (const program::Aval& a : outs) {
    results += (results.empty() ? "" : ", ") + a.str();
    bytes += byte_count(a.shape, a.dtype);
  }
  Report r = make_report("OutOfMemoryError",
                         "host: out of memory computing " + prim + " (" + results + ", " + format_bytes(bytes) + ")",
                         "the host cannot hold the result (this machine has " + format_bytes(host_memory_bytes()) +
                             "); make the array smaller, or compute it sharded inside pmap");
  r.op = prim;
  r.where = where;
  return OutOfMemoryError(std::move(r));
}

// Python values -> equation parameters. bool before int: True is an int too.
program::Param to_param(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) return v.cast<std::int64_t>();
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<program::Program>(v)) return program::ProgramRef(v.cast<ProgramHolder>());
  if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
    auto seq = v.cast<py::sequence>();
    if (seq.size() > 0 && py::isinstance<py::str>(seq[0])) return v.cast<std::vector<std::string>>();
    if (seq.size() > 0 && py::isinstance<program::Program>(seq[0])) {
      std::vector<program::ProgramRef> out;
      for (auto p : seq) out.push_back(p.cast<ProgramHolder>());
      return out;
    }
    return v.cast<std::vector<std::int64_t>>();
  }
  throw InvalidArgument(make_report("TypeError", "unsupported primitive parameter of type " +
                                                     std::string(py::str(py::type::of(v).attr("__name__")))));
}

program::Params to_params(const py::dict& d) {
  program::Params p;
  for (auto [k, v] : d) p.set(k.cast<std::string>(), to_param(v));
  return p;
}

py::tuple aval_tuple(const program::Aval& a) {
  return py::make_tuple(py::tuple(py::cast(a.shape)), std::string(dtype_name(a.dtype)), a.weak_type);
}

// Equation parameters -> Python values, so the jax package can transform a
// program (autodiff walks its equations and binds them again).
py::object from_param(const program::Param& p) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, program::ProgramRef>) {
          return py::cast(held(v));
        } else if constexpr (std::is_same_v<T, std::vector<program::ProgramRef>>) {
          py::list out;
          for (const auto& p : v) out.append(py::cast(held(p)));
          return py::tuple(out);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<std::string>>) {
          return py::tuple(py::cast(v));
        } else {
          return py::cast(v);
        }
      },
      p);
}

py::object atom_object(const program::Atom& a) {
  return a.is_literal() ? py::cast(a.literal) : py::cast(a.var);
}

py::object loc_object(const SourceLoc& loc) {
  if (!loc.valid()) return py::none();
  return py::make_tuple(std::string(loc.file), loc.line, loc.column);
}

py::tuple equation_tuple(const program::Equation& eq) {
  py::list inputs;
  for (const auto& a : eq.inputs) inputs.append(atom_object(a));
  py::dict params;
  for (const auto& [name, value] : eq.params.all()) params[py::str(name)] = from_param(value);
  return py::make_tuple(eq.primitive->name, inputs, py::tuple(py::cast(eq.outputs)), params, loc_object(eq.loc));
}

program::Atom to_atom(const py::handle& h) {
  if (py::isinstance<Array>(h)) return program::Atom::of_literal(h.cast<Array>());
  return program::Atom::of(h.cast<program::Var>());
}

std::vector<program::Atom> to_atoms(const py::sequence& seq) {
  std::vector<program::Atom> out;
  out.reserve(seq.size());
  for (auto h : seq) out.push_back(to_atom(h));
  return out;
}

}  // namespace

void bind_programs(py::module_& m) {
  install_host_callbacks();
  install_signals_during_runs();
  py::class_<program::Program, ProgramHolder>(m, "Program", "a traced program (a jaxpr)")
      .def("jaxpr_text", [](const program::Program& p) { return program::to_jaxpr_text(p); })
      .def_property_readonly("constants", &program::jaxpr_constants,
                             "JAX's constvars' values: the non-scalar literals, each once (jaxpr_constants)")
      .def("constant_index", [](const program::Program&, const std::vector<Array>& constants,
                                const Array& a) { return program::jaxpr_constant_index(constants, a); })
      .def_property_readonly("in_avals", [](const program::Program& p) {
        py::list out;
        for (const auto& a : p.input_avals()) out.append(aval_tuple(a));
        return out;
      })
      .def_property_readonly("out_avals", [](const program::Program& p) {
        py::list out;
        for (const auto& a : p.output_avals()) out.append(aval_tuple(a));
        return out;
      })
      .def_property_readonly("num_equations", [](const program::Program& p) { return p.equations().size(); })
      .def_property_readonly("inputs", [](const program::Program& p) { return p.inputs(); })
      .def_property_readonly("outputs", [](const program::Program& p) {
        py::list out;
        for (const auto& a : p.outputs()) out.append(atom_object(a));
        return out;
      })
      .def_property_readonly("equations",
                             [](const program::Program& p) {
                               py::list out;
                               for (const auto& eq : p.equations()) out.append(equation_tuple(eq));
                               return out;
                             },
                             "(primitive, inputs, outputs, params, loc) per equation; an input is a variable "
                             "number or a literal Array")
      .def("var_aval", [](const program::Program& p, program::Var v) { return aval_tuple(p.aval(v)); });

  py::class_<program::ProgramBuilder>(m, "ProgramBuilder", "records one traced function")
      .def(py::init([](const std::vector<std::pair<std::string, int>>& axes) {
             program::AxisEnv env;
             for (const auto& [name, size] : axes) env.push_back({name, size});
             return program::ProgramBuilder(std::move(env));
           }),
           py::arg("axes") = std::vector<std::pair<std::string, int>>{})
      .def("add_input", [](program::ProgramBuilder& b, const std::vector<std::int64_t>& shape, const std::string& dtype,
                           bool weak) { return b.add_input({Shape(shape.begin(), shape.end()), dtype_from_name(dtype), weak}); })
      .def("add_equation",
           [](program::ProgramBuilder& b, const std::string& prim, const py::sequence& inputs, const py::dict& params,
              const py::handle& loc) {
             auto vars = b.add_equation(prim, to_atoms(inputs), to_params(params), to_loc(loc));
             py::list out;
             for (program::Var v : vars) out.append(py::make_tuple(v, aval_tuple(b.aval(v))));
             return out;
           })
      .def("input_dependencies", &program::ProgramBuilder::input_dependencies)
      .def("set_outputs", [](program::ProgramBuilder& b, const py::sequence& outs) { b.set_outputs(to_atoms(outs)); })
      .def("finish", [](program::ProgramBuilder& b) {
        auto p = b.finish();
        SPMD_LOG(kPython, debug, "traced a program: {} inputs, {} equations, {} outputs", p->inputs().size(),
                 p->equations().size(), p->outputs().size());
        return held(std::move(p));
      });

  m.def("apply_primitive",
        [](const std::string& prim, const std::vector<Array>& args, const py::dict& params, const py::handle& loc) {
          SourceLoc where = to_loc(loc);
          const program::Primitive& p = program::find_primitive(prim);
          std::vector<program::Aval> outs;
          try {
            // Eager evaluation checks like tracing does, so both paths give one error.
            std::vector<program::Aval> in;
            for (const Array& a : args) in.push_back(program::Aval::of(a));
            program::Params ps = to_params(params);
            // On a device (pmap under disable_jit) its bound axes are known.
            program::AxisEnv axes;
            if (in_device()) {
              set_current_location(where);
              for (const AxisBinding& b : current_device().axes) axes.push_back({b.name, b.size});
            }
            outs = p.abstract_eval(p, in, ps, axes);
            // Results larger than the machine's memory are refused before any
            // allocation is tried (under ASan a failed `new` aborts the process).
            if (!in_device()) {
              std::size_t bytes = 0;
              for (const program::Aval& a : outs) bytes += byte_count(a.shape, a.dtype);
              if (bytes > host_memory_bytes()) throw host_out_of_memory(prim, outs, where);
            }
            // On a device under disable_jit a collective may park this
            // fiber: never while holding the GIL (see pmap_eager).
            if (in_device()) {
              FiberSafeGilRelease release;
              return program::apply(p, args, ps, where);
            }
            // On the host: a program run here (an xla_pmap, a pjit) may
            // record host callbacks, made once it is over (with the GIL).
            return run_from_host([&] { return program::apply(p, args, ps, where); });
          } catch (Error& e) {
            if (!e.report().where.valid()) e.mutable_report().where = where;
            throw;
          } catch (const std::bad_alloc&) {
            throw host_out_of_memory(prim, outs, where);
          }
        },
        py::arg("primitive"), py::arg("args"), py::arg("params"), py::arg("loc") = py::none());

  m.def("execute", [](const ProgramHolder& p, const std::vector<Array>& args) {
    return then_host_callbacks([&] { return program::execute(*p, args); });
  });
  m.def("primitive_names", &program::primitive_names);
  m.def("unset_params", [](const std::string& name) { return program::find_primitive(name).unset_params; },
        "JAX's parameters of the primitive that spmdsim leaves None (see Primitive::unset_params)");
}

}  // namespace spmd::python
