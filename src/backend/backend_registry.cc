#include "backend/backend.h"

#include "backend/sim/sim_backend.h"
#include "spmd/config.h"
#include "spmd/error.h"

#if SPMD_HAVE_CUDA
#include "backend/cuda/cuda_backend_factory.h"
#endif

namespace spmd::detail {

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names = {"sim"};
#if SPMD_HAVE_CUDA
  names.push_back("cuda");
#endif
  return names;
}

std::unique_ptr<Backend> create_backend(std::string_view name, int devices, int threads, std::uint64_t seed,
                                        std::size_t fiber_stack_size) {
  if (name == "sim") return std::make_unique<sim::SimBackend>(devices, threads, seed, fiber_stack_size);
  if (name == "cuda") {
#if SPMD_HAVE_CUDA
    return cuda::create_cuda_backend(devices);
#else
    throw BackendUnavailable(make_report(
        "BackendUnavailable", "the cuda backend is not compiled into this build",
        "configure with -DSPMD_CUDA=ON on a machine with nvcc and NCCL (e.g. /usr/local/cuda), or use --backend sim"));
#endif
  }
  std::string valid;
  for (const auto& n : compiled_backends()) valid += (valid.empty() ? "" : ", ") + n;
  throw BackendUnavailable(make_report("BackendUnavailable", "unknown backend '" + std::string(name) + "'",
                                       "valid backends in this build: " + valid));
}

}  // namespace spmd::detail
