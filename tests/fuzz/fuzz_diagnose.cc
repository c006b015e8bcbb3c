// libFuzzer target: the readers of `spmd diagnose` (NCCL INFO logs,
// flight-recorder dumps in pickle and JSON, the pickle reader under them)
// and the hang analysis they feed. The first byte chooses the reader; the
// rest is split at "\n@@\n" into up to 8 files (rank0.log.. or trace_0..).
// Every input ends with a recording analysed or an spmd::Error; an NCCL log
// that does not parse is a SyntaxError naming its file and line.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/flight_recorder_reader.h"
#include "diagnose/hang_analysis.h"
#include "diagnose/nccl_log_reader.h"
#include "fuzz_limits.h"
#include "spmd/error.h"
#include "spmd/util/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > spmd::fuzz::kMaxInputBytes) return 0;
  const bool dumps = (data[0] & 1) != 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> parts;
  for (std::size_t at; parts.size() < 7 && (at = rest.find("\n@@\n")) != std::string_view::npos;) {
    parts.emplace_back(rest.substr(0, at));
    rest.remove_prefix(at + 4);
  }
  parts.emplace_back(rest);
  try {
    spmd::detail::Recording rec;
    if (dumps) {
      std::vector<spmd::detail::DumpFile> files;
      for (std::size_t k = 0; k < parts.size(); ++k) files.push_back({"trace_" + std::to_string(k), parts[k]});
      rec = spmd::detail::read_flight_recorder_dumps(files);
    } else {
      std::vector<spmd::detail::LogFile> files;
      for (std::size_t k = 0; k < parts.size(); ++k) files.push_back({"rank" + std::to_string(k) + ".log", parts[k]});
      rec = spmd::detail::read_nccl_logs(files);
    }
    const spmd::detail::HangVerdict v = spmd::detail::analyse_recording(rec, "fuzz");
    (void)v.report.to_text();
    (void)v.report.to_json().dump();
  } catch (const spmd::Error& e) {
    const spmd::Report& r = e.report();
    if (!dumps && e.kind() == "SyntaxError" && !r.where.valid()) {
      std::fprintf(stderr, "fuzz_diagnose: an NCCL log SyntaxError without file:line\n%s\n", e.what());
      std::abort();
    }
    (void)r.to_text();
    (void)r.to_json().dump();
  }
  return 0;
}
