#include "backend/cuda/cublas_library.h"

#include <dlfcn.h>

#include <mutex>

#include "spmd/error.h"

namespace spmd::cuda {

namespace {

struct Loaded {
  CublasLibrary library;
  std::string error;  // empty: loaded
};

Loaded load() {
  Loaded out;
  const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
#ifdef SPMD_CUDA_LIBRARY_DIR
  if (handle == nullptr) handle = ::dlopen((std::string(SPMD_CUDA_LIBRARY_DIR) + "/" + name).c_str(), RTLD_NOW | RTLD_LOCAL);
#endif
  if (handle == nullptr) {
    const char* why = ::dlerror();
    out.error = "cannot load " + name + ": " + (why ? why : "unknown error");
    return out;
  }
  // Kept loaded for the process's life: handles made from it live in the
  // devices' resources until exit.
  auto bind = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle, symbol));
    if (fn == nullptr && out.error.empty()) out.error = name + " has no " + symbol;
  };
  CublasLibrary& l = out.library;
  bind(l.create, "cublasCreate_v2");
  bind(l.destroy, "cublasDestroy_v2");
  bind(l.set_stream, "cublasSetStream_v2");
  bind(l.set_math_mode, "cublasSetMathMode");
  bind(l.sgemm_batched, "cublasSgemmBatched");
  bind(l.dgemm_batched, "cublasDgemmBatched");
  return out;
}

}  // namespace

const CublasLibrary& cublas(const std::string& op) {
  // Never destroyed: devices' resources give their handles back to it at exit.
  static const Loaded& loaded = *new Loaded(load());
  if (!loaded.error.empty()) {
    Report r = make_report("BackendError", op + ": the GPU's matrix products need cuBLAS, and " + loaded.error,
                           "install the CUDA toolkit's cuBLAS (it comes with CUDA " +
                               std::to_string(CUBLAS_VER_MAJOR) + ") or add its directory to LD_LIBRARY_PATH");
    r.op = op;
    throw BackendError(std::move(r));
  }
  return loaded.library;
}

const char* cublas_status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublas_status_text(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "an error was detected when checking the current licensing";
  }
  return "unknown cuBLAS status";
}

}  // namespace spmd::cuda
