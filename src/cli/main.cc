// spmd: run JAX-style pmap programs on simulated devices, test scenarios,
// replay traces.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <sstream>

#include "cli/json_stdout.h"
#include "cli/option_values.h"
#include "cli/process_launcher.h"
#include "cli/scenario_header.h"
#include "cli/scenario_runner.h"
#include "cli/signals.h"
#include "cli/test_command.h"
#include "spmd/config.h"
#include "spmd/diagnose/diagnose.h"
#include "spmd/error.h"
#include "spmd/log.h"
#include "spmd/runtime/runtime.h"
#include "spmd/trace/replay.h"

namespace {

using spmd::cli::RunSettings;

void add_run_options(CLI::App* cmd, RunSettings& s, std::string& arena, std::string& stack, bool with_outputs) {
  cmd->add_option("--devices", s.devices, "virtual devices (jax.device_count()); default: the file's '# spmd: devices=N', else 8")
      ->check(CLI::Range(1, spmd::cli::kMaxDevices));
  cmd->add_option("--threads", s.threads, "cores to use: OS threads the device fibers run on, and the threads a large kernel splits over; 1 (default) gives a reproducible schedule")
      ->check(CLI::Range(1, spmd::cli::kMaxThreads));
  cmd->add_option("--seed", s.seed, "schedule seed (with --threads 1): 0 runs ready devices in order, others shuffle reproducibly")
      ->check(spmd::cli::non_negative_integer());
  cmd->add_option("--max-steps", s.max_steps, "program steps (equations) each device may run before the run stops (BudgetExceeded)")
      ->check(CLI::Range(std::uint64_t{1}, ~std::uint64_t{0}));
  cmd->add_option("--max-seconds", s.max_seconds,
                  "wall-clock budget per pmap run, and separately for the code outside pmap, in seconds (0: none)")
      ->check(spmd::cli::seconds());
  cmd->add_option("--backend", s.backend, "sim (default) or cuda (when compiled in)");
  cmd->add_option("--watchdog-seconds", s.watchdog_seconds,
                  "cuda backend: seconds any wait for GPU work may take before the run stops with a report of "
                  "the op each device last entered (default 300; 0: no limit)")
      ->check(spmd::cli::seconds());
  cmd->add_flag("--strict", s.strict,
                "turn warnings about the program into errors (exit 1): parameter drift, a replicated value that "
                "leaves a pmap different on each device");
  cmd->add_option("--arena-capacity", arena, "memory per virtual device, e.g. 16GiB (default), 512MiB");
  cmd->add_option("--stack-size", stack, "fiber stack per device, e.g. 1MiB (default)");
  if (with_outputs) {
    cmd->add_option("--trace", s.trace_path, "write every device's events as JSON lines (input of 'spmd replay')")
        ->check(spmd::cli::output_path());
    cmd->add_option("--timeline", s.timeline_path, "write a Chrome trace event file (chrome://tracing, Perfetto)")
        ->check(spmd::cli::output_path());
    cmd->add_flag("--deterministic", s.deterministic, "leave timestamps out of --trace so traces compare as text");
    cmd->add_flag("--explain", s.explain,
                  "for every pmap, print how its arguments were split or replicated, what each device returned "
                  "and which collectives the devices ran (also in --format json)");
  }
}

// Every subcommand takes --log-level (and SPMD_LOG_LEVEL): spmdsim's own logging.
void add_log_option(CLI::App* cmd, std::string& spec) {
  cmd->add_option("--log-level", spec,
                  "spmdsim's own log on stderr: off (default), error, warn, info, debug or trace, for every subsystem "
                  "or per subsystem (runtime, rendezvous, sim, cuda, dist, python, diagnose), e.g. "
                  "'rendezvous=debug,sim=trace'")
      ->envname("SPMD_LOG_LEVEL");
}

void apply_sizes(RunSettings& s, const std::string& arena, const std::string& stack) {
  constexpr double kKiB = 1024.0, kGiB = kKiB * kKiB * kKiB;
  if (!arena.empty()) s.arena_capacity = spmd::cli::parse_size("--arena-capacity", arena, 1, kGiB * kKiB * kKiB, "1B and 1048576GiB");
  if (!stack.empty()) s.stack_size = spmd::cli::parse_size("--stack-size", stack, 16 * kKiB, kGiB, "16KiB and 1GiB");
}

// An interrupted run exits with 128 + the signal: 130 (SIGINT), 143 (SIGTERM).
void apply_signal_exit_code(spmd::cli::RunOutcome& o) {
  if (int sig = spmd::cli::received_signal(); sig != 0 && o.status == "interrupted") o.exit_code = 128 + sig;
}

// `all_rows`: a report's long tables whole (--explain), not cut to their first rows.
void print_outcome(const spmd::cli::RunOutcome& o, const std::string& format, bool all_rows = false) {
  if (format == "json") {
    std::cout << o.to_json().dump(2) << std::endl;
    return;
  }
  if (o.report) {
    std::cerr << "\n" << o.report->to_text(all_rows) << std::flush;
  }
  // One write per line: the signal thread may print meanwhile, and a line
  // must not be split by its message.
  std::cerr << ("spmd: " + o.summary() + "\n") << std::flush;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// replay and diagnose: `check` returns the summary of a clean verdict (said
// on stderr) or throws the report; either way the outcome prints as `format`
// and its exit code is returned.
int report_verdict(const std::string& files, const std::string& format,
                   const std::function<std::string(spmd::cli::RunOutcome&)>& check) {
  spmd::cli::RunOutcome o;
  o.file = files;
  try {
    const std::string summary = check(o);
    if (format == "text") std::cerr << summary << std::flush;
  } catch (const spmd::Error& e) {
    o.report = e.report();
    o.exit_code = spmd::exit_code_for_kind(e.kind());
    o.status = spmd::status_for_kind(e.kind());
    o.devices = e.report().devices;
  }
  if (format == "json") {
    print_outcome(o, "json");
  } else if (o.report) {
    std::cerr << o.report->to_text() << std::flush;
  }
  return o.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  spmd::cli::install_signal_handling();
  CLI::App app{"spmd " SPMD_VERSION ": run JAX-style pmap programs on simulated devices and explain what goes wrong "
               "across them (deadlocks, collective mismatches, split errors, tracer errors)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("spmd ") + SPMD_VERSION);
  app.footer(
      "Exit codes: 0 ok, 1 program error, 2 usage or syntax error, 3 deadlock, 4 collective mismatch,\n"
      "130/143 interrupted. Examples:\n"
      "  spmd run scenarios/deadlock/skip_psum_under_cond.py\n"
      "  spmd test scenarios/ --junit results.xml\n"
      "  spmd run prog.py --trace run.jsonl && spmd replay run.jsonl\n"
      "  spmd diagnose /tmp/nccl_logs/          (a hung GPU job: NCCL_DEBUG=INFO logs or flight-recorder dumps)");

  RunSettings run_settings;
  std::string run_format = "text", run_arena, run_stack;
  auto* run = app.add_subcommand("run", "run a scenario: its output, then a report (text on stderr, or --format json)");
  run->add_option("file", run_settings.path, "the scenario (.py)")->required();
  run->add_option("args", run_settings.program_args,
                  "the program's own arguments (sys.argv[1:]), after --: spmd run train.py -- --lr 0.1");
  add_run_options(run, run_settings, run_arena, run_stack, true);
  run->add_option("--format", run_format, "text (default) or json: one JSON report on stdout, program output inside it")
      ->check(CLI::IsMember({"text", "json"}));
  std::string breakpoints = "auto";
  run->add_option("--breakpoints", breakpoints,
                  "what jax.debug.breakpoint() does: auto (prompt on a terminal, else print), prompt, print")
      ->check(CLI::IsMember({"auto", "prompt", "print"}));
  run->add_option("--num-processes", run_settings.num_processes,
                  "run as N processes (jax.process_count()) that check each collective against each other; "
                  "without --process-id, spmd starts all N here and marks their output [process r]")
      ->envname("SPMD_NUM_PROCESSES")
      ->check(CLI::Range(1, 4096));
  run->add_option("--process-id", run_settings.process_id,
                  "this process's rank, 0..N-1 (jax.process_index()): start one spmd per rank, e.g. one per host")
      ->envname("SPMD_PROCESS_ID")
      ->check(CLI::NonNegativeNumber);
  run->add_option_function<std::string>(
         "--process-devices",
         [&](const std::string& v) { run_settings.process_local_devices = v == "local"; },
         "with --num-processes: all (default) runs every device in every process; local gives each process its "
         "share, devices / N (jax.local_device_count()), and moves collective data between processes (NCCL on "
         "--backend cuda)")
      ->envname("SPMD_PROCESS_DEVICES")
      ->check(CLI::IsMember({"all", "local"}));
  run->add_option("--store", run_settings.store,
                  "directory the processes share (a fresh one per job; a shared mount across hosts); "
                  "default with the launcher: a new directory under /tmp")
      ->envname("SPMD_STORE");

  RunSettings test_settings;
  std::vector<std::string> test_paths;
  std::string junit, test_arena, test_stack;
  auto* test = app.add_subcommand(
      "test", "run scenarios and check the outcome their header declares ('# spmd: expect=ok|deadlock|mismatch|error:KIND')");
  test->add_option("paths", test_paths, "scenario files or directories")->required();
  test->add_option("--junit", junit, "also write a JUnit XML report")->check(spmd::cli::output_path());
  test_settings.max_seconds = spmd::cli::kDefaultTestSeconds;
  add_run_options(test, test_settings, test_arena, test_stack, false);
  test->get_option("--max-seconds")
      ->description("wall-clock budget per pmap run, and separately for the code outside pmap, in seconds "
                    "(default 60 under spmd test, so a scenario that loops forever fails; 0: none)");

  std::vector<std::string> trace_files;
  std::string replay_format = "text";
  int replay_devices = 1;
  auto* replay = app.add_subcommand(
      "replay", "replay a trace (from 'spmd run --trace', or a GPU run) through the rendezvous and report the verdict");
  replay->add_option("traces", trace_files,
                     "the .jsonl trace; or every process's trace of one run with local devices, replayed together")
      ->required();
  replay->add_option("--format", replay_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  replay->add_option("--devices", replay_devices, "minimum virtual devices (the trace's own count is used when larger)")
      ->check(CLI::Range(1, 1 << 20));

  std::vector<std::string> diagnose_files;
  std::string diagnose_format = "text", diagnose_timeline;
  auto* diagnose = app.add_subcommand(
      "diagnose",
      "explain a hung or failed GPU job from what it left: NCCL_DEBUG=INFO logs of its ranks, or PyTorch "
      "flight-recorder dumps (pickle or JSON); the verdict and report of a simulated run");
  diagnose->add_option("inputs", diagnose_files,
                       "the ranks' NCCL logs (one file of interleaved ranks, or one per rank) or flight-recorder dumps "
                       "(one per rank, named ...<rank>); a directory stands for the files in it")
      ->required();
  diagnose->add_option("--format", diagnose_format, "text or json")->check(CLI::IsMember({"text", "json"}));
  diagnose->add_option("--timeline", diagnose_timeline, "also write the ranks' calls as a Chrome trace (Perfetto)")
      ->check(spmd::cli::output_path());

  std::string log_spec;
  for (CLI::App* cmd : {run, test, replay, diagnose}) add_log_option(cmd, log_spec);

  if (argc > 1 && argv[1][0] != '-') {
    std::string cmd = argv[1];
    if (cmd != "run" && cmd != "test" && cmd != "replay" && cmd != "diagnose") {
      std::cerr << "spmd: unknown command '" << cmd
                << "'\n  hint: the commands are run, test, replay and diagnose; see 'spmd --help'\n";
      spmd::cli::mark_finished();
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      app.exit(e);
      spmd::cli::mark_finished();
      return 0;
    }
    std::cerr << "spmd: " << e.what() << "\n  hint: run 'spmd --help' (or 'spmd SUBCOMMAND --help') for the options\n";
    spmd::cli::mark_finished();
    return 2;
  }

  int code = 0;
  try {
    if (!log_spec.empty()) spmd::set_log_level(log_spec);
    const spmd::cli::ProcessLayout layout = *run ? spmd::cli::process_layout_for(run_settings) : spmd::cli::ProcessLayout{};
    const int processes = layout.processes;
    if (*run) {
      spmd::cli::check_distinct_outputs({{"the program", run_settings.path}},
                                        {{"--trace", run_settings.trace_path}, {"--timeline", run_settings.timeline_path}});
    }
    if (*run && processes > 1 && !run_settings.process_id) {
      if (run_format == "json") {
        throw CLI::ValidationError("--format", "json needs one process per command: start each with --process-id");
      }
      std::vector<std::string> args(argv, argv + argc);
      if (!run_settings.num_processes) {
        args.insert(std::find(args.begin(), args.end(), std::string("--")), {"--num-processes", std::to_string(processes)});
      }
      auto launched = spmd::cli::launch_processes(
          args, processes, run_settings.store, spmd::cli::marked_lines(std::cout, std::cerr),
          spmd::cli::gpus_for_launch(layout, run_settings.backend));
      std::string codes;
      for (std::size_t r = 0; r < launched.process_codes.size(); ++r) {
        codes += (r ? ", " : "") + std::to_string(launched.process_codes[r]);
      }
      std::cerr << "spmd: " << processes << " processes exited with [" << codes << "]"
                << (launched.store.empty() ? "" : " (store " + launched.store + ")") << std::endl;
      code = launched.exit_code;
    } else if (*run) {
      if (run_settings.process_id && *run_settings.process_id >= processes) {
        throw CLI::ValidationError("--process-id", std::to_string(*run_settings.process_id) +
                                                       " is not below --num-processes " + std::to_string(processes));
      }
      if (run_settings.process_id && processes > 1 && run_settings.store.empty()) {
        throw CLI::ValidationError("--store", "a process started with --process-id needs --store DIR (or SPMD_STORE): "
                                              "the directory every process of the job shares");
      }
      apply_sizes(run_settings, run_arena, run_stack);
      run_settings.breakpoints = breakpoints == "prompt"  ? spmd::cli::BreakpointMode::kPrompt
                                 : breakpoints == "print" ? spmd::cli::BreakpointMode::kPrint
                                                          : spmd::cli::BreakpointMode::kAuto;
      if (run_format == "json") {
        spmd::cli::JsonStdout json_stdout;  // the program's writes to descriptor 1 go to stderr meanwhile
        std::ostringstream out;
        auto o = spmd::cli::run_scenario(run_settings, out, std::cerr, std::cin);
        o.stdout_text = out.str();
        apply_signal_exit_code(o);
        json_stdout.document(o.to_json().dump(2));
        code = o.exit_code;
      } else {
        auto o = spmd::cli::run_scenario(run_settings, std::cout, std::cerr, std::cin);
        apply_signal_exit_code(o);
        print_outcome(o, "text", run_settings.explain);
        code = o.exit_code;
      }
    } else if (*test) {
      std::vector<spmd::cli::NamedPath> scenarios;
      for (const std::string& p : test_paths) scenarios.emplace_back("a scenario given to spmd test", p);
      spmd::cli::check_distinct_outputs(scenarios, {{"--junit", junit}});
      apply_sizes(test_settings, test_arena, test_stack);
      code = spmd::cli::run_tests(test_paths, test_settings, junit, std::cout);
    } else if (*replay) {
      spmd::RuntimeOptions opts;
      opts.devices = replay_devices;
      opts.repro = "spmd replay " + joined(trace_files);
      code = report_verdict(joined(trace_files), replay_format, [&](spmd::cli::RunOutcome& o) {
        spmd::ReplaySummary s = spmd::replay_trace_files(trace_files, opts);
        o.device_count = s.devices;
        std::string text = "spmd: replayed " + std::to_string(s.devices) + " devices and " +
                           std::to_string(s.collectives) + " collective arrivals: every collective matched, no deadlock";
        if (!s.recorded_status.empty()) {
          text += " (the recorded run ended: " + s.recorded_status +
                  (s.recorded_kind.empty() ? "" : " " + s.recorded_kind) + ")";
        }
        return text + "\n";
      });
    } else if (*diagnose) {
      std::vector<spmd::cli::NamedPath> logs;
      for (const std::string& p : diagnose_files) logs.emplace_back("an input of spmd diagnose", p);
      spmd::cli::check_distinct_outputs(logs, {{"--timeline", diagnose_timeline}});
      spmd::DiagnoseOptions opts;
      opts.timeline_path = diagnose_timeline;
      opts.repro = "spmd diagnose " + joined(diagnose_files);
      code = report_verdict(joined(diagnose_files), diagnose_format, [&](spmd::cli::RunOutcome& o) {
        const spmd::DiagnoseSummary s = spmd::diagnose_files(diagnose_files, opts);
        o.device_count = s.ranks;
        std::string text = "spmd: read " + std::to_string(s.ranks) + " ranks' " + s.source_kind + "s: " +
                           std::to_string(s.communicators) +
                           (s.communicators == 1 ? " communicator, " : " communicators, ") + std::to_string(s.calls) +
                           " calls; every rank completed the same calls on each communicator: no hang, no mismatch\n";
        for (const std::string& l : s.cannot_tell) text += "  the input cannot tell: " + l + "\n";
        return text;
      });
    }
  } catch (const CLI::ValidationError& e) {
    std::cerr << "spmd: " << e.what() << "\n";
    code = 2;
  } catch (const spmd::Error& e) {
    std::cerr << e.report().to_text();
    code = spmd::exit_code_for_kind(e.kind());
  }
  // `spmd test` stopped by a signal: 128 + the signal as well. (`spmd run`
  // decided above: a signal that came while a deadlock report was being
  // written leaves that report's exit code, the one it states.)
  if (int sig = spmd::cli::received_signal(); *test && sig != 0 && code != 0) code = 128 + sig;
  // The program's output, or the JSON report, that did not reach stdout (a
  // full disk, a closed pipe) is a failed run, whatever its verdict was.
  // (The stream keeps no errno: the failed write may be long past.)
  std::cout << std::flush;
  if (!std::cout) {
    std::cerr << "spmd: could not write everything to stdout (a full disk, or a closed pipe?): the program's output "
                 "or the report is incomplete"
              << std::endl;
    if (code == 0) code = 1;
  }
  spmd::cli::mark_finished();
  return code;
}
