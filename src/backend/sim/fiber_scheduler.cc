#include "backend/sim/fiber_scheduler.h"

namespace spmd::sim {


// --- SeededScheduler -------------------------------------------------------

void SeededScheduler::awakened(boost::fibers::context* ctx, DeviceProps&) noexcept { ready_.push_back(ctx); }

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
  detail::set_current_placement(properties(ctx).placement);
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

void SharedScheduler::awakened(boost::fibers::context* ctx, DeviceProps&) noexcept {
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
  detail::set_current_placement(properties(ctx).placement);
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
