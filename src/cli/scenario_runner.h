#pragma once
// `spmd run`: one scenario file from settings to a verdict, as a library so
// `spmd test` and the tests can call it in-process.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/scenario_header.h"
#include "spmd/report.h"
#include "spmd/util/json.h"

namespace spmd {
class Runtime;
}

namespace spmd::cli {

/// Signal handling: interrupts the Runtime of the scenario being run with
/// `reason` (Runtime::interrupt), and every Runtime run_scenario creates
/// afterwards, so an interrupt between two runs is not lost. Thread-safe.
void interrupt_scenarios(const std::string& reason);

enum class BreakpointMode { kAuto, kPrompt, kPrint };

struct RunSettings {
  std::string path;
  std::optional<std::string> source;     // the file's text once read (read once: a FIFO has no second reading)
  std::vector<std::string> program_args; // the program's sys.argv[1:] (after `--` on the command line)
  std::optional<int> devices;            // else the header's, else 8
  std::optional<int> threads;            // else the header's, else 1
  std::optional<std::uint64_t> seed;     // else the header's, else 0
  std::optional<std::uint64_t> max_steps;  // per device and for the host code; else the header's, else unlimited
  double max_seconds = 0;                // wall-clock budget per pmap run and for the host code (0 = none)
  std::string backend = "sim";
  double watchdog_seconds = 300;         // cuda backend: bound on any wait for GPU work (0 = none)
  std::size_t arena_capacity = std::size_t{16} << 30;
  std::size_t stack_size = std::size_t{1} << 20;
  std::string trace_path;
  std::string timeline_path;
  bool deterministic = false;
  bool strict = false;                   // --strict: warnings about the program (parameter drift) are errors
  bool explain = false;                  // --explain: each pmap's layout and collectives, on stderr and in JSON
  BreakpointMode breakpoints = BreakpointMode::kAuto;
  // Several processes (see process_launcher.h): their number, this one's
  // index (unset: `spmd run` launches them all), the directory they share.
  std::optional<int> num_processes;      // else the header's processes=, else 1
  std::optional<int> process_id;
  std::string store;
  std::optional<bool> process_local_devices;  // --process-devices local|all; else the header's, else all
};

struct RunOutcome {
  std::string file;
  std::string status = "ok";  // ok | exit | deadlock | mismatch | error | interrupted
  int exit_code = 0;          // "exit": the program's own sys.exit status, as python3 gives it
  std::string exit_call;      // "exit": e.g. "sys.exit(3)"
  std::optional<Report> report;       // the error, if any
  std::vector<DeviceStatus> devices;  // where each device of the last pmap run stands
  int pmap_runs = 0;
  int device_count = 0;               // jax.device_count() of the run
  int local_device_count = 0;         // jax.local_device_count(): fewer with local devices across processes
  std::string stdout_text;            // when captured
  Json explain;                       // --explain: one object per pmap run (null without it)

  Json to_json() const;
  /// "ok: 3 pmap runs on 8 devices" / "deadlock (exit 3)".
  std::string summary() const;
};

/// Where process `index` of `processes` writes a file the user named once
/// (--trace, --timeline): `path` itself for one process, else
/// "run.process1.jsonl" for "run.jsonl", so processes never share a file.
std::string path_for_process(const std::string& path, int processes, int index);

/// How `settings` (and the file's header, which they override) lay a run
/// out over processes.
struct ProcessLayout {
  int processes = 1;
  int devices = 8;             ///< of the whole job
  bool local_devices = false;  ///< each process runs devices / processes of them
};
ProcessLayout process_layout(const RunSettings& settings, const ScenarioHeader& header);
/// The same, reading the header from settings.path into settings.source
/// (an unreadable file counts as no header: running it then reports why).
ProcessLayout process_layout_for(RunSettings& settings);

/// The most a program file may hold.
inline constexpr std::size_t kMaxProgramBytes = std::size_t{64} << 20;

/// Runs `settings.path`. Program output (print, debug prints) goes to `out`,
/// warnings to `err`; breakpoint prompts read `in`. Never throws spmd::Error:
/// every failure is in the outcome.
RunOutcome run_scenario(const RunSettings& settings, std::ostream& out, std::ostream& err, std::istream& in);

}  // namespace spmd::cli
