#include "rendezvous/rendezvous.h"

#include <algorithm>

#include "backend/backend.h"
#include "rendezvous/communicator.h"
#include "rendezvous/run_reports.h"
#include "runtime/device_context.h"
#include "runtime/run.h"
#include "spmd/error.h"
#include "util/edit_distance.h"

namespace spmd::detail {

namespace {

[[noreturn]] void unbound_axis(const DeviceContext* ctx, const std::string& name, std::string_view op, SourceLoc loc) {
  Report r;
  r.kind = "AxisNameError";
  r.op = std::string(op);
  r.axis = "'" + name + "'";
  r.where = loc;
  if (ctx == nullptr) {
    r.message = std::string(op) + ": unbound axis name: '" + name + "' (called outside any pmap-ed function)";
    r.hint = "collectives only work inside a function mapped with pmap(..., axis_name='" + name +
             "'); on the host no axis is bound";
    throw AxisNameError(std::move(r));
  }
  r.device = ctx->device;
  std::string bound;
  const AxisBinding* closest = nullptr;
  std::size_t best = SIZE_MAX;
  for (const auto& b : ctx->env) {
    bound += (bound.empty() ? "'" : ", '") + b.name + "'";
    std::size_t d = edit_distance(name, b.name);
    if (d < best) {
      best = d;
      closest = &b;
    }
  }
  r.message = std::string(op) + ": unbound axis name: '" + name + "'. The bound axis names are: " +
              (bound.empty() ? "(none: pmap was called without axis_name)" : bound);
  if (bound.empty()) {
    r.hint = "give the pmap an axis name: pmap(f, axis_name='" + name + "')";
  } else if (closest && best <= std::max<std::size_t>(2, name.size() / 3)) {
    r.hint = "did you mean '" + closest->name + "'? The name must match pmap(..., axis_name='" + closest->name +
             "') exactly";
  } else {
    r.hint = "use one of the names given to pmap(..., axis_name=...): " + bound;
  }
  throw AxisNameError(std::move(r));
}

// Observers (trace, timeline) get the whole signature; off the hot path.
[[gnu::noinline]] void notify_enter(DeviceContext& ctx, const CollectiveSite& site, std::int64_t seq,
                                    const CollectiveSignature& sig) {
  RecentEvent ev{EventKind::kCollectiveEnter};
  ev.seq = seq;
  ev.op = collective_name(site.kind);
  ev.axes = *site.axes;
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
    auto it = std::find_if(ctx->env.begin(), ctx->env.end(), [&](const AxisBinding& b) { return b.name == name; });
    if (it == ctx->env.end()) unbound_axis(ctx, name, op, loc);
    std::uint64_t bit = std::uint64_t{1} << (it - ctx->env.begin());
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
    for (const auto& b : ctx.env) {
      if (b.name == name) {
        p.index = p.index * b.size + b.index;
        p.size *= b.size;
      }
    }
  }
  return p;
}

const ResolvedAxes& resolve_axes_cached(DeviceContext& ctx, const std::vector<std::string>& axes, std::string_view op,
                                        SourceLoc loc) {
  // A call names the same axes as the one before, almost always.
  if (ctx.last_axes != nullptr && ctx.last_axes->first == axes) return ctx.last_axes->second;
  for (const auto& entry : ctx.axes_cache) {
    if (entry.first == axes) {
      ctx.last_axes = &entry;
      return entry.second;
    }
  }
  ResolvedAxes r;
  r.mask = resolve_axes(&ctx, axes, op, loc);
  r.position = axis_position(ctx, axes);
  r.text = AxisSet(axes).to_string();
  ctx.last_axes = &ctx.axes_cache.emplace_back(axes, std::move(r));
  return ctx.last_axes->second;
}

std::vector<Array> run_collective(DeviceContext& ctx, CollectiveSignature sig, std::span<const Array> inputs) {
  Run& run = ctx.run;
  const ResolvedAxes& axes = resolve_axes_cached(ctx, sig.axes, collective_name(sig.kind), sig.loc);

  Arrival me;
  me.ctx = &ctx;
  me.inputs = inputs;
  me.seq = ctx.history_size();
  const CollectiveSite& site = ctx.intern_site(sig, axes.text);
  if (run.has_observers()) notify_enter(ctx, site, me.seq, sig);
  ctx.record_collective(site, run.options().recent_events);
  me.sig = std::move(sig);

  std::unique_lock<std::mutex> lock(run.mutex());
  if (run.aborted()) {
    ctx.end_detail = "stopped on arrival at " + me.sig.op_and_axes() + " #" + std::to_string(me.seq);
    ctx.end_loc = me.sig.loc;
    throw RunAborted{};
  }
  Communicator& comm = run.communicator(ctx, axes.mask);
  int slot = 0;
  for (int pos : comm.reduced) slot = slot * ctx.env[static_cast<std::size_t>(pos)].size + ctx.env[static_cast<std::size_t>(pos)].index;
  comm.slots[static_cast<std::size_t>(slot)] = &me;
  ++comm.arrived;
  if (comm.first == nullptr) {
    comm.first = &me;
  } else if (!(comm.first->sig == me.sig)) {
    comm.mismatch = true;
  }

  if (comm.arrived < comm.size) {
    ctx.waiting = &me;  // cleared by Run::release()
    run.block(lock, ctx, DeviceState::kWaitingCollective);  // returns unlocked
  } else {
    if (comm.mismatch) {
      Report r = build_mismatch_report(comm, run.options().repro);
      comm.reset();
      ctx.end_detail = "stopped at " + me.sig.op_and_axes() + " #" + std::to_string(me.seq) + " (collective mismatch)";
      ctx.end_loc = me.sig.loc;
      run.abort_locked(std::make_exception_ptr(CollectiveMismatch(std::move(r))));
      throw RunAborted{};
    }
    CollectiveCall call;
    call.sig = &comm.first->sig;
    std::vector<Arrival*> members(comm.slots.begin(), comm.slots.end());
    if (call.sig->kind != CollectiveKind::kBarrier) {
      // Members in the order of their index along the axes as the caller named
      // them (slots are in env order, which differs for a reordered tuple).
      call.members.resize(members.size());
      for (Arrival* a : members) {
        int index = resolve_axes_cached(*a->ctx, call.sig->axes, collective_name(call.sig->kind), call.sig->loc).position.index;
        call.members[static_cast<std::size_t>(index)] = {a->ctx, a->inputs, &a->outputs};
      }
    }
    comm.reset();
    // The members stay parked (counted as blocked) while the data moves.
    lock.unlock();
    try {
      if (run.options().collectives_move_data) run.backend().execute(call);
    } catch (...) {
      lock.lock();
      run.abort_locked(std::current_exception());
      throw RunAborted{};
    }
    lock.lock();
    // Stopped while the data moved: abort_locked() woke the members already.
    if (run.aborted()) throw RunAborted{};
    for (Arrival* a : members) {
      ++a->ctx->collectives_done;
      if (a != &me) run.release(*a->ctx);
    }
    lock.unlock();
  }
  if (run.has_observers()) {
    RecentEvent ev{EventKind::kCollectiveExit};
    ev.seq = me.seq;
    ev.op = collective_name(me.sig.kind);
    ev.axes = axes.text;
    ev.loc = me.sig.loc;
    run.record_event(ctx, std::move(ev), &me.sig, /*keep_in_ring=*/false);
  }
  if (run.has_pending_prints()) run.flush_prints(false);
  return std::move(me.outputs);
}

}  // namespace spmd::detail
