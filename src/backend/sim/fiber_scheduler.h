#pragma once
// Scheduling policies for device fibers, as Boost.Fiber algorithms.
//
// Both keep, per fiber, the Placement of the device it runs as, and install it
// in pick_next(): the thread-local placement always names the running fiber's
// device, also after a fiber migrates to another thread.
//
//  * SeededScheduler: one thread, deterministic. Seed 0 runs ready fibers in
//    FIFO order; any other seed picks the next fiber pseudo-randomly from that
//    seed, to explore other interleavings reproducibly.
//  * SharedScheduler: several threads share one ready queue (fibers migrate);
//    threads with nothing to run sleep on a shared condition variable.

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/properties.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "core/placement.h"

namespace spmd::sim {

class DeviceProps : public boost::fibers::fiber_properties {
 public:
  explicit DeviceProps(boost::fibers::context* ctx) : fiber_properties(ctx) {}
  ~DeviceProps() override;
  const detail::Placement* placement = nullptr;  // null: a host (main/dispatcher) fiber
  void* tsan_fiber = nullptr;    // ThreadSanitizer builds: this fiber's TSan fiber
  bool owns_tsan_fiber = false;  // created for it (not a thread's own)
};

/// What both policies share: the switch in pick_next() installs the picked
/// fiber's device placement and, under ThreadSanitizer, its TSan fiber.
///
/// Built on algorithm_with_properties_base rather than
/// algorithm_with_properties<DeviceProps>: that template looks the
/// properties up through two library calls and writes them on every wake-up
/// (for property-change notifications, which devices never send); waking a
/// thousand devices per collective pays for that a thousand times.
class DeviceAlgorithm : public boost::fibers::algo::algorithm_with_properties_base {
 public:
  DeviceAlgorithm() noexcept;
  ~DeviceAlgorithm() override;
  void property_change_(boost::fibers::context*, boost::fibers::fiber_properties*) noexcept final {}
  /// Call on the installing thread once it has put another algorithm in
  /// place: under ThreadSanitizer, gives the thread its own TSan fiber back.
  void leave_thread() noexcept;

 protected:
  /// Call first in awakened(): gives a fiber its DeviceProps on its first wake-up.
  static void ensure_properties(boost::fibers::context* ctx) {
    if (ctx->get_properties() == nullptr) set_properties(ctx, new DeviceProps(ctx));  // Boost deletes them with ctx
  }
  static DeviceProps& properties(boost::fibers::context* ctx) noexcept {
    return *static_cast<DeviceProps*>(ctx->get_properties());
  }
  /// Call last in pick_next(), with the fiber Boost will switch to.
  void prepare_switch(boost::fibers::context* to) noexcept;

 private:
  void* thread_tsan_fiber_ = nullptr;  // the TSan fiber of the thread that installed this algorithm
  std::thread::id installing_thread_ = std::this_thread::get_id();
};

class SeededScheduler : public DeviceAlgorithm {
 public:
  explicit SeededScheduler(std::uint64_t seed) : seed_(seed), state_(seed * 0x9e3779b97f4a7c15ull + 1) {}
  void awakened(boost::fibers::context* ctx) noexcept override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override { return !ready_.empty(); }
  void suspend_until(std::chrono::steady_clock::time_point const& tp) noexcept override;
  void notify() noexcept override;

 private:
  std::uint64_t next_random();
  std::uint64_t seed_;
  std::uint64_t state_;
  std::deque<boost::fibers::context*> ready_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool notified_ = false;
};

/// The queue and sleep state shared by the threads of one run.
struct SharedQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<boost::fibers::context*> ready;
};

class SharedScheduler : public DeviceAlgorithm {
 public:
  explicit SharedScheduler(SharedQueue& shared) : shared_(shared) {}
  void awakened(boost::fibers::context* ctx) noexcept override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override;
  void suspend_until(std::chrono::steady_clock::time_point const& tp) noexcept override;
  void notify() noexcept override;

 private:
  SharedQueue& shared_;
  std::deque<boost::fibers::context*> pinned_;  // main and dispatcher fibers never migrate
  // Set by notify() (under shared_.mu) and consumed by suspend_until: sticky,
  // so a wake-up between "nothing to run" and going to sleep is not lost.
  bool notified_ = false;
};

}  // namespace spmd::sim
