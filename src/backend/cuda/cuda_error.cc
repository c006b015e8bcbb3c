#include "backend/cuda/cuda_error.h"

#include "backend/cuda/cublas_library.h"

#include "spmd/error.h"

namespace spmd::cuda {

std::string_view call_name(std::string_view expr) {
  std::size_t start = expr.find_first_not_of(" \t:");
  if (start == std::string_view::npos) return expr;
  std::size_t paren = expr.find('(', start);
  std::string_view name = expr.substr(start, paren == std::string_view::npos ? std::string_view::npos : paren - start);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  // "::cudaFoo" or "ns::ncclBar": keep the last component.
  std::size_t colons = name.rfind("::");
  if (colons != std::string_view::npos) name.remove_prefix(colons + 2);
  return name;
}

std::string cuda_error_name(cudaError_t err) {
  const char* n = cudaGetErrorName(err);
  return n ? n : "cudaError " + std::to_string(static_cast<int>(err));
}

std::string nccl_error_name(ncclResult_t res) {
  switch (res) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "ncclResult " + std::to_string(static_cast<int>(res));
  }
}

namespace {

std::string headline(const ErrorSite& site, std::string_view expr) {
  std::string s;
  if (site.device >= 0) s += "device " + std::to_string(site.device) + ": ";
  s += std::string(call_name(expr));
  if (!site.op.empty()) s += " for " + site.op;
  s += " failed: ";
  return s;
}

Report base_report(std::string kind, std::string message, std::string hint, const ErrorSite& site,
                   std::string_view expr, const char* file, int line) {
  Report r = make_report(std::move(kind), std::move(message), std::move(hint));
  r.device = site.device;
  r.op = site.op;
  r.details.push_back("call: " + std::string(expr));
  if (file != nullptr) r.details.push_back(std::string("at ") + file + ":" + std::to_string(line));
  return r;
}

}  // namespace

Report cuda_error_report(cudaError_t err, std::string_view expr, const ErrorSite& site, const char* file, int line) {
  const char* text = cudaGetErrorString(err);
  std::string message = headline(site, expr) + (text ? text : "unknown error") + " (" + cuda_error_name(err) + ")";
  if (err == cudaErrorMemoryAllocation) {
    return base_report("OutOfMemoryError", std::move(message),
                       "the GPU has no memory left for this allocation; lower --arena-capacity so the arena reports "
                       "it first, shard the data over more devices or free intermediates",
                       site, expr, file, line);
  }
  std::string hint = err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
                         ? "check the driver and that the GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES)"
                         : "a sticky error leaves the device unusable: the run was stopped and the NCCL "
                           "communicators aborted; rerun, and run compute-sanitizer on the program if it repeats";
  return base_report("BackendError", std::move(message), std::move(hint), site, expr, file, line);
}

Report nccl_error_report(ncclResult_t res, std::string_view expr, const ErrorSite& site, std::string_view last_error,
                         const char* file, int line) {
  const char* text = ncclGetErrorString(res);
  std::string message = headline(site, expr) + (text ? text : "unknown error") + " (" + nccl_error_name(res) + ")";
  Report r = base_report("BackendError", std::move(message),
                         "every NCCL communicator of the run was aborted so no rank waits forever; run with "
                         "NCCL_DEBUG=WARN for NCCL's own account",
                         site, expr, file, line);
  if (!last_error.empty()) r.details.insert(r.details.begin(), "NCCL: " + std::string(last_error));
  return r;
}

Report cublas_error_report(cublasStatus_t status, std::string_view expr, const ErrorSite& site, const char* file,
                           int line) {
  std::string message =
      headline(site, expr) + cublas_status_text(status) + " (" + cublas_status_name(status) + ")";
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    return base_report("OutOfMemoryError", std::move(message),
                       "cuBLAS could not get memory for its handle or workspace; lower --arena-capacity or shard "
                       "the data over more devices",
                       site, expr, file, line);
  }
  return base_report("BackendError", std::move(message),
                     "cuBLAS rejected the product or failed on the GPU; the run was stopped. Rerun with "
                     "CUBLAS_LOGINFO_DBG=1 CUBLAS_LOGDEST_DBG=stderr for cuBLAS's own account",
                     site, expr, file, line);
}

void throw_report(Report r) {
  if (r.kind == "OutOfMemoryError") throw OutOfMemoryError(std::move(r));
  throw BackendError(std::move(r));
}

void throw_cuda_error(cudaError_t err, std::string_view expr, const ErrorSite& site, const char* file, int line) {
  throw_report(cuda_error_report(err, expr, site, file, line));
}

void throw_cublas_error(cublasStatus_t status, std::string_view expr, const ErrorSite& site, const char* file,
                        int line) {
  throw_report(cublas_error_report(status, expr, site, file, line));
}

void throw_nccl_error(ncclResult_t res, std::string_view expr, const ErrorSite& site, const char* file, int line) {
  const char* last = ncclGetLastError(nullptr);
  throw_report(nccl_error_report(res, expr, site, last ? last : "", file, line));
}

}  // namespace spmd::cuda
