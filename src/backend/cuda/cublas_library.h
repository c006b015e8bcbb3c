#pragma once
// cuBLAS, loaded when a device first multiplies floats. Linking it would make
// every spmd process, GPU or none, map and relocate cuBLAS and cuBLASLt (some
// 700 MB of libraries): `spmd run` of a one-line program went from 0.22 s and
// 43 MB to 0.58 s and 262 MB. Loaded here, only the cuda backend's products
// pay for it, once.

#include <cublas_v2.h>

#include <string>

namespace spmd::cuda {

/// The cuBLAS entry points the backend calls.
struct CublasLibrary {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  decltype(&::cublasSgemmBatched) sgemm_batched = nullptr;
  decltype(&::cublasDgemmBatched) dgemm_batched = nullptr;
};

/// The library, loaded at the first call (libcublas.so.<major> from the
/// loader's path, else from the CUDA toolkit the backend was built with).
/// Throws BackendError naming the library and the loader's message when it
/// cannot be loaded or lacks an entry point; the op is `op` (e.g. "matmul").
const CublasLibrary& cublas(const std::string& op);

/// "CUBLAS_STATUS_INVALID_VALUE" and a sentence for a status, without the
/// library (its error reports must work when it failed to load).
const char* cublas_status_name(cublasStatus_t status);
const char* cublas_status_text(cublasStatus_t status);

}  // namespace spmd::cuda
