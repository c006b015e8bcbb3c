#include "cli/scenario_runner.h"

#include <tbb/global_control.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <mutex>
#include <sstream>

#include "cli/breakpoint_prompt.h"
#include "cli/device_status_observer.h"
#include "cli/explain_observer.h"
#include "cli/scenario_header.h"
#include "python/embed/python_runner.h"
#include "spmd/debug/debug_print.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/runtime/runtime.h"
#include "spmd/trace/chrome_trace.h"
#include "spmd/trace/jsonl_trace.h"
#include "util/input_file.h"

namespace spmd::cli {

namespace {

// The Runtime of the scenario being run (null between runs) and the interrupt
// reason once there is one; the mutex keeps a Runtime alive while it is
// being interrupted.
struct ActiveRuntime {
  std::mutex mu;
  Runtime* rt = nullptr;
  std::string interrupt_reason;
};

ActiveRuntime& active() {
  // Never destroyed: the signal thread (detached) may still hold it while the
  // process exits.
  static ActiveRuntime* a = new ActiveRuntime;
  return *a;
}

bool interrupt_requested() {
  ActiveRuntime& a = active();
  std::lock_guard<std::mutex> lock(a.mu);
  return !a.interrupt_reason.empty();
}

void set_active_runtime(Runtime* rt) {
  ActiveRuntime& a = active();
  std::lock_guard<std::mutex> lock(a.mu);
  a.rt = rt;
  if (rt != nullptr && !a.interrupt_reason.empty()) rt->interrupt(a.interrupt_reason);
}

}  // namespace

void interrupt_scenarios(const std::string& reason) {
  ActiveRuntime& a = active();
  std::lock_guard<std::mutex> lock(a.mu);
  if (a.interrupt_reason.empty()) a.interrupt_reason = reason;
  if (a.rt != nullptr) a.rt->interrupt(a.interrupt_reason);
}

namespace {


std::string line_of(const std::string& text, std::uint32_t line) {
  std::istringstream in(text);
  std::string l;
  for (std::uint32_t i = 0; i < line && std::getline(in, l); ++i) {
  }
  return l;
}

std::string repro_for(const RunSettings& s, const RuntimeOptions& o) {
  std::string r = "spmd run " + s.path + " --devices " + std::to_string(o.devices) + " --threads " +
                  std::to_string(o.threads) + " --seed " + std::to_string(o.seed);
  if (o.backend != "sim") r += " --backend " + o.backend;
  if (o.process_count > 1) r += " --num-processes " + std::to_string(o.process_count);
  if (o.process_local_devices) r += " --process-devices local";
  if (o.threads > 1) r += "  (several threads: the schedule is not reproducible; use --threads 1)";
  return r;
}


}  // namespace

Json RunOutcome::to_json() const {
  Json j = Json::object();
  j.set("file", file);
  j.set("status", status);
  j.set("exit_code", exit_code);
  if (status == "exit") j.set("exit_call", exit_call);
  j.set("error_kind", report ? Json(report->kind) : Json());
  j.set("message", report ? Json(report->message) : Json());
  j.set("where", report ? loc_to_json(report->where) : Json());
  j.set("pmap_runs", pmap_runs);
  j.set("device_count", device_count);
  j.set("local_device_count", local_device_count > 0 ? local_device_count : device_count);
  Json ds = Json::array();
  for (const auto& d : devices) ds.push(device_status_to_json(d));
  j.set("devices", std::move(ds));
  j.set("report", report ? report->to_json() : Json());
  if (!explain.is_null()) j.set("explain", explain);
  j.set("stdout", stdout_text);
  return j;
}

std::string RunOutcome::summary() const {
  if (status == "ok") {
    return "ok: " + std::to_string(pmap_runs) + " pmap run" + (pmap_runs == 1 ? "" : "s") + " on " +
           std::to_string(device_count) + " virtual devices" +
           (local_device_count > 0 && local_device_count != device_count
                ? " (" + std::to_string(local_device_count) + " in this process)"
                : "");
  }
  if (status == "exit") {
    // The program's own status, as python3 gives it: told apart from
    // spmdsim's codes (2, 3, 4) by this line and by status "exit" in JSON.
    return "exit " + std::to_string(exit_code) + ": the program ended with " + exit_call + " after " +
           std::to_string(pmap_runs) + " pmap run" + (pmap_runs == 1 ? "" : "s");
  }
  return status + (report ? " (" + report->kind + ")" : "") + ", exit code " + std::to_string(exit_code);
}

std::string path_for_process(const std::string& path, int processes, int index) {
  if (processes <= 1) return path;
  const std::filesystem::path p(path);
  const std::string name = p.stem().string() + ".process" + std::to_string(index) + p.extension().string();
  return (p.parent_path() / name).string();
}

ProcessLayout process_layout(const RunSettings& settings, const ScenarioHeader& header) {
  ProcessLayout l;
  l.processes = settings.num_processes.value_or(header.processes.value_or(1));
  l.devices = settings.devices.value_or(header.devices.value_or(8));
  l.local_devices = l.processes > 1 && settings.process_local_devices.value_or(header.process_local_devices.value_or(false));
  return l;
}

ProcessLayout process_layout_for(RunSettings& settings) {
  ScenarioHeader header;
  try {
    if (!settings.source) settings.source = read_input_file(settings.path, "program file", kMaxProgramBytes);
    header = parse_scenario_header(*settings.source, settings.path);
  } catch (const Error&) {
    // Running the file reports why it cannot be read or parsed.
  }
  return process_layout(settings, header);
}

RunOutcome run_scenario(const RunSettings& settings, std::ostream& out, std::ostream& err, std::istream& in) {
  RunOutcome outcome;
  outcome.file = settings.path;
  std::string text;
  auto fail = [&](Error& e) {
    Report r = e.report();
    if (r.where.valid() && r.source_line.empty() && settings.path == r.where.file) {
      r.source_line = line_of(text, r.where.line);
    }
    // A report shows the devices of the run it happened in; an error outside
    // any run (host code, tracing) shows none, never an earlier run's. The
    // outcome keeps the latest run's statuses either way (--format json).
    outcome.exit_code = exit_code_for_kind(r.kind);
    outcome.status = status_for_kind(r.kind);
    if (!r.devices.empty()) outcome.devices = r.devices;
    outcome.report = std::move(r);
  };
  try {
    text = settings.source ? *settings.source : read_input_file(settings.path, "program file", kMaxProgramBytes);
    ScenarioHeader header = parse_scenario_header(text, settings.path);

    const ProcessLayout layout = process_layout(settings, header);
    RuntimeOptions opts;
    opts.devices = layout.devices;
    opts.threads = settings.threads.value_or(header.threads.value_or(1));
    // The whole program, host code too (jit, eager jnp before the first
    // pmap makes the Runtime), uses opts.threads cores.
    tbb::global_control cores(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(opts.threads));
    opts.seed = settings.seed.value_or(header.seed.value_or(0));
    opts.step_budget = settings.max_steps.value_or(header.max_steps.value_or(0));
    opts.time_budget_s = settings.max_seconds;
    opts.backend = settings.backend;
    opts.watchdog_s = settings.watchdog_seconds;
    opts.arena_capacity = settings.arena_capacity;
    opts.fiber_stack_size = settings.stack_size;
    opts.deterministic = settings.deterministic;
    opts.process_count = layout.processes;
    opts.process_index = settings.process_id.value_or(0);
    opts.process_store = settings.store;
    opts.process_local_devices = layout.local_devices;
    auto status = std::make_shared<DeviceStatusObserver>(opts.recent_events);
    opts.observers.push_back(status);
    std::shared_ptr<ExplainObserver> explain;
    if (settings.explain) {
      explain = std::make_shared<ExplainObserver>(&err);
      opts.observers.push_back(explain);
    }
    struct ExplainFacts {
      std::shared_ptr<ExplainObserver>& explain;
      RunOutcome& outcome;
      ~ExplainFacts() {
        if (explain) outcome.explain = explain->runs();
      }
    } explain_facts{explain, outcome};
    std::shared_ptr<JsonlTraceWriter> trace;
    std::shared_ptr<ChromeTraceWriter> timeline;
    if (!settings.trace_path.empty()) {
      trace = std::make_shared<JsonlTraceWriter>(
          path_for_process(settings.trace_path, opts.process_count, opts.process_index), settings.deterministic);
      opts.observers.push_back(trace);
    }
    if (!settings.timeline_path.empty()) {
      timeline = std::make_shared<ChromeTraceWriter>(
          path_for_process(settings.timeline_path, opts.process_count, opts.process_index));
      opts.observers.push_back(timeline);
    }
    // A trace or timeline that could not be written fails a run that was
    // ok; after a failed run, the run's report stays and the loss is said.
    struct WriteCheck {
      std::shared_ptr<JsonlTraceWriter>& trace;
      std::shared_ptr<ChromeTraceWriter>& timeline;
      RunOutcome& outcome;
      std::ostream& err;
      ~WriteCheck() {
        for (const std::string& e : {trace ? trace->write_error() : std::string(),
                                     timeline ? timeline->write_error() : std::string()}) {
          if (e.empty()) continue;
          if (outcome.status == "ok") {
            outcome.status = "error";
            outcome.exit_code = exit_code_for_kind("OutputError");
            outcome.report = make_report("OutputError", e, "the run itself ended ok; free space on the disk or write the file elsewhere");
          } else {
            err << "spmd: " << e << "\n";
          }
        }
      }
    } write_check{trace, timeline, outcome, err};
    opts.print_sink = [&out](const DebugPrint& p) { out << p.line() << std::flush; };
    bool interactive = settings.breakpoints == BreakpointMode::kPrompt ||
                       (settings.breakpoints == BreakpointMode::kAuto && &in == &std::cin && ::isatty(0));
    if (interactive) {
      opts.breakpoint_handler = [&in, &err](std::span<const BreakpointStop> s) {
        prompt_breakpoint(s, in, err, &in == &std::cin ? 0 : -1, [] { return interrupt_requested(); });
      };
    } else {
      opts.breakpoint_handler = [&out](std::span<const BreakpointStop> s) { print_breakpoint(s, out); };
    }
    // The Runtime is made when the program first needs it: a Python program
    // may set its device count itself (XLA_FLAGS, jax_num_cpu_devices) before
    // it asks for devices. --devices and the header's devices= win over it.
    const std::optional<int> fixed_devices = settings.devices ? settings.devices : header.devices;
    outcome.device_count = opts.devices;
    std::optional<Runtime> rt;
    struct Reset {
      ~Reset() {
        set_active_runtime(nullptr);
        set_default_runtime(nullptr);
      }
    } reset;
    auto make_runtime = [&](std::optional<int> program_devices) -> Runtime& {
      if (!rt) {
        if (program_devices && !fixed_devices) opts.devices = *program_devices;
        if (program_devices && fixed_devices && *program_devices != *fixed_devices) {
          err << "spmd: " << (settings.devices ? "--devices " : "the header's devices=") << *fixed_devices
              << " overrides the program's device count " << *program_devices << " (XLA_FLAGS or jax_num_cpu_devices)\n";
        }
        opts.repro = repro_for(settings, opts);
        rt.emplace(opts);
        outcome.device_count = opts.devices;
        outcome.local_device_count = rt->local_device_count();
        set_default_runtime(&*rt);
        set_active_runtime(&*rt);
      }
      return *rt;
    };
    try {
      // Several processes must all join the store at once: no lazy start there.
      if (opts.process_count > 1) make_runtime(std::nullopt);
      python::RunOptions po;
      po.out = &out;
      po.err = &err;
      po.runtime = make_runtime;
      po.interrupted = [] { return interrupt_requested(); };
      po.max_host_seconds = settings.max_seconds;
      po.strict = settings.strict || header.strict.value_or(false);
      po.argv = settings.program_args;
      const python::ProgramExit ended = python::run_program(settings.path, text, po);
      if (ended.status != 0) {
        outcome.status = "exit";
        outcome.exit_code = ended.status;
        outcome.exit_call = ended.call;
      }
      outcome.devices = status->statuses();
      outcome.pmap_runs = status->runs();
    } catch (Error& e) {
      outcome.pmap_runs = status->runs();
      outcome.devices = status->statuses();
      if (rt) rt->report_process_error(e);  // the other processes of a multi-process run stop too
      fail(e);
    }
  } catch (Error& e) {
    fail(e);
  }
  out << std::flush;
  return outcome;
}

}  // namespace spmd::cli
