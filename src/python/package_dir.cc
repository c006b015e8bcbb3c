#include <cstdlib>

#include "python/bindings.h"

namespace spmd::python {

std::string package_dir() {
  if (const char* env = std::getenv("SPMD_PYTHON_DIR"); env != nullptr && *env != '\0') return env;
  return SPMD_PYTHON_SOURCE_DIR;
}

std::string extension_dir() {
  if (const char* env = std::getenv("SPMD_PYTHON_EXTENSION_DIR"); env != nullptr && *env != '\0') return env;
  return SPMD_PYTHON_EXTENSION_DIR;
}

void define_module(py::module_& m) {
  m.doc() = "spmdsim's runtime, for its jax package";
  bind_errors(m);
  bind_arrays(m);
  bind_programs(m);
  bind_runtime(m);
}

}  // namespace spmd::python
