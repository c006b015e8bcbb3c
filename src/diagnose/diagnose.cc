#include "spmd/diagnose/diagnose.h"

#include <algorithm>
#include <filesystem>

#include "diagnose/flight_recorder_reader.h"
#include "diagnose/hang_analysis.h"
#include "diagnose/nccl_log_reader.h"
#include "spmd/error.h"
#include "spmd/util/json.h"
#include "util/input_file.h"
#include "util/log.h"
#include "util/output_file.h"

namespace spmd {

namespace {

using detail::Recording;

// A log of a long job can be large; a dump holds at most a few thousand entries.
constexpr std::size_t kMaxInputBytes = std::size_t{4} << 30;

// Directories stand for the regular files in them (not hidden ones), sorted by name.
std::vector<std::string> expand(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      files.push_back(p);  // read_input_bytes says what is wrong with it, if anything
      continue;
    }
    std::vector<std::string> inside;
    for (const fs::directory_entry& e : fs::directory_iterator(p, ec)) {
      const std::string name = e.path().filename().string();
      if (!name.starts_with(".") && e.is_regular_file(ec)) inside.push_back(e.path().string());
    }
    if (inside.empty()) {
      throw_invalid_argument("UsageError", "the directory '" + p + "' holds no files",
                             "give the directory the ranks' logs or flight-recorder dumps were written to");
    }
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

// A JSON object from (key, value) pairs, in order.
Json object(std::initializer_list<std::pair<const char*, Json>> members) {
  Json o = Json::object();
  for (const auto& [k, v] : members) o.set(k, v);
  return o;
}

Json timeline(const Recording& rec, const detail::HangVerdict& verdict) {
  Json events = Json::array();
  for (const detail::RankRecord& r : rec.ranks) {
    events.push(object({{"ph", "M"}, {"pid", 0}, {"tid", r.rank}, {"name", "thread_name"},
                        {"args", object({{"name", r.label}})}}));
    for (std::size_t k = 0; k < r.calls.size(); ++k) {
      const detail::CallRecord& c = r.calls[k];
      const bool done = verdict.done[static_cast<std::size_t>(r.rank)][k];
      Json args = object({{"communicator", rec.comms[static_cast<std::size_t>(c.comm)].name},
                          {"arguments", c.arguments()},
                          {"recorded", c.state},
                          {"recorded at", c.recorded_at},
                          {"replay", done ? "completed" : "blocked"}});
      if (!c.frames.empty()) args.set("frames", c.frames);
      // Time is the call's place in the rank's sequence (the logs carry no
      // common clock): the ranks' n-th calls line up.
      Json e = object({{"ph", "X"},
                       {"pid", 0},
                       {"tid", r.rank},
                       {"ts", static_cast<std::int64_t>(k) * 1000},
                       {"dur", 900},
                       {"name", c.op + " #" + std::to_string(c.seq)},
                       {"cat", done ? "completed" : "blocked"}});
      if (!done) e.set("cname", "terrible");
      e.set("args", std::move(args));
      events.push(std::move(e));
    }
  }
  return object({{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}});
}

}  // namespace

DiagnoseSummary diagnose_files(const std::vector<std::string>& paths, const DiagnoseOptions& options) {
  std::vector<detail::LogFile> logs;
  std::vector<detail::DumpFile> dumps;
  for (const std::string& path : expand(paths)) {
    std::string bytes = read_input_bytes(path, "log or dump", kMaxInputBytes);
    if (detail::looks_like_flight_recorder_dump(bytes)) {
      SPMD_LOG(kDiagnose, debug, "{}: a flight-recorder dump ({} bytes, {})", path, bytes.size(),
               static_cast<unsigned char>(bytes[0]) == 0x80 ? "pickle" : "JSON");
      dumps.push_back({path, std::move(bytes)});
    } else if (detail::looks_like_nccl_log(bytes)) {
      SPMD_LOG(kDiagnose, debug, "{}: an NCCL log ({} bytes)", path, bytes.size());
      logs.push_back({path, std::move(bytes)});
    } else {
      const bool spmd_trace = bytes.find("\"event\"") != std::string::npos && bytes.find("\"run_start\"") != std::string::npos;
      throw_invalid_argument(
          "UsageError",
          "'" + path + "' is neither an NCCL log (no 'NCCL INFO' line) nor a PyTorch flight-recorder dump",
          spmd_trace ? "this is a trace of 'spmd run --trace': give it to 'spmd replay'"
                     : "run the job with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL and give its output, or give the "
                       "files TORCH_NCCL_DUMP_ON_TIMEOUT=1 wrote (TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>)");
    }
  }
  if (!logs.empty() && !dumps.empty()) {
    throw_invalid_argument("UsageError",
                           "the inputs mix NCCL logs (" + logs.front().path + ") and flight-recorder dumps (" +
                               dumps.front().path + ")",
                           "diagnose one kind at a time: the dumps say more (states, Python frames) when you have them");
  }
  const Recording rec = dumps.empty() ? detail::read_nccl_logs(logs) : detail::read_flight_recorder_dumps(dumps);
  if (rec.ranks.empty()) {
    throw_invalid_argument("UsageError", "the inputs name no rank", "give every rank's log or dump of one job");
  }
  SPMD_LOG(kDiagnose, debug, "read {} ranks, {} communicators", rec.ranks.size(), rec.comms.size());
  detail::HangVerdict verdict = detail::analyse_recording(rec, options.repro);
  SPMD_LOG(kDiagnose, debug, "replayed {} calls, {} completed: {}", verdict.calls, verdict.completed,
           verdict.report.kind.empty() ? "ok" : verdict.report.kind);
  if (!options.timeline_path.empty()) {
    write_output_file(options.timeline_path, "timeline file", timeline(rec, verdict).dump(1));
  }
  if (verdict.report.kind == "Deadlock") throw DeadlockError(std::move(verdict.report));
  if (verdict.report.kind == "CollectiveMismatch") throw CollectiveMismatch(std::move(verdict.report));
  DiagnoseSummary s;
  s.source_kind = rec.source_kind;
  s.ranks = static_cast<int>(rec.ranks.size());
  s.communicators = static_cast<int>(rec.comms.size());
  s.calls = verdict.calls;
  s.cannot_tell = rec.cannot_tell;
  return s;
}

}  // namespace spmd
