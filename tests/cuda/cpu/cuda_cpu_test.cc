// The cuda backend's host-side logic, on any machine (no GPU needed).

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <string>

#include "backend/cuda/cublas_library.h"
#include "backend/cuda/cuda_error.h"
#include "backend/cuda/device_plan.h"
#include "backend/cuda/device_resources.h"
#include "backend/cuda/nccl_check.h"
#include "backend/cuda/nccl_types.h"
#include "backend/cuda/watchdog.h"
#include "spmd/spmd.h"

using namespace spmd;
using namespace spmd::cuda;

namespace {

bool has_gpu() {
  int n = 0;
  bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return ok;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cuda::cuda_error: CUDA errors become reports naming device, call and op", "[cuda-cpu]") {
  CHECK(call_name("cudaMemcpyAsync(dst, src, n, kind, s)") == "cudaMemcpyAsync");
  CHECK(call_name("::ncclAllReduce (a, b)") == "ncclAllReduce");
  CHECK(call_name("cudaGetLastError()") == "cudaGetLastError");
  CHECK(cuda_error_name(cudaErrorIllegalAddress) == "cudaErrorIllegalAddress");

  Report r = cuda_error_report(cudaErrorIllegalAddress, "cudaStreamQuery(s)", ErrorSite{3, "psum over 'i' #7"},
                               "x.cc", 12);
  CHECK(r.kind == "BackendError");
  CHECK(r.device == 3);
  CHECK(r.op == "psum over 'i' #7");
  CHECK(r.message ==
        "device 3: cudaStreamQuery for psum over 'i' #7 failed: an illegal memory access was encountered "
        "(cudaErrorIllegalAddress)");
  REQUIRE(r.details.size() == 2);
  CHECK(r.details[0] == "call: cudaStreamQuery(s)");
  CHECK(r.details[1] == "at x.cc:12");
  CHECK_FALSE(r.hint.empty());

  Report oom = cuda_error_report(cudaErrorMemoryAllocation, "cudaMallocFromPoolAsync(&p, n, pool, s)",
                                 ErrorSite{0, "matmul"});
  CHECK(oom.kind == "OutOfMemoryError");
  CHECK(oom.message == "device 0: cudaMallocFromPoolAsync for matmul failed: out of memory (cudaErrorMemoryAllocation)");

  Report host = cuda_error_report(cudaErrorNoDevice, "cudaSetDevice(0)", ErrorSite{});
  CHECK(host.message.rfind("cudaSetDevice failed: ", 0) == 0);
  CHECK(contains(host.hint, "nvidia-smi"));
}

TEST_CASE("cuda::cuda_error: cuBLAS errors name the device and op, with cuBLAS's status", "[cuda-cpu]") {
  Report r = cublas_error_report(CUBLAS_STATUS_INVALID_VALUE, "cublasSgemmBatched(h, ta, tb, n, m, k)",
                                 ErrorSite{2, "matmul"});
  CHECK(r.kind == "BackendError");
  CHECK(r.device == 2);
  CHECK(r.message ==
        "device 2: cublasSgemmBatched for matmul failed: an invalid numeric value was used as an argument "
        "(CUBLAS_STATUS_INVALID_VALUE)");
  CHECK(contains(r.hint, "CUBLAS_LOGINFO_DBG"));
  Report oom = cublas_error_report(CUBLAS_STATUS_ALLOC_FAILED, "cublasCreate(&h)", ErrorSite{0, "matmul"});
  CHECK(oom.kind == "OutOfMemoryError");
  CHECK(contains(oom.message, "(CUBLAS_STATUS_ALLOC_FAILED)"));
}

TEST_CASE("cuda::cublas: loaded at the first product, not at start, with every entry point", "[cuda-cpu]") {
  // Not linked: the process has no cuBLAS until asked (a GPU is not needed to load it).
  CHECK(::dlopen(("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR)).c_str(), RTLD_NOLOAD | RTLD_NOW) == nullptr);
  const CublasLibrary& lib = cublas("matmul");
  CHECK(lib.create != nullptr);
  CHECK(lib.destroy != nullptr);
  CHECK(lib.set_stream != nullptr);
  CHECK(lib.set_math_mode != nullptr);
  CHECK(lib.sgemm_batched != nullptr);
  CHECK(lib.dgemm_batched != nullptr);
  CHECK(&cublas("matmul") == &lib);
}

TEST_CASE("cuda::cuda_error: NCCL errors name the rank and op, with NCCL's last error", "[cuda-cpu]") {
  CHECK(nccl_error_name(ncclUnhandledCudaError) == "ncclUnhandledCudaError");
  CHECK(nccl_error_name(ncclRemoteError) == "ncclRemoteError");
  Report r = nccl_error_report(ncclUnhandledCudaError, "ncclAllReduce(in, out, n, t, op, comm, s)",
                               ErrorSite{3, "psum over 'i' #7"}, "Cuda failure 'out of memory'");
  CHECK(r.kind == "BackendError");
  CHECK(r.device == 3);
  CHECK(contains(r.message, "device 3: ncclAllReduce for psum over 'i' #7 failed: unhandled cuda error"));
  CHECK(contains(r.message, "(ncclUnhandledCudaError)"));
  REQUIRE(!r.details.empty());
  CHECK(r.details[0] == "NCCL: Cuda failure 'out of memory'");
  CHECK(contains(r.hint, "aborted"));
}

TEST_CASE("cuda::nccl_check: the check macros throw the mapped error class, located once", "[cuda-cpu]") {
  auto failing_nccl = [] { return ncclInvalidUsage; };
  try {
    SPMD_NCCL_CHECK(failing_nccl(), (ErrorSite{1, "all_gather over 'j' #2"}));
    FAIL("no exception");
  } catch (const BackendError& e) {
    CHECK(e.kind() == "BackendError");
    CHECK(contains(e.report().message, "device 1: failing_nccl for all_gather over 'j' #2 failed"));
    CHECK(contains(e.report().message, "(ncclInvalidUsage)"));
    bool located = false;
    for (const auto& d : e.report().details) located |= contains(d, "cuda_cpu_test.cc:");
    CHECK(located);
  }
  try {
    SPMD_CUDA_CHECK(cudaSetDevice(1 << 20), (ErrorSite{2, "test"}));
    FAIL("no exception");
  } catch (const BackendError& e) {
    CHECK(contains(e.report().message, "device 2: cudaSetDevice for test failed: "));
  }
  cudaGetLastError();
  try {
    SPMD_CUDA_CHECK(cudaErrorMemoryAllocation, (ErrorSite{4, "zeros"}));
    FAIL("no exception");
  } catch (const OutOfMemoryError& e) {
    CHECK(e.kind() == "OutOfMemoryError");
    CHECK(e.report().device == 4);
  }
}

TEST_CASE("cuda::nccl_types: one NCCL type and op per spmd dtype and reduction", "[cuda-cpu]") {
  CHECK(nccl_dtype(DType::kBool) == ncclUint8);
  CHECK(nccl_dtype(DType::kInt32) == ncclInt32);
  CHECK(nccl_dtype(DType::kInt64) == ncclInt64);
  CHECK(nccl_dtype(DType::kFloat16) == ncclFloat16);
  CHECK(nccl_dtype(DType::kBFloat16) == ncclBfloat16);
  CHECK(nccl_dtype(DType::kFloat32) == ncclFloat32);
  CHECK(nccl_dtype(DType::kFloat64) == ncclFloat64);
  CHECK(std::string(nccl_dtype_name(ncclBfloat16)) == "ncclBfloat16");
  CHECK(nccl_op(detail::ReduceKind::kSum) == ncclSum);
  CHECK(nccl_op(detail::ReduceKind::kMax) == ncclMax);
  CHECK(nccl_op(detail::ReduceKind::kMin) == ncclMin);
}

TEST_CASE("cuda::device_plan: devices on GPUs, NCCL or device copies", "[cuda-cpu]") {
  SECTION("no GPU") {
    try {
      plan_devices(2, 0, "auto");
      FAIL("no exception");
    } catch (const BackendUnavailable& e) {
      CHECK(e.report().message == "no CUDA device found");
      CHECK(contains(e.report().hint, "--backend sim"));
    }
  }
  SECTION("one GPU per device: NCCL") {
    DevicePlan p = plan_devices(2, 4, "auto");
    CHECK(p.transport == "nccl");
    CHECK(p.ordinals == std::vector<int>{0, 1});
    CHECK(p.note.empty());
  }
  SECTION("more devices than GPUs: device copies, round robin, and it says so") {
    DevicePlan p = plan_devices(8, 1, "");
    CHECK(p.transport == "copy");
    CHECK(p.ordinals == std::vector<int>(8, 0));
    CHECK(p.note == "8 devices on 1 GPU: collectives use device copies (NCCL refuses two ranks on one GPU)");
    CHECK(plan_devices(5, 2, "auto").ordinals == std::vector<int>{0, 1, 0, 1, 0});
  }
  SECTION("NCCL forced with two devices on one GPU is refused") {
    try {
      plan_devices(2, 1, "nccl");
      FAIL("no exception");
    } catch (const BackendUnavailable& e) {
      CHECK(e.report().message == "NCCL needs one GPU per device: 2 devices but 1 GPU");
      CHECK(contains(e.report().hint, "--devices 1"));
    }
  }
  SECTION("copy forced") { CHECK(plan_devices(2, 2, "copy").transport == "copy"); }
  SECTION("unknown transport") { CHECK_THROWS_AS(plan_devices(2, 2, "mpi"), BackendUnavailable); }
  SECTION("local devices of several processes: NCCL, one GPU each, never device copies") {
    DevicePlan p = plan_devices(2, 2, "auto", 4);
    CHECK(p.transport == "nccl");
    CHECK(p.ordinals == std::vector<int>{0, 1});
    try {
      plan_devices(2, 1, "auto", 2);
      FAIL("no exception");
    } catch (const BackendUnavailable& e) {
      CHECK(e.report().message == "each of the 2 processes runs 2 local devices, but this host has 1 GPU");
      CHECK(contains(e.report().hint, "--devices 2 (2 processes x 1 GPU)"));
    }
    try {
      plan_devices(1, 1, "copy", 2);
      FAIL("no exception");
    } catch (const BackendUnavailable& e) {
      CHECK(e.report().message == "SPMD_CUDA_TRANSPORT=copy cannot move data between processes");
    }
  }
}

TEST_CASE("cuda::watchdog: the timeout report names the op, the stuck devices and every device", "[cuda-cpu]") {
  Report r = watchdog_report("psum over 'i' #7", 2, {1, 3},
                             {"device 0: waiting at psum over 'i' #7", "device 1: running"});
  CHECK(r.kind == "WatchdogTimeout");
  CHECK(r.message == "watchdog: psum over 'i' #7 did not complete within 2 s on devices 1, 3");
  CHECK(r.device == 1);
  CHECK(r.op == "psum over 'i' #7");
  CHECK(r.details == std::vector<std::string>{"device 0: waiting at psum over 'i' #7", "device 1: running"});
  CHECK(contains(r.hint, "--watchdog-seconds"));
  CHECK(watchdog_report("download to the host", 0.5, {0}, {}).message ==
        "watchdog: download to the host did not complete within 0.5 s on device 0");
}

TEST_CASE("cuda::backend: selected by name, without a GPU, a clear BackendUnavailable at Runtime creation",
          "[cuda-cpu]") {
  auto names = Runtime::available_backends();
  CHECK(std::find(names.begin(), names.end(), "cuda") != names.end());
  RuntimeOptions o;
  o.devices = 2;
  o.backend = "cuda";
  if (has_gpu()) {
    Runtime rt(o);
    CHECK(rt.backend_name() == "cuda");
  } else {
    try {
      Runtime rt(o);
      FAIL("created a cuda Runtime without a GPU");
    } catch (const BackendUnavailable& e) {
      CHECK(e.kind() == "BackendUnavailable");
      CHECK(e.report().message == "no CUDA device found");
    }
  }
}

TEST_CASE("cuda::DeviceTable: a device without GPU resources is a BackendError", "[cuda-cpu]") {
  try {
    DeviceTable::instance().at(4096);
    FAIL("no exception");
  } catch (const BackendError& e) {
    CHECK(e.report().message == "cuda backend: device 4096 has no GPU resources");
  }
}
