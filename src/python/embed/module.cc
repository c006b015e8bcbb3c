// The `_spmd` module, embedded in the spmd binary.

#include <pybind11/embed.h>

#include "python/bindings.h"

PYBIND11_EMBEDDED_MODULE(_spmd, m) { spmd::python::define_module(m); }

namespace spmd::python {
// Referenced by the runner so the linker keeps this object (and the module's
// registration) when it links the static library.
void link_embedded_module() {}
}  // namespace spmd::python
