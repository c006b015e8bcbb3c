#include "backend/sim/sim_backend.h"

#include <boost/fiber/all.hpp>

#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "backend/sim/fiber_scheduler.h"
#include "backend/sim/stack_guard.h"
#include "backend/sim/stack_pool.h"
#include "dataplane/data_plane.h"
#include "dataplane/device_plane.h"
#include "dist/store_transport.h"
#include "core/arena.h"
#include "util/tsan_annotations.h"

namespace spmd::sim {

namespace {

/// A lockable whose unlock() releases a held lock and whose lock() does nothing.
struct ReleaseOnly {
  std::unique_lock<std::mutex>& held;
  void unlock() { held.unlock(); }
  void lock() {}
};

class alignas(64) FiberParker final : public detail::Parker {
 public:
  // The fiber condition variable releases the run's mutex atomically with
  // queueing this fiber, and its "relock" is a no-op: a woken device reads
  // its own released flag and needs the mutex only when it was not released,
  // which saves a lock round trip per device per collective.
  void park(std::unique_lock<std::mutex>& lock) override {
    ReleaseOnly release{lock};
    cv_.wait(release);
  }
  void unpark() override { cv_.notify_one(); }

 private:
  boost::fibers::condition_variable_any cv_;
};

// One OS thread runs every fiber: parking is the bare fiber suspend and
// resume, which is most of what a rendezvous costs at scale (no condition
// variable's wait queue, spinlock or status word). Releasing the mutex before
// suspending is safe here because no other fiber can run in between. The one
// waker from another OS thread, an interrupt aborting the run, goes through
// Boost's remote-ready queue, which this thread drains only after the waiter
// has switched away.
class alignas(64) SingleThreadParker final : public detail::Parker {
 public:
  void park(std::unique_lock<std::mutex>& lock) override {
    // Always the same device fiber on the same thread: look them up once.
    if (self_ == nullptr) {
      self_ = boost::fibers::context::active();
      owner_ = std::this_thread::get_id();
    }
    waiter_ = self_;
    lock.unlock();
    self_->suspend();
  }
  void unpark() override {
    // Called under the run's mutex, which the parked device took to register.
    // Straight to the waiter's scheduler: context::active()->schedule() would
    // look up the thread's context (a TLS call) once per woken device.
    boost::fibers::context* w = std::exchange(waiter_, nullptr);
    if (w == nullptr) return;
    if (std::this_thread::get_id() == owner_) {
      w->get_scheduler()->schedule(w);
    } else {
      w->get_scheduler()->schedule_from_remote(w);
    }
  }

 private:
  boost::fibers::context* self_ = nullptr;    // the device's fiber
  boost::fibers::context* waiter_ = nullptr;  // self_ while parked
  std::thread::id owner_;                     // the thread running the fibers
};

// The body of every device fiber: its placement, then the runtime's lifecycle.
void device_main(detail::DeviceContext& ctx, const detail::DeviceBody& body) {
  detail::Placement& placement = detail::placement_of(ctx);
  stack_guard::note_device(placement.device);
  boost::this_fiber::properties<DeviceProps>().placement = &placement;
  detail::set_current_placement(&placement);
  body(ctx);
  detail::tsan_release(&body);  // paired with the acquire after the joins in run_fibers
}

}  // namespace

// `count` threads that wait for runs, for --threads 2 and more (one thread
// runs the devices on the caller's). Each run hands every thread a body
// (thread 0 runs the devices, the others help until it is done) and returns
// when all are back, so between runs no fiber exists on any of them. Runs
// are one at a time. A pool inherited through fork() has no threads in the
// child: the child makes its own.
class SimBackend::FiberThreads {
 public:
  explicit FiberThreads(int count) : owner_(::getpid()) {
    threads_.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) threads_.emplace_back([this, i] { serve(i); });
  }
  ~FiberThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  FiberThreads(const FiberThreads&) = delete;
  FiberThreads& operator=(const FiberThreads&) = delete;

  bool usable_here() const { return ::getpid() == owner_; }

  /// Runs `body(i)` on thread i, for every thread; returns when all returned.
  void run(const std::function<void(int)>& body) {
    std::unique_lock<std::mutex> one_run(run_mu_);
    std::unique_lock<std::mutex> lock(mu_);
    body_ = &body;
    running_ = static_cast<int>(threads_.size());
    ++generation_;
    wake_.notify_all();
    back_.wait(lock, [&] { return running_ == 0; });
    body_ = nullptr;
  }

 private:
  void serve(int index) {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* body = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        body = body_;
      }
      (*body)(index);
      std::lock_guard<std::mutex> lock(mu_);
      if (--running_ == 0) back_.notify_all();
    }
  }

  const pid_t owner_;
  std::mutex run_mu_;  // one run at a time
  std::mutex mu_;
  std::condition_variable wake_;  // a run, or stop
  std::condition_variable back_;  // every thread is back
  const std::function<void(int)>* body_ = nullptr;
  std::uint64_t generation_ = 0;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

SimBackend::SimBackend(int devices, int threads, std::uint64_t seed, std::size_t stack_size,
                       detail::LocalDevices local)
    : devices_(devices),
      threads_(std::max(1, threads)),
      seed_(seed),
      stack_size_(stack_size),
      local_(local.count == 0 ? detail::LocalDevices{0, devices} : local) {}

SimBackend::~SimBackend() {
  // Forked with the pool: its threads are not in this process to be joined.
  if (threads_pool_ && !threads_pool_->usable_here()) static_cast<void>(threads_pool_.release());
}

std::shared_ptr<detail::Arena> SimBackend::make_arena(DeviceId device, std::size_t capacity, std::string label) {
  return std::make_shared<detail::Arena>(device, capacity, std::move(label));
}

std::unique_ptr<detail::Parker> SimBackend::make_parker() {
  if (threads_ == 1) return std::make_unique<SingleThreadParker>();
  return std::make_unique<FiberParker>();
}

void SimBackend::yield() { boost::this_fiber::yield(); }

void SimBackend::execute(detail::CollectiveCall& call) { detail::execute_on_host(call); }

void SimBackend::execute_across_processes(detail::CollectiveCall& call, dist::ProcessGroup& processes) {
  // The device data plane over host memory: the same layout work the cuda
  // backend does, with the store moving the bytes between processes.
  if (!across_processes_) across_processes_ = std::make_unique<dist::StoreTransport>(processes, local_.count);
  detail::execute_with_transport(call, *across_processes_);
}

void SimBackend::launch(detail::LaunchedRun&, std::span<detail::DeviceContext* const> devices,
                        const detail::DeviceBody& body) {
  if (detail::current_placement()->context != nullptr) {  // launched from a device: a nested pmap
    run_fibers(devices, body);  // nested: on the scheduler already running
  } else {
    launch_top_level(devices, body);
  }
}

void SimBackend::run_fibers(std::span<detail::DeviceContext* const> devices, const detail::DeviceBody& body) {
  std::vector<boost::fibers::fiber> fibers;
  fibers.reserve(devices.size());
  for (detail::DeviceContext* ctx : devices) {
    fibers.emplace_back(boost::fibers::launch::post, std::allocator_arg, PooledStack(stacks_),
                        [ctx, &body] { device_main(*ctx, body); });
  }
  for (auto& f : fibers) f.join();
  // Boost's join of a fiber that already ended on another thread synchronizes
  // inside uninstrumented Boost code only: tell ThreadSanitizer that everything
  // the devices did happens before the caller goes on (and frees `body`).
  detail::tsan_acquire(&body);
}

void SimBackend::launch_top_level(std::span<detail::DeviceContext* const> devices, const detail::DeviceBody& body) {
  // The stacks of the last run serve the next: their touched pages are
  // already mapped, where fresh stacks page-fault on every fiber's first
  // frames (a VM's faults made that most of a small pmap's cost).
  if (!stacks_) stacks_ = std::make_shared<StackPool>(stack_size_);
  // Fresh scheduling per run on each thread: runs do not inherit
  // scheduling state, and a single-threaded run is reproducible.
  SharedQueue shared;
  std::mutex done_mu;
  boost::fibers::condition_variable_any done_cv;  // fiber-aware: helpers keep scheduling while they wait
  bool done = false;
  std::exception_ptr launch_error;
  // Each thread's algorithm lives until every thread is back, not just until
  // its own thread leaves it: Boost wakes a fiber of another thread by
  // queueing it there and then calling that thread's algorithm's notify(),
  // and the woken thread may run the fiber, finish and drop its algorithm in
  // between (a use after free ASan caught in "spmd test --threads 4").
  std::vector<boost::intrusive_ptr<DeviceAlgorithm>> algorithms(static_cast<std::size_t>(threads_));

  auto install = [&](int index) {
    auto& algorithm = algorithms[static_cast<std::size_t>(index)];
    if (threads_ == 1) {
      algorithm = new SeededScheduler(seed_);
    } else {
      algorithm = new SharedScheduler(shared);
    }
    boost::fibers::context::active()->get_scheduler()->set_algo(algorithm);
  };
  const std::function<void(int)> body_of_thread = [&](int index) {
    stack_guard::prepare_thread();
    install(index);
    if (index == 0) {
      try {
        run_fibers(devices, body);
      } catch (...) {
        launch_error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(done_mu);
        done = true;
      }
      done_cv.notify_all();
    } else {
      std::unique_lock<std::mutex> lock(done_mu);
      done_cv.wait(lock, [&] { return done; });
    }
    // Back to Boost's own scheduling: the thread must not keep an algorithm
    // over this run's queue, which ends with the run (Boost's scheduler uses
    // it again when the thread exits).
    boost::fibers::use_scheduling_algorithm<boost::fibers::algo::round_robin>();
    algorithms[static_cast<std::size_t>(index)]->leave_thread();
  };
  if (threads_ == 1) {
    // One thread: the devices run on the calling thread itself. Handing each
    // run to a pool thread and back cost two futex wake-ups across cores per
    // pmap call, 120-300 us on the 2-core VM: most of a small pmap's time.
    // The thread's own fiber is the host again afterwards; its placement
    // comes back as it was.
    detail::PlacementScope caller(detail::current_placement());
    body_of_thread(0);
  } else {
    if (threads_pool_ && !threads_pool_->usable_here()) static_cast<void>(threads_pool_.release());
    if (!threads_pool_) threads_pool_ = std::make_unique<FiberThreads>(threads_);
    threads_pool_->run(body_of_thread);
  }
  // A run of many devices gives its stacks back rather than keep their pages.
  if (stacks_->stacks_created() > kStacksKeptBetweenRuns) stacks_.reset();
  if (launch_error) std::rethrow_exception(launch_error);
}

}  // namespace spmd::sim
