#include "runtime/backend_registry.h"

#include <map>
#include <mutex>

#include "backend/sim/sim_backend.h"
#include "spmd/config.h"
#include "spmd/error.h"

#if SPMD_HAVE_CUDA
#include "backend/cuda/cuda_backend_factory.h"
#endif

namespace spmd::detail {

namespace {
std::mutex g_factories_mu;
std::map<std::string, BackendFactory, std::less<>>& factories() {
  static std::map<std::string, BackendFactory, std::less<>> f;
  return f;
}
}  // namespace

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names = {"sim"};
#if SPMD_HAVE_CUDA
  names.push_back("cuda");
#endif
  std::lock_guard<std::mutex> lock(g_factories_mu);
  for (const auto& [name, f] : factories()) names.push_back(name);
  return names;
}

void register_backend_factory(std::string name, BackendFactory factory) {
  std::lock_guard<std::mutex> lock(g_factories_mu);
  if (factory) {
    factories()[std::move(name)] = std::move(factory);
  } else {
    factories().erase(name);
  }
}

std::unique_ptr<Backend> create_backend(std::string_view name, int devices, int threads, std::uint64_t seed,
                                        std::size_t fiber_stack_size, LocalDevices local) {
  if (local.count == 0) local = {0, devices};
  if (name == "sim") return std::make_unique<sim::SimBackend>(devices, threads, seed, fiber_stack_size, local);
  if (name == "cuda") {
#if SPMD_HAVE_CUDA
    return cuda::create_cuda_backend(devices, local);
#else
    throw BackendUnavailable(make_report(
        "BackendUnavailable", "the cuda backend is not compiled into this build",
        "configure with -DSPMD_CUDA=ON on a machine with nvcc and NCCL (e.g. /usr/local/cuda), or use --backend sim"));
#endif
  }
  {
    BackendFactory factory;
    {
      std::lock_guard<std::mutex> lock(g_factories_mu);
      auto it = factories().find(name);
      if (it != factories().end()) factory = it->second;
    }
    if (factory) return factory(devices, threads, seed, fiber_stack_size);
  }
  std::string valid;
  for (const auto& n : compiled_backends()) valid += (valid.empty() ? "" : ", ") + n;
  throw BackendUnavailable(make_report("BackendUnavailable", "unknown backend '" + std::string(name) + "'",
                                       "valid backends in this build: " + valid));
}

}  // namespace spmd::detail
