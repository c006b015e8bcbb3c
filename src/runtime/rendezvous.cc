#include "runtime/rendezvous.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "backend/backend.h"
#include "rendezvous/communicator.h"
#include "runtime/run_reports.h"
#include "rendezvous/unbound_axis.h"
#include "runtime/device_context.h"
#include "runtime/run.h"
#include "spmd/error.h"
#include "util/log.h"

namespace spmd::detail {

namespace {

[[noreturn]] void unbound_axis(const DeviceContext* ctx, const std::string& name, std::string_view op, SourceLoc loc) {
  if (ctx == nullptr) throw AxisNameError(unbound_axis_report(op, name, nullptr, loc));
  std::vector<std::string> bound;
  for (const auto& b : ctx->env) bound.push_back(b.name);
  Report r = unbound_axis_report(op, name, &bound, loc);
  r.device = ctx->device;
  throw AxisNameError(std::move(r));
}

// Where `name` is bound in the device's environment, -1 if nowhere. A nested
// pmap may bind a name its parent bound: the inner binding shadows the outer
// one, as in JAX's axis environment.
int innermost_binding(const DeviceContext& ctx, const std::string& name) {
  for (std::size_t i = ctx.env.size(); i-- > 0;) {
    if (ctx.env[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// Observers (trace, timeline) get the whole signature; off the hot path.
[[gnu::noinline]] void notify_enter(DeviceContext& ctx, const CollectiveSite& site, std::int64_t seq,
                                    const CollectiveSignature& sig) {
  RecentEvent ev{EventKind::kCollectiveEnter};
  ev.seq = seq;
  ev.op = collective_name(site.kind);
  ev.axes = site.axes.text();
  ev.types = site.types;
  ev.loc = site.loc;
  ctx.run.record_event(ctx, std::move(ev), &sig, /*keep_in_ring=*/false);
}

}  // namespace

std::uint64_t resolve_axes(const DeviceContext* ctx, const std::vector<std::string>& axes, std::string_view op,
                           SourceLoc loc) {
  if (axes.empty()) {
    Report r = make_report("AxisNameError", std::string(op) + ": no axis name given",
                           "name the mapped axis: " + std::string(op) + "(x, 'i') with pmap(..., axis_name='i')");
    r.where = loc;
    r.op = std::string(op);
    throw AxisNameError(std::move(r));
  }
  std::uint64_t mask = 0;
  for (const auto& name : axes) {
    if (ctx == nullptr) unbound_axis(ctx, name, op, loc);
    const int pos = innermost_binding(*ctx, name);
    if (pos < 0) unbound_axis(ctx, name, op, loc);
    std::uint64_t bit = std::uint64_t{1} << pos;
    if (mask & bit) {
      Report r = make_report("AxisNameError", std::string(op) + ": axis '" + name + "' is named twice",
                             "name each axis once: " + std::string(op) + "(x, ('i', 'j'))");
      r.where = loc;
      r.device = ctx->device;
      throw AxisNameError(std::move(r));
    }
    mask |= bit;
  }
  return mask;
}

AxisPosition axis_position(const DeviceContext& ctx, const std::vector<std::string>& axes) {
  AxisPosition p;
  for (const auto& name : axes) {
    const int pos = innermost_binding(ctx, name);
    if (pos < 0) continue;
    const AxisBinding& b = ctx.env[static_cast<std::size_t>(pos)];
    p.index = p.index * b.size + b.index;
    p.size *= b.size;
  }
  return p;
}

ResolvedAxes& resolve_axes_cached(DeviceContext& ctx, const std::vector<std::string>& axes, std::string_view op,
                                  SourceLoc loc) {
  for (ResolvedAxes& entry : ctx.axes_cache) {
    if (entry.names.names() == axes) return *(ctx.last_axes = &entry);
  }
  ResolvedAxes r;
  r.mask = resolve_axes(&ctx, axes, op, loc);
  r.names = AxisNames::intern(axes);
  r.position = axis_position(ctx, axes);
  return *(ctx.last_axes = &ctx.axes_cache.emplace_back(std::move(r)));
}

namespace {

// Under the lock: the communicator of `axes` and this device's slot in it.
Communicator& communicator_of(Run& run, DeviceContext& ctx, ResolvedAxes& axes) {
  if (axes.comm == nullptr) {
    axes.comm = &run.communicator(ctx, axes.mask);
    int slot = 0;
    for (int pos : axes.comm->reduced) {
      const AxisBinding& b = ctx.env[static_cast<std::size_t>(pos)];
      slot = slot * b.size + b.index;
    }
    axes.slot = slot;
  }
  return *axes.comm;
}

}  // namespace

std::vector<Array> run_collective(DeviceContext& ctx, const CollectiveSignature& sig, std::span<const Array> inputs) {
  ResolvedAxes& axes = ctx.resolve(sig.axes.names(), collective_name(sig.kind), sig.loc);
  return run_collective(ctx, axes, sig, inputs);
}

namespace {

// The rendezvous' cold paths live out of line, so the frame a device parks in
// stays small: at a thousand devices, every cache line of a parked device's
// stack is a miss when it resumes.

[[noreturn, gnu::noinline]] void stopped_on_arrival(DeviceContext& ctx, const Arrival& me) {
  ctx.note_stop("stopped on arrival at " + me.sig->op_and_axes() + " #" + std::to_string(me.seq), me.sig->loc);
  throw RunAborted{};
}

[[noreturn, gnu::noinline]] void stop_on_mismatch(Run& run, DeviceContext& ctx, Communicator& comm, const Arrival& me) {
  Report r = build_mismatch_report(comm, run.options().repro);
  comm.reset();
  ctx.note_stop("stopped at " + me.sig->op_and_axes() + " #" + std::to_string(me.seq) + " (collective mismatch)",
                 me.sig->loc);
  run.abort_locked(std::make_exception_ptr(CollectiveMismatch(std::move(r))));
  throw RunAborted{};
}

// Every process of a multi-process run reaches this collective with the
// same signature, in the same order (they run the same program with the
// same schedule), or the check throws a report naming the ranks.
void check_across_processes(Run& run, const DeviceContext& ctx, const CollectiveSignature& sig) {
  // One check at a time per process: ProcessGroup is not thread-safe, and on
  // the cuda backend devices are host threads, so two communicators (two
  // groups of a mesh) may complete at once.
  static std::mutex one_check_at_a_time;
  std::lock_guard<std::mutex> serial(one_check_at_a_time);
  dist::ProcessGroup& processes = *run.runtime().processes;
  std::vector<int> everyone(static_cast<std::size_t>(processes.world()));
  for (int r = 0; r < processes.world(); ++r) everyone[static_cast<std::size_t>(r)] = r;
  // What a report across processes compares: this device's decisions so far.
  processes.post_context(ctx.decisions.to_json().dump());
  processes.check_collective(sig, everyone);
}

// The last member arrived with a matching signature (lock held): check the
// other processes (if any), move the data and wake the others. Returns with
// `lock` released.
[[gnu::noinline]] void move_data_and_release(Run& run, DeviceContext& ctx, Communicator& comm,
                                             std::unique_lock<std::mutex>& lock) {
  CollectiveCall call;
  call.sig = comm.first->sig;
  // Members in the order of their index along the axes as the caller named
  // them (slots are in env order, which differs for a reordered tuple).
  call.members.resize(comm.slots.size());
  for (std::size_t p = 0; p < comm.slots.size(); ++p) {
    if (Arrival* a = comm.slots[p]) {
      call.members[static_cast<std::size_t>(a->index)] = {a->ctx,    a->inputs,          a->outputs,
                                                          a->ctx->device, &a->ctx->placement, a->seq};
    } else {
      // A member in another process (local devices: one top-level axis, so
      // the slot is the global device id).
      call.members[p] = {nullptr, {}, nullptr, static_cast<DeviceId>(p)};
    }
  }
  SPMD_LOG(kRendezvous, debug, "{} #{} complete: moving data, then releasing {} devices", call.sig->op_and_axes(),
           ctx.history_size() - 1, comm.size);
  comm.reset();
  // The members stay parked (counted as blocked) while the data moves.
  lock.unlock();
  try {
    if (run.runtime().processes) check_across_processes(run, ctx, *call.sig);
    if (run.options().collectives_move_data) {
      if (call.spans_processes()) {
        run.backend().execute_across_processes(call, *run.runtime().processes);
      } else {
        run.backend().execute(call);
      }
    }
  } catch (...) {
    lock.lock();
    run.abort_locked(std::current_exception());
    throw RunAborted{};
  }
  lock.lock();
  // Stopped while the data moved: abort_locked() woke the members already.
  if (run.aborted()) throw RunAborted{};
  for (const CollectiveMember& m : call.members) {
    if (!m.here()) continue;
    m.ctx->complete_collective();
    if (m.ctx != &ctx) run.release(*m.ctx);
  }
  lock.unlock();
}

[[gnu::noinline]] void notify_exit(Run& run, DeviceContext& ctx, const ResolvedAxes& axes, const Arrival& me) {
  RecentEvent ev{EventKind::kCollectiveExit};
  ev.seq = me.seq;
  ev.op = collective_name(me.sig->kind);
  ev.axes = axes.names.text();
  ev.loc = me.sig->loc;
  run.record_event(ctx, std::move(ev), me.sig, /*keep_in_ring=*/false);
}

}  // namespace

void run_collective(DeviceContext& ctx, ResolvedAxes& axes, const CollectiveSignature& sig,
                    std::span<const Array> inputs, std::vector<Array>* outputs) {
  Run& run = ctx.run;
  Arrival me;
  me.ctx = &ctx;
  me.sig = &sig;
  me.inputs = inputs;
  me.outputs = outputs;
  me.seq = ctx.history_size();
  me.index = axes.position.index;
  const CollectiveSite& site = ctx.intern_site(sig);
  if (run.has_observers()) notify_enter(ctx, site, me.seq, sig);
  ctx.record_collective(site);

  std::unique_lock<std::mutex> lock(run.mutex());
  if (run.aborted()) stopped_on_arrival(ctx, me);
  Communicator& comm = communicator_of(run, ctx, axes);
  comm.slots[static_cast<std::size_t>(axes.slot)] = &me;
  ++comm.arrived;
  SPMD_LOG(kRendezvous, debug, "{} arrives at {} #{} ({} of {})", ctx.label, sig.op_and_axes(), me.seq, comm.arrived,
           comm.size);
  if (comm.first == nullptr) {
    comm.first = &me;
  } else if (!(*comm.first->sig == sig)) {
    comm.mismatch = true;
  }

  if (comm.arrived < comm.size) {
    run.block(lock, ctx, DeviceState::kWaitingCollective, &me);  // returns unlocked
  } else if (comm.mismatch) {
    SPMD_LOG(kRendezvous, debug, "{} #{} complete with different signatures: mismatch", sig.op_and_axes(), me.seq);
    stop_on_mismatch(run, ctx, comm, me);
  } else if (sig.kind == CollectiveKind::kBarrier && run.runtime().processes == nullptr) {
    // No data to move: wake the members without letting go of the lock,
    // emptying the slots on the way (comm.reset() without a second pass).
    SPMD_LOG(kRendezvous, debug, "{} #{} complete: releasing {} devices", sig.op_and_axes(), me.seq, comm.size);
    for (Arrival*& slot : comm.slots) {
      Arrival* a = std::exchange(slot, nullptr);
      a->ctx->complete_collective();
      if (a != &me) run.release(*a->ctx);
    }
    comm.arrived = 0;
    comm.first = nullptr;
    lock.unlock();
  } else {
    move_data_and_release(run, ctx, comm, lock);
  }
  if (run.has_observers()) notify_exit(run, ctx, axes, me);
  if (run.has_pending_prints()) run.flush_prints(false);
}

}  // namespace spmd::detail
