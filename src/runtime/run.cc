#include "runtime/run.h"

#include <algorithm>

#include "backend/backend.h"
#include "core/arena.h"
#include "rendezvous/communicator.h"
#include "runtime/run_reports.h"
#include "spmd/debug/breakpoint.h"
#include "spmd/error.h"
#include "util/log.h"

namespace spmd::detail {

std::shared_ptr<Arena> RuntimeState::arena(DeviceId device) {
  std::lock_guard<std::mutex> lock(arenas_mu);
  auto& slot = arenas[static_cast<std::size_t>(device)];
  if (!slot) slot = backend->make_arena(device, options.arena_capacity, "device " + std::to_string(device));
  return slot;
}

std::exception_ptr RuntimeState::interrupt_error_locked() const {
  Report r = make_report("Interrupted", interrupt_reason,
                         "the run was stopped from outside; the report shows where each device stood");
  return std::make_exception_ptr(Error(std::move(r)));
}

Run::Run(RuntimeState& runtime, RunInfo info)
    : runtime_(runtime), info_(std::move(info)), start_(std::chrono::steady_clock::now()) {}

Run::~Run() = default;

DeviceContext& Run::add_context(DeviceContext* parent, DeviceId device, std::vector<AxisBinding> env,
                                int index_in_pmap, int devices_in_pmap, int pmap_axes) {
  std::shared_ptr<Arena> arena = runtime_.arena(device);
  std::lock_guard<std::mutex> lock(mu_);
  int uid = static_cast<int>(contexts_.size());
  contexts_.push_back(std::make_unique<DeviceContext>(*this, parent, uid, device, std::move(env), index_in_pmap,
                                                      devices_in_pmap, pmap_axes, std::move(arena), runtime_.backend->make_parker()));
  DeviceContext& ctx = *contexts_.back();
  // Live from creation, not from the first instruction: otherwise a parent
  // parked for children that have not started yet would look deadlocked.
  ++live_;
  return ctx;
}

void Run::run_device(DeviceContext& ctx, const DeviceBody& body) {
  device_started(ctx);
  try {
    if (aborted()) throw RunAborted{};  // the run ended before this device began
    backend().enter_device(ctx);
    body(ctx);
    backend().leave_device(ctx);
    device_finished(ctx);
  } catch (...) {
    device_ended_with(ctx, std::current_exception());
  }
}

void Run::refuse_device(DeviceContext& ctx, std::exception_ptr error) {
  device_started(ctx);
  device_ended_with(ctx, std::move(error));
}

double Run::watchdog_seconds() const { return options().watchdog_s; }

std::vector<std::pair<DeviceId, std::string>> Run::device_lines(bool& busy) {
  std::vector<std::pair<DeviceId, std::string>> lines;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  busy = !lock.owns_lock();
  if (busy) return lines;
  for (const auto& c : contexts_) {
    std::string line = c->label + ": " + std::string(device_state_name(c->state()));
    if (const Arrival* at = c->waiting()) {
      line += " at " + at->sig->op_and_axes() + " #" + std::to_string(at->seq);
      if (at->sig->loc.valid()) line += " (" + at->sig->loc.to_string() + ")";
    }
    lines.emplace_back(c->device, std::move(line));
  }
  return lines;
}

void Run::device_started(DeviceContext& ctx) {
  SPMD_LOG(kRuntime, debug, "{} starts", ctx.label);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ctx.start();
  }
  record_event(ctx, RecentEvent{EventKind::kDeviceStart});
}

void Run::device_ended(DeviceContext& ctx) {
  // Lock held by the caller; ctx has taken its final state.
  --live_;
  if (ctx.parent != nullptr && ctx.parent->child_ended()) release(*ctx.parent);
}

void Run::device_finished(DeviceContext& ctx) {
  SPMD_LOG(kRuntime, debug, "{} finishes after {} collectives", ctx.label, ctx.collectives_done());
  record_event(ctx, RecentEvent{EventKind::kDeviceFinish});
  {
    std::unique_lock<std::mutex> lock(mu_);
    ctx.finish();
    device_ended(ctx);
    check_quiescence(lock);
  }
  flush_prints(false);
}

void Run::device_ended_with(DeviceContext& ctx, std::exception_ptr error) {
  bool aborted_here = false;
  try {
    std::rethrow_exception(error);
  } catch (const RunAborted&) {
    aborted_here = true;
  } catch (...) {
  }
  if (aborted_here) {
    std::lock_guard<std::mutex> lock(mu_);
    ctx.stop();
    device_ended(ctx);
    return;
  }
  DeviceFailure failure = attribute_failure(std::move(error), ctx);
  RecentEvent ev{EventKind::kError};
  ev.op = failure.raised.kind;
  ev.text = failure.raised.message;
  ev.loc = failure.raised.where;
  record_event(ctx, std::move(ev));
  std::lock_guard<std::mutex> lock(mu_);
  ctx.raise(std::move(failure.raised));
  device_ended(ctx);
  abort_locked(std::move(failure.error));
}

void Run::begin_nested(DeviceContext& parent, int children) {
  std::lock_guard<std::mutex> lock(mu_);
  parent.wait_for_children(children);
  ++blocked_;
}

void Run::end_nested(DeviceContext& parent) {
  std::lock_guard<std::mutex> lock(mu_);
  if (parent.state() == DeviceState::kWaitingChildren) {  // no child started (launch failed early)
    parent.wake();
    --blocked_;
  }
  if (aborted()) {
    parent.note_stop("stopped while in a nested pmap", parent.current_loc);
    throw RunAborted{};
  }
}

void Run::block(std::unique_lock<std::mutex>& lock, DeviceContext& ctx, DeviceState why, const Arrival* at) {
  if (aborted()) throw RunAborted{};
  ctx.begin_wait(why, at);
  ++blocked_;
  check_quiescence(lock);  // may release ctx (a breakpoint handler) or abort
  for (;;) {
    if (ctx.released()) {
      lock.unlock();
      return;
    }
    if (aborted()) {
      --blocked_;
      throw RunAborted{};
    }
    SPMD_LOG(kRuntime, debug, "{} parks ({} of {} live devices blocked)", ctx.label, blocked_, live_);
    ctx.parker().park(lock);  // returns unlocked
    SPMD_LOG(kRuntime, debug, "{} wakes", ctx.label);
    // Released: the releaser set the flag before waking us. Otherwise an
    // abort (or a spurious wake): decide under the lock.
    if (ctx.released()) return;
    lock.lock();
  }
}

void Run::abort_locked(std::exception_ptr error) {
  if (!error_) error_ = std::move(error);
  if (aborted_.exchange(true, std::memory_order_acq_rel)) return;
  for (auto& c : contexts_) {
    if (c->state() == DeviceState::kWaitingCollective || c->state() == DeviceState::kAtBreakpoint) {
      c->note_stop_while_parked();
      c->parker().unpark();
    }
  }
}

void Run::abort(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(mu_);
  abort_locked(std::move(error));
}

std::exception_ptr Run::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

Communicator& Run::communicator(DeviceContext& ctx, std::uint64_t mask) {
  // Key: the bound axes (name:size), which of them are reduced, and this
  // device's coordinates on the others.
  std::string key;
  std::vector<int> reduced;
  int size = 1;
  for (std::size_t i = 0; i < ctx.env.size(); ++i) {
    const AxisBinding& b = ctx.env[i];
    key += b.name + ":" + std::to_string(b.size);
    if (mask & (std::uint64_t{1} << i)) {
      key += "=*;";
      reduced.push_back(static_cast<int>(i));
      size *= b.size;
    } else {
      key += "=" + std::to_string(b.index) + ";";
    }
  }
  auto& slot = communicators_[key];
  if (!slot) {
    slot = std::make_unique<Communicator>();
    slot->key = key;
    slot->reduced = std::move(reduced);
    // With local devices, pmap runs only one-axis top-level maps (no meshes,
    // no nesting), so every group is the whole axis and its members here are
    // this process's devices.
    slot->size = runtime_.runs_all_devices() ? size : runtime_.local.count;
    slot->slots.assign(static_cast<std::size_t>(size), nullptr);
  }
  return *slot;
}

void Run::record_event(DeviceContext& ctx, RecentEvent e, const CollectiveSignature* sig, bool keep_in_ring) {
  if (has_observers()) {
    Event ev;
    ev.kind = e.kind;
    ev.device = ctx.device;
    ev.device_label = ctx.label;
    ev.uid = ctx.uid;
    ev.parent_uid = ctx.parent ? ctx.parent->uid : -1;
    if (e.kind == EventKind::kDeviceStart) ev.env = ctx.env;
    ev.seq = e.seq;
    ev.op = e.op;
    ev.value = e.value;
    ev.text = e.text;
    ev.loc = e.loc;
    ev.time_us = now_us();
    if (sig) {
      ev.axes = sig->axes.names();
      for (const auto& o : sig->operands) ev.operands.push_back(abstract_type(o.dtype, o.shape));
      ev.params = sig->params();
    } else if (!e.axes.empty()) {
      ev.axes.push_back(e.axes);
    }
    if (e.kind == EventKind::kError) {
      ev.error_kind = e.op;  // a device error's kind travels as the event's op (RecentEvent)
      ev.op.clear();
    }
    notify_observers(ev);
  }
  if (keep_in_ring) ctx.record_recent(std::move(e), options().recent_events);
}

void Run::notify_observers(const Event& e) {
  for (const auto& o : runtime_.options.observers) o->on_event(e);
}

double Run::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
}

void Run::queue_print(DeviceContext& ctx, DebugPrint p) {
  std::lock_guard<std::mutex> lock(mu_);
  p.epoch = ctx.collectives_done();
  prints_.push(std::move(p), ctx.uid);
  pending_prints_.fetch_add(1, std::memory_order_release);
}

void Run::flush_prints(bool everything) {
  std::lock_guard<std::mutex> print_lock(print_mu_);
  std::vector<DebugPrint> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (prints_.empty()) return;
    if (everything) {
      ready = prints_.take_all();
    } else {
      std::int64_t watermark = INT64_MAX;
      for (const auto& c : contexts_) {
        if (!c->ended()) watermark = std::min(watermark, c->collectives_done());
      }
      ready = prints_.take_before(watermark);
    }
    pending_prints_.fetch_sub(ready.size(), std::memory_order_release);
  }
  for (const auto& p : ready) runtime_.options.print_sink(p);
}

std::vector<DeviceStatus> Run::device_statuses() const { return describe_devices(contexts_); }

Divergence Run::divergence(const std::vector<DeviceContext*>& devices) const { return find_divergence(devices); }

void Run::check_quiescence(std::unique_lock<std::mutex>& lock) {
  if (aborted() || live_ == 0 || blocked_ < live_) return;
  bool any_breakpoint = std::any_of(contexts_.begin(), contexts_.end(),
                                    [](const auto& c) { return c->state() == DeviceState::kAtBreakpoint; });
  if (any_breakpoint) {
    fire_breakpoints(lock);
    return;
  }
  report_deadlock();
}

void Run::fire_breakpoints(std::unique_lock<std::mutex>& lock) {
  std::vector<BreakpointStop> stops;
  std::vector<DeviceContext*> stopped;
  {
    // The handler inspects every device's values from one place: give it
    // host copies, so reading them is not a cross-device access.
    PlacementScope host(nullptr);
    for (auto& c : contexts_) {
      if (c->state() != DeviceState::kAtBreakpoint) continue;
      BreakpointStop stop{c->device, c->label, c->breakpoint_loc(), {}};
      for (const auto& [name, v] : c->breakpoint_values()) {
        Array host_copy = v;
        if (v.valid()) {
          host_copy = v.memory_kind() == MemoryKind::kHost ? Array::from_raw(v.raw_data(), v.shape(), v.dtype())
                                                           : v.to_host();
          host_copy = host_copy.with_weak_type(v.weak_type());
        }
        stop.values.emplace_back(name, std::move(host_copy));
      }
      stops.push_back(std::move(stop));
      stopped.push_back(c.get());
    }
  }
  // Every live device is parked: nothing can change while the handler runs.
  lock.unlock();
  std::exception_ptr failure;
  try {
    runtime_.options.breakpoint_handler(stops);
  } catch (...) {
    failure = std::current_exception();
  }
  stops.clear();
  lock.lock();
  if (failure) {
    abort_locked(failure);
    return;
  }
  for (DeviceContext* c : stopped) release(*c);
}

void Run::report_deadlock() {
  SPMD_LOG(kRuntime, info, "all {} live devices are blocked and no collective can complete: deadlock", live_);
  std::vector<const Communicator*> comms;
  for (const auto& [key, comm] : communicators_) {
    if (comm->arrived > 0) comms.push_back(comm.get());
  }
  Report report = build_deadlock_report(contexts_, comms, runtime_.options.repro);
  bool mismatch = report.kind == "CollectiveMismatch";
  std::exception_ptr e = mismatch ? std::make_exception_ptr(CollectiveMismatch(std::move(report)))
                                  : std::make_exception_ptr(DeadlockError(std::move(report)));
  abort_locked(e);
}

void Run::finalize_error_report() {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_) complete_run_report(error_, contexts_, runtime_.options.repro);
}

Run* current_run() noexcept {
  DeviceContext* ctx = current_context();
  return ctx ? &ctx->run : nullptr;
}

}  // namespace spmd::detail
