#pragma once
// The one place where cudaError_t, ncclResult_t and cublasStatus_t become spmd errors
// (style habit 7): a BackendError whose message names the device (rank), the
// failing call and the op it served, with the library's error name and text:
//   "device 3: ncclAllReduce for psum over 'i' #7 failed: unhandled cuda error (ncclUnhandledCudaError)"
// The [file:line] of the failing call is added here, once, as a detail line.
// cudaErrorMemoryAllocation becomes an OutOfMemoryError instead.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <string_view>

#include "spmd/report.h"

namespace spmd::cuda {

/// Where a failing call happened: the virtual device (NCCL rank) and the op.
struct ErrorSite {
  int device = -1;
  std::string op;  ///< "psum over 'i' #7", "matmul", ...; may be empty
};

/// The name of the called function in an expression: "cudaMemcpyAsync(a, b)" -> "cudaMemcpyAsync".
std::string_view call_name(std::string_view expr);

/// "cudaErrorMemoryAllocation" / "ncclUnhandledCudaError".
std::string cuda_error_name(cudaError_t err);
std::string nccl_error_name(ncclResult_t res);

/// The report of a failed CUDA runtime call (kind BackendError, or
/// OutOfMemoryError for cudaErrorMemoryAllocation).
Report cuda_error_report(cudaError_t err, std::string_view expr, const ErrorSite& site, const char* file = nullptr,
                         int line = 0);
/// The report of a failed NCCL call; `last_error` is ncclGetLastError's text.
Report nccl_error_report(ncclResult_t res, std::string_view expr, const ErrorSite& site, std::string_view last_error,
                         const char* file = nullptr, int line = 0);

/// The report of a failed cuBLAS call (OutOfMemoryError for
/// CUBLAS_STATUS_ALLOC_FAILED, else BackendError).
Report cublas_error_report(cublasStatus_t status, std::string_view expr, const ErrorSite& site,
                           const char* file = nullptr, int line = 0);

/// Throws the spmd error for the report above (BackendError or OutOfMemoryError).
[[noreturn]] void throw_cuda_error(cudaError_t err, std::string_view expr, const ErrorSite& site, const char* file,
                                   int line);
[[noreturn]] void throw_nccl_error(ncclResult_t res, std::string_view expr, const ErrorSite& site,
                                   const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, std::string_view expr, const ErrorSite& site,
                                     const char* file, int line);
/// Throws a BackendError built from `r` (or OutOfMemoryError when r.kind says so).
[[noreturn]] void throw_report(Report r);

}  // namespace spmd::cuda
