#include "backend/cuda/cuda_backend.h"

#include <condition_variable>
#include <cstdlib>
#include <thread>

#include "backend/cuda/cuda_arena.h"
#include "backend/cuda/cuda_backend_factory.h"
#include "backend/cuda/cuda_ops.h"
#include "backend/cuda/nccl_check.h"
#include "backend/cuda/watchdog.h"
#include "dataplane/device_plane.h"
#include "core/device_ops.h"
#include "rendezvous/communicator.h"
#include "spmd/error.h"

namespace spmd::cuda {

namespace {

class alignas(64) CvParker final : public detail::Parker {
 public:
  void park(std::unique_lock<std::mutex>& lock) override {
    cv_.wait(lock);
    lock.unlock();
  }
  void unpark() override { cv_.notify_one(); }

 private:
  std::condition_variable cv_;
};

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::string(fallback);
}

}  // namespace

std::unique_ptr<detail::Backend> create_cuda_backend(int devices, detail::LocalDevices local) {
  int gpus = 0;
  cudaError_t err = cudaGetDeviceCount(&gpus);
  if (err != cudaSuccess) {
    cudaGetLastError();
    gpus = 0;
  }
  DevicePlan plan = [&] {
    try {
      return plan_devices(local.count, gpus, env_or("SPMD_CUDA_TRANSPORT", "auto"), devices / local.count);
    } catch (BackendUnavailable& e) {
      if (err != cudaSuccess) {
        e.mutable_report().details.push_back("cudaGetDeviceCount: " + std::string(cudaGetErrorString(err)) + " (" +
                                             cuda_error_name(err) + ")");
      }
      throw;
    }
  }();
  return std::make_unique<CudaBackend>(devices, local, std::move(plan));
}

CudaBackend::CudaBackend(int devices, detail::LocalDevices local, DevicePlan plan)
    : devices_(devices),
      local_(local),
      plan_(std::move(plan)),
      resources_(static_cast<std::size_t>(devices)),
      last_completed_(static_cast<std::size_t>(devices)) {
  // Resources for this process's devices only; the others' stay null (other
  // processes run them), so DeviceTable::at() refuses them.
  for (int i = 0; i < local_.count; ++i) {
    const int d = local_.first + i;
    auto res = std::make_shared<DeviceResources>();
    res->device = d;
    res->ordinal = plan_.ordinals[static_cast<std::size_t>(i)];
    DeviceGuard guard(res->ordinal);
    ErrorSite site{d, "backend setup"};
    SPMD_CUDA_CHECK(cudaStreamCreateWithFlags(&res->stream, cudaStreamNonBlocking), site);
    SPMD_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&res->pool, res->ordinal), site);
    // Keep freed blocks in the pool: the next collective's output is usually
    // the size of the last one's.
    std::uint64_t keep = ~std::uint64_t{0};
    SPMD_CUDA_CHECK(cudaMemPoolSetAttribute(res->pool, cudaMemPoolAttrReleaseThreshold, &keep), site);
    resources_[static_cast<std::size_t>(d)] = std::move(res);
  }
  policy_ = std::make_shared<WaitPolicy>();
  policy_->on_fatal = [this](const Report& r) { on_fatal(r); };
  policy_->describe_devices = [this] { return describe_devices(); };
  DeviceTable::instance().install(resources_, policy_);
  detail::register_device_ops(MemoryKind::kCuda, &cuda_device_ops());
  if (plan_.transport == "nccl") {
    nccl_ = std::make_unique<NcclTransport>(policy_);
  } else {
    copy_ = std::make_unique<CopyTransport>(policy_);
  }
}

CudaBackend::~CudaBackend() {
  // The policy outlives the backend in the table: unhook it from `this`.
  policy_->on_fatal = nullptr;
  policy_->describe_devices = nullptr;
  nccl_.reset();
}

std::shared_ptr<detail::Arena> CudaBackend::make_arena(DeviceId device, std::size_t capacity, std::string label) {
  return std::make_shared<CudaArena>(device, capacity, std::move(label),
                                     resources_.at(static_cast<std::size_t>(device)));
}

std::unique_ptr<detail::Parker> CudaBackend::make_parker() { return std::make_unique<CvParker>(); }

void CudaBackend::yield() { std::this_thread::yield(); }

void CudaBackend::enter_device(detail::DeviceContext& ctx) {
  const DeviceId device = detail::placement_of(ctx).device;
  const DeviceResources& res = *resources_.at(static_cast<std::size_t>(device));
  SPMD_CUDA_CHECK(cudaSetDevice(res.ordinal), (ErrorSite{device, "device start"}));
}

void CudaBackend::leave_device(detail::DeviceContext& ctx) {
  // Asynchronous kernel failures surface here, attributed to this device.
  const DeviceResources& res = *resources_.at(static_cast<std::size_t>(detail::placement_of(ctx).device));
  wait_streams({StreamRef{res.device, res.ordinal, res.stream}}, {}, "the device's last kernels", *policy_);
}

// Each device is a host thread with its placement; the runtime's lifecycle
// (body) calls enter_device and leave_device around the user's function.
void CudaBackend::device_main(detail::DeviceContext& ctx, const detail::DeviceBody& body) {
  detail::set_current_placement(&detail::placement_of(ctx));
  body(ctx);
  detail::set_current_placement(nullptr);
}

std::exception_ptr CudaBackend::nested_launch_error() const {
  Report r = make_report("BackendError", "nested pmap is not supported on the cuda backend",
                         "each device is a host thread bound to one GPU; use a mesh (pmap with several named "
                         "axes) instead of nesting, or --backend sim");
  r.op = "pmap";
  return std::make_exception_ptr(BackendError(std::move(r)));
}

void CudaBackend::launch(detail::LaunchedRun& run, std::span<detail::DeviceContext* const> devices,
                         const detail::DeviceBody& body) {
  policy_->watchdog_s = run.watchdog_seconds();
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    run_ = &run;
    std::fill(last_completed_.begin(), last_completed_.end(), std::string());
  }
  std::vector<std::thread> threads;
  threads.reserve(devices.size());
  for (detail::DeviceContext* ctx : devices) {
    threads.emplace_back([this, ctx, &body] { device_main(*ctx, body); });
  }
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> lock(state_mu_);
  run_ = nullptr;
}

void CudaBackend::execute(detail::CollectiveCall& call) {
  try {
    if (nccl_) {
      nccl_->reset_pending();
      detail::execute_with_transport(call, *nccl_);
    } else {
      copy_->reset_pending();
      detail::execute_with_transport(call, *copy_);
    }
  } catch (const Error& e) {
    on_fatal(e.report());
    throw;
  }
  std::string op = detail::collective_op_text(call);
  std::lock_guard<std::mutex> lock(state_mu_);
  for (const auto& m : call.members) {
    if (m.here() && m.device >= 0 && m.device < devices_) {
      last_completed_[static_cast<std::size_t>(m.device)] = op;
    }
  }
}

void CudaBackend::execute_across_processes(detail::CollectiveCall& call, dist::ProcessGroup& processes) {
  if (!nccl_) {
    Report r = make_report("BackendError", "the cuda backend's copy transport cannot move data between processes",
                           "use SPMD_CUDA_TRANSPORT=nccl (or auto) with --process-devices local");
    throw BackendError(std::move(r));
  }
  nccl_->set_processes(&processes, local_);
  execute(call);
}

void CudaBackend::on_fatal(const Report&) {
  if (nccl_) nccl_->abort_all();
}

std::vector<std::string> CudaBackend::describe_devices() {
  std::vector<std::string> lines;
  std::lock_guard<std::mutex> lock(state_mu_);
  if (run_ == nullptr) return lines;
  // The caller may hold the run's lock (a download while breakpoints fire):
  // the run then says it is busy instead of waiting for it.
  bool busy = false;
  for (auto& [device, line] : run_->device_lines(busy)) {
    const std::string& last = last_completed_[static_cast<std::size_t>(device)];
    lines.push_back(std::move(line) + "; last completed collective: " + (last.empty() ? std::string("none") : last));
  }
  if (busy) lines.push_back("(device states unavailable: the run is busy)");
  return lines;
}

}  // namespace spmd::cuda
