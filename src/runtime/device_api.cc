// The device-side hooks of device.h, debug_print.h and breakpoint.h.

#include <atomic>
#include <iostream>
#include <sstream>

#include "backend/backend.h"
#include "runtime/device_context.h"
#include "runtime/run.h"
#include "spmd/debug/breakpoint.h"
#include "spmd/debug/debug_print.h"
#include "spmd/error.h"
#include "spmd/runtime/device.h"

namespace spmd {

using detail::current_context;
using detail::DeviceContext;

bool in_device() { return current_context() != nullptr; }

DeviceInfo current_device() {
  DeviceContext* ctx = current_context();
  if (ctx == nullptr) {
    throw_invalid_argument("InvalidArgument", "current_device() called on the host",
                           "only a function running inside pmap has a current device; check in_device() first");
  }
  return DeviceInfo{ctx->device, ctx->label, ctx->env, ctx->index_in_pmap, ctx->devices_in_pmap};
}

void set_current_location(SourceLoc loc) {
  if (DeviceContext* ctx = current_context()) ctx->current_loc = loc;
}

SourceLoc current_location() {
  if (DeviceContext* ctx = current_context()) return ctx->current_loc;
  return SourceLoc{};
}

void record_decision(std::string_view what, std::int64_t outcome, SourceLoc loc) {
  DeviceContext* ctx = current_context();
  if (ctx == nullptr) return;
  // Only changes of outcome reach the event ring and observers: a loop test
  // that stays true for 1000 iterations is one event, not 1000.
  if (ctx->decisions.record(what, loc, outcome)) {
    detail::RecentEvent ev{EventKind::kDecision};
    ev.op = std::string(what);
    ev.value = outcome;
    ev.loc = loc;
    ctx->run.record_event(*ctx, std::move(ev));
  }
}

namespace {

std::atomic<SafePointCheck> g_safe_point_check{nullptr};

// The budgets (and a front end's safe-point check) stop the run: with several
// OS threads two devices can spend theirs at once. The first to claim the run
// under its lock is blamed, the others stop like any device of an aborted run.
template <class StopError>
[[noreturn]] void stop_run(DeviceContext& ctx, Report r) {
  r.device = ctx.device;
  r.where = ctx.current_loc;
  StopError error(std::move(r));
  std::lock_guard<std::mutex> lock(ctx.run.mutex());
  if (ctx.run.aborted()) {
    ctx.note_stop("stopped while running", ctx.current_loc);
    throw detail::RunAborted{};
  }
  ctx.run.abort_locked(std::make_exception_ptr(error));
  throw error;
}

}  // namespace

void count_steps(std::uint64_t n) {
  DeviceContext* ctx = current_context();
  if (ctx == nullptr) return;  // host code: its budget is the front end's (python/host_watch.h)
  detail::Run& run = ctx->run;
  std::uint64_t before = ctx->steps;
  ctx->steps += n;
  const RuntimeOptions& opts = run.options();
  if (opts.step_budget != 0 && ctx->steps > opts.step_budget) {
    Report r = make_report(
        "BudgetExceeded",
        ctx->label + " exceeded the step budget of " + std::to_string(opts.step_budget) + " interpreter steps",
        "a loop may never end on this device (a while_loop condition or trip count that depends on device "
        "data?); raise the budget (--max-steps) if the program is just long");
    stop_run<BudgetExceeded>(*ctx, std::move(r));
  }
  constexpr std::uint64_t kYieldEvery = 1024;
  if (before / kYieldEvery != ctx->steps / kYieldEvery) {
    run.backend().yield();  // fairness: a long loop must not starve the other devices
    if (run.aborted()) {
      std::lock_guard<std::mutex> lock(run.mutex());
      ctx->note_stop("stopped while running", ctx->current_loc);
      throw detail::RunAborted{};
    }
    if (opts.time_budget_s > 0 && run.now_us() > opts.time_budget_s * 1e6) {
      std::ostringstream budget;  // 0.5, not 0.500000
      budget << opts.time_budget_s;
      Report r = make_report("BudgetExceeded",
                             "the run exceeded its time budget of " + budget.str() + " s while " + ctx->label +
                                 " was running",
                             "a device may loop forever; raise the budget (--max-seconds) if the program is "
                             "just slow");
      stop_run<BudgetExceeded>(*ctx, std::move(r));
    }
    if (SafePointCheck check = g_safe_point_check.load(std::memory_order_acquire)) {
      if (std::optional<Report> stop = check()) stop_run<Error>(*ctx, std::move(*stop));
    }
  }
}

void set_safe_point_check(SafePointCheck check) { g_safe_point_check.store(check, std::memory_order_release); }

void debug_print(std::string text, SourceLoc loc) {
  DeviceContext* ctx = current_context();
  if (ctx == nullptr) {
    std::cout << text << '\n' << std::flush;
    return;
  }
  detail::RecentEvent ev{EventKind::kDebugPrint};
  ev.text = text.size() > 80 ? text.substr(0, 77) + "..." : text;
  ev.loc = loc;
  ctx->run.record_event(*ctx, std::move(ev));
  ctx->run.queue_print(*ctx, DebugPrint{ctx->device, ctx->label, std::move(text), loc, 0});
  ctx->run.flush_prints(false);
}

std::string DebugPrint::line() const {
  if (program_output) return text;
  return "[" + device_label + "] " + text + "\n";
}

void program_print(std::string text, SourceLoc loc) {
  DeviceContext* ctx = current_context();
  if (ctx == nullptr) {
    std::cout << text << std::flush;
    return;
  }
  DebugPrint p{ctx->device, ctx->label, std::move(text), loc, 0};
  p.program_output = true;
  ctx->run.queue_print(*ctx, std::move(p));
  ctx->run.flush_prints(false);
}

void breakpoint(std::vector<std::pair<std::string, Array>> values, SourceLoc loc) {
  DeviceContext* ctx = current_context();
  if (ctx == nullptr) {
    std::cout << "breakpoint at " << loc.to_string() << " (host)\n";
    for (const auto& [name, v] : values) std::cout << "  " << name << " = " << v.abstract_type() << "\n";
    std::cout << std::flush;
    return;
  }
  detail::Run& run = ctx->run;
  {
    detail::RecentEvent ev{EventKind::kBreakpoint};
    ev.loc = loc;
    run.record_event(*ctx, std::move(ev));
  }
  // Prints queued before the stop come out before the handler shows values.
  run.flush_prints(false);
  std::unique_lock<std::mutex> lock(run.mutex());
  ctx->hold_breakpoint(std::move(values), loc);
  run.block(lock, *ctx, detail::DeviceState::kAtBreakpoint);
}

}  // namespace spmd
