// _spmd.Array: the concrete array behind jax.Array, and its numpy interop.

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "python/bindings.h"
#include "spmd/core/format.h"
#include "spmd/core/reduction.h"
#include "spmd/error.h"

namespace spmd::python {

namespace {

// numpy has no bfloat16 without ml_dtypes: such arrays leave as float32.
const char* numpy_name(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "float32";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
  }
  return "float32";
}

// C-order strides from our own element size: pybind11 2.10 reads the item
// size out of numpy's descriptor struct, whose layout numpy 2 changed, so
// letting it compute strides gives a venv's numpy 2 arrays of stride 0.
std::vector<py::ssize_t> c_strides(const Shape& shape, std::size_t item) {
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t step = static_cast<py::ssize_t>(item);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= static_cast<py::ssize_t>(shape[i]);
  }
  return strides;
}

py::array to_numpy(const Array& a) {
  Array host = a.to_host();
  std::vector<py::ssize_t> shape(host.shape().begin(), host.shape().end());
  if (host.dtype() == DType::kBFloat16) {
    std::vector<double> v = host.to_doubles();
    py::array_t<float> out(shape, c_strides(host.shape(), sizeof(float)));
    float* dst = out.mutable_data();
    for (std::size_t i = 0; i < v.size(); ++i) dst[i] = static_cast<float>(v[i]);
    return out;
  }
  py::array out(py::dtype(numpy_name(host.dtype())), shape, c_strides(host.shape(), dtype_size(host.dtype())));
  if (host.nbytes() > 0) std::memcpy(out.mutable_data(), host.raw_data(), host.nbytes());
  return out;
}

Array from_numpy(const py::array& in, bool weak) {
  py::array a = py::array::ensure(in, py::array::c_style);
  std::string kind = py::str(a.dtype().attr("name"));
  DType dt = dtype_from_name(kind);
  Shape shape(a.shape(), a.shape() + a.ndim());
  Array out = Array::from_raw(a.data(), shape, dt);
  return weak ? out.with_weak_type(true) : out;
}

}  // namespace

DType dtype_from_name(const std::string& name) {
  if (auto t = parse_dtype(name)) return *t;
  throw InvalidArgument(make_report("TypeError", "spmdsim arrays do not support the dtype " + name,
                                    "use bool, int32, int64, float16, bfloat16, float32 or float64"));
}

void bind_arrays(py::module_& m) {
  // pybind11 finds numpy's C API in a function-local static whose first use
  // imports numpy, which can release the GIL: a second thread reaching that
  // first use then blocks in the static's guard holding the GIL, and the
  // first never gets it back (a hang seen with a background thread's pmap).
  // spmdsim's jax makes that first use as it is imported, before any thread
  // can race; not here, as spmd defines the module before sys.path holds the
  // program's venv, whose numpy must be the one found.
  m.def("_find_numpy_api", [] { py::dtype::of<float>(); },
        "finds numpy's C API for the array conversions (once, at `import jax`)");
  m.def(
      "promote_types",
      [](const std::string& a, bool a_weak, const std::string& b, bool b_weak) {
        const PromotedType p = promote_weak(dtype_from_name(a), a_weak, dtype_from_name(b), b_weak);
        return py::make_tuple(std::string(dtype_name(p.dtype)), p.weak);
      },
      "(dtype, weak) of a binary op's result: JAX's promotion lattice, weak types included");
  py::class_<Array>(m, "Array", "a concrete array on the host or one simulated device")
      .def_static("from_numpy", &from_numpy, py::arg("array"), py::arg("weak_type") = false)
      .def_static(
          "scalar",
          [](const py::handle& value, const std::string& dtype, bool weak) {
            const DType dt = dtype_from_name(dtype);
            if (py::isinstance<py::int_>(value) && !is_floating(dt)) {
              return Array::scalar_int(value.cast<std::int64_t>(), dt, weak);
            }
            return Array::scalar(value.cast<double>(), dt, weak);
          },
          py::arg("value"), py::arg("dtype"), py::arg("weak_type") = false,
          "a 0-d array of a Python scalar in any dtype (bfloat16 included)")
      .def("to_numpy", &to_numpy)
      .def("slices_equal", &slices_equal, py::arg("axis"),
           "every slice along axis equals the first (numpy's array_equal with equal_nan=True)")
      .def_property_readonly("shape", [](const Array& a) { return py::tuple(py::cast(a.shape())); })
      .def_property_readonly("dtype", [](const Array& a) { return std::string(dtype_name(a.dtype())); })
      .def_property_readonly("weak_type", &Array::weak_type)
      .def_property_readonly("nbytes", &Array::nbytes)
      .def_property_readonly("device", [](const Array& a) { return a.device(); })
      .def("with_weak_type", &Array::with_weak_type)
      .def("str", [](const Array& a) { return to_string(a); })
      .def("repr", [](const Array& a) { return repr(a); })
      .def("item_str", [](const Array& a) { return format_scalar(a, 0); });
}

}  // namespace spmd::python
