#pragma once
// The simulator: every device is a Boost.Fiber fiber with its own arena,
// scheduled over `threads` OS threads; collectives move host memory.

#include <cstdint>
#include <memory>

#include "backend/backend.h"
#include "dataplane/transport.h"

namespace spmd::sim {

class StackPool;

class SimBackend final : public detail::Backend {
 public:
  /// `local`: the devices this process runs (all, unless a multi-process
  /// run gives each process its own; their collectives then move data
  /// through the processes' store).
  SimBackend(int devices, int threads, std::uint64_t seed, std::size_t stack_size, detail::LocalDevices local = {});
  ~SimBackend() override;

  std::string_view name() const override { return "sim"; }
  int device_count() const override { return devices_; }
  std::shared_ptr<detail::Arena> make_arena(DeviceId device, std::size_t capacity, std::string label) override;
  std::unique_ptr<detail::Parker> make_parker() override;
  void launch(detail::LaunchedRun& run, std::span<detail::DeviceContext* const> devices,
              const detail::DeviceBody& body) override;
  void yield() override;
  void execute(detail::CollectiveCall& call) override;
  void execute_across_processes(detail::CollectiveCall& call, dist::ProcessGroup& processes) override;

 private:
  void launch_top_level(std::span<detail::DeviceContext* const> devices,
                        const detail::DeviceBody& body);
  // One fiber per device on the calling thread's scheduler; joins them all.
  void run_fibers(std::span<detail::DeviceContext* const> devices, const detail::DeviceBody& body);

  int devices_;
  int threads_;
  std::uint64_t seed_;
  std::size_t stack_size_;
  // Fiber stacks, kept from run to run while there are at most this many.
  static constexpr std::size_t kStacksKeptBetweenRuns = 1024;
  std::shared_ptr<StackPool> stacks_;  // shared with the fibers not yet freed (PooledStack)
  // The OS threads top-level runs use with --threads 2 and more, kept from
  // run to run: making and joining threads cost about a third of a small
  // pmap. With one thread the devices run on the caller's thread.
  class FiberThreads;
  std::unique_ptr<FiberThreads> threads_pool_;
  detail::LocalDevices local_;
  std::unique_ptr<detail::Transport> across_processes_;  // created at the first such collective
};

}  // namespace spmd::sim
