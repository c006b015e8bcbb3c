#include "backend/sim/fiber_scheduler.h"

// SPMD_TSAN comes from cmake/SpmdSanitizers.cmake: this file is compiled
// without -fsanitize=thread (see there), which also drops __SANITIZE_THREAD__.
#ifdef SPMD_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#include <string>

#include "util/log.h"

namespace spmd::sim {

namespace {

// Who a fiber runs as, for the trace log: "device 3", a device fiber not
// started yet, or one of Boost's own fibers.
std::string who(boost::fibers::context* ctx, const DeviceProps& props) {
  if (ctx->is_context(boost::fibers::type::main_context)) return "the thread's main fiber";
  if (ctx->is_context(boost::fibers::type::dispatcher_context)) return "the dispatcher";
  const detail::Placement* p = props.placement;
  return p == nullptr ? std::string("a device fiber that has not started") : "device " + std::to_string(p->device);
}

}  // namespace

// ThreadSanitizer keeps a shadow call stack and a clock per thread; fibers
// switching stacks under it (Debian's Boost.Context has no TSan hooks)
// corrupt both and crash it. So each Boost fiber gets a TSan fiber, and
// prepare_switch() switches to it: after pick_next, Boost jumps to the picked
// fiber running only uninstrumented library code, so for TSan this is the
// switch itself. A thread's first fiber keeps the thread's own TSan fiber.
void DeviceAlgorithm::prepare_switch(boost::fibers::context* to) noexcept {
  detail::set_current_placement(properties(to).placement);
#ifdef SPMD_TSAN
  boost::fibers::context* from = boost::fibers::context::active();
  if (from == to) return;
  auto* from_props = static_cast<DeviceProps*>(from->get_properties());
  if (from_props == nullptr) {  // a thread's main fiber, never awakened yet
    from_props = new DeviceProps(from);
    set_properties(from, from_props);
  }
  if (from_props->tsan_fiber == nullptr) from_props->tsan_fiber = __tsan_get_current_fiber();
  DeviceProps& to_props = properties(to);
  if (to_props.tsan_fiber == nullptr) {
    to_props.tsan_fiber = __tsan_create_fiber(0);
    to_props.owns_tsan_fiber = true;
  }
  __tsan_switch_to_fiber(to_props.tsan_fiber, 0);
#endif
}

DeviceAlgorithm::DeviceAlgorithm() noexcept {
#ifdef SPMD_TSAN
  thread_tsan_fiber_ = __tsan_get_current_fiber();
#endif
}

// A thread leaves its device algorithm while on a fiber whose TSan fiber may
// be another's (Boost also switches between the main and dispatcher fibers
// without pick_next()); give the thread its own TSan fiber back so TSan
// finishes the right thread (else joining it spins).
void DeviceAlgorithm::leave_thread() noexcept {
#ifdef SPMD_TSAN
  if (thread_tsan_fiber_ != nullptr && __tsan_get_current_fiber() != thread_tsan_fiber_) {
    __tsan_switch_to_fiber(thread_tsan_fiber_, 0);
  }
#endif
}

// Boost tears the scheduler down at thread exit. An algorithm a run kept
// alive past its thread's use is released by the launching thread, whose TSan
// fiber is its own: leave that alone.
DeviceAlgorithm::~DeviceAlgorithm() {
  if (std::this_thread::get_id() == installing_thread_) leave_thread();
}

DeviceProps::~DeviceProps() {
#ifdef SPMD_TSAN
  // Boost destroys a context (and its properties) after it ended and was
  // left; never destroy the TSan fiber we are on.
  if (owns_tsan_fiber && tsan_fiber != nullptr && tsan_fiber != __tsan_get_current_fiber()) {
    __tsan_destroy_fiber(tsan_fiber);
  }
#endif
}

// --- SeededScheduler -------------------------------------------------------

void SeededScheduler::awakened(boost::fibers::context* ctx) noexcept {
  ensure_properties(ctx);
  ready_.push_back(ctx);
}

std::uint64_t SeededScheduler::next_random() {
  // xorshift64*: fast, and the same sequence for the same seed everywhere.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return state_ * 0x2545f4914f6cdd1dull;
}

boost::fibers::context* SeededScheduler::pick_next() noexcept {
  if (ready_.empty()) return nullptr;
  boost::fibers::context* ctx;
  if (seed_ == 0) {
    ctx = ready_.front();
    ready_.pop_front();
  } else {
    std::size_t i = static_cast<std::size_t>(next_random() % ready_.size());
    ctx = ready_[i];
    ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  SPMD_LOG(kSim, trace, "runs {} ({} more ready{})", who(ctx, properties(ctx)), ready_.size(),
           seed_ == 0 ? ", in order" : ", drawn by the seed");
  prepare_switch(ctx);
  return ctx;
}

void SeededScheduler::suspend_until(std::chrono::steady_clock::time_point const& tp) noexcept {
  std::unique_lock<std::mutex> lock(mu_);
  if (tp == std::chrono::steady_clock::time_point::max()) {
    cv_.wait(lock, [this] { return notified_; });
  } else {
    cv_.wait_until(lock, tp, [this] { return notified_; });
  }
  notified_ = false;
}

void SeededScheduler::notify() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    notified_ = true;
  }
  cv_.notify_all();
}

// --- SharedScheduler -------------------------------------------------------

void SharedScheduler::awakened(boost::fibers::context* ctx) noexcept {
  ensure_properties(ctx);
  if (ctx->is_context(boost::fibers::type::pinned_context)) {
    pinned_.push_back(ctx);
    return;
  }
  ctx->detach();
  {
    std::lock_guard<std::mutex> lock(shared_.mu);
    shared_.ready.push_back(ctx);
  }
  shared_.cv.notify_one();
}

boost::fibers::context* SharedScheduler::pick_next() noexcept {
  boost::fibers::context* ctx = nullptr;
  {
    std::lock_guard<std::mutex> lock(shared_.mu);
    if (!shared_.ready.empty()) {
      ctx = shared_.ready.front();
      shared_.ready.pop_front();
    }
  }
  if (ctx != nullptr) {
    boost::fibers::context::active()->attach(ctx);
  } else if (!pinned_.empty()) {
    ctx = pinned_.front();
    pinned_.pop_front();
  } else {
    return nullptr;
  }
  SPMD_LOG(kSim, trace, "runs {}{}", who(ctx, properties(ctx)),
           ctx->is_context(boost::fibers::type::pinned_context) ? " (pinned to this thread)" : " (from the shared queue)");
  prepare_switch(ctx);
  return ctx;
}

bool SharedScheduler::has_ready_fibers() const noexcept {
  std::lock_guard<std::mutex> lock(shared_.mu);
  return !shared_.ready.empty() || !pinned_.empty();
}

void SharedScheduler::suspend_until(std::chrono::steady_clock::time_point const& tp) noexcept {
  std::unique_lock<std::mutex> lock(shared_.mu);
  auto ready = [&] { return !shared_.ready.empty() || notified_; };
  if (tp == std::chrono::steady_clock::time_point::max()) {
    shared_.cv.wait(lock, ready);
  } else {
    shared_.cv.wait_until(lock, tp, ready);
  }
  notified_ = false;
}

void SharedScheduler::notify() noexcept {
  // A pinned fiber of this thread was woken from another thread: wake every
  // sleeper (a handful of threads) so this one re-checks its pinned queue.
  {
    std::lock_guard<std::mutex> lock(shared_.mu);
    notified_ = true;
  }
  shared_.cv.notify_all();
}

}  // namespace spmd::sim
