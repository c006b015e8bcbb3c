#include "spmd/trace/jsonl_trace.h"

#include <cerrno>

#include "spmd/error.h"
#include "spmd/report.h"
#include "spmd/util/json.h"
#include "util/output_file.h"

namespace spmd {

JsonlTraceWriter::JsonlTraceWriter(std::ostream& out, bool deterministic)
    : out_(&out), path_("<stream>"), deterministic_(deterministic) {}

JsonlTraceWriter::JsonlTraceWriter(const std::string& path, bool deterministic)
    : file_(path), out_(&file_), path_(path), deterministic_(deterministic) {
  if (!file_) {
    throw_invalid_argument("UsageError", "cannot write the trace file '" + path + "'",
                           "check that the directory exists and is writable");
  }
}

void JsonlTraceWriter::write(const Json& j) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!error_.empty()) return;  // the first failure is the one to tell
  errno = 0;
  *out_ << j.dump() << '\n';
  out_->flush();
  if (!*out_) {
    try {
      throw_write_error(path_, "trace file", errno);
    } catch (const Error& e) {
      error_ = e.report().message;
    }
  }
}

std::string JsonlTraceWriter::write_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

Json JsonlTraceWriter::event_json(const Event& e, bool with_time) {
  Json j = Json::object();
  j.set("ev", std::string(event_kind_name(e.kind)));
  j.set("uid", e.uid);
  if (e.kind == EventKind::kDeviceStart) j.set("parent", e.parent_uid);
  j.set("device", e.device);
  if (e.kind == EventKind::kDeviceStart) {
    j.set("label", e.device_label);
    Json env = Json::array();
    for (const auto& b : e.env) {
      Json a = Json::object();
      a.set("name", b.name);
      a.set("index", b.index);
      a.set("size", b.size);
      env.push(std::move(a));
    }
    j.set("env", std::move(env));
  }
  if (e.kind == EventKind::kCollectiveEnter || e.kind == EventKind::kCollectiveExit) {
    j.set("seq", e.seq);
    j.set("op", e.op);
    Json axes = Json::array();
    for (const auto& a : e.axes) axes.push(a);
    j.set("axes", std::move(axes));
    Json ops = Json::array();
    for (const auto& o : e.operands) ops.push(o);
    j.set("operands", std::move(ops));
    j.set("params", e.params);
  }
  if (e.kind == EventKind::kDecision) {
    j.set("op", e.op);
    j.set("value", e.value);
  }
  if (e.kind == EventKind::kNestedPmap) j.set("axes", e.axes.empty() ? std::string() : e.axes[0]);
  if (e.kind == EventKind::kError) j.set("kind", e.error_kind);
  if (e.kind == EventKind::kDebugPrint || e.kind == EventKind::kError) j.set("text", e.text);
  if (e.loc.valid()) {
    j.set("file", e.loc.file);
    j.set("line", static_cast<std::int64_t>(e.loc.line));
    j.set("column", static_cast<std::int64_t>(e.loc.column));
  }
  if (with_time) j.set("t_us", e.time_us);
  return j;
}

void JsonlTraceWriter::on_run_start(const RunInfo& info) {
  Json j = Json::object();
  j.set("ev", "run_start");
  j.set("version", kTraceVersion);
  j.set("backend", info.backend);
  j.set("devices", info.devices);
  j.set("axes", info.axes);
  write(j);
}

void JsonlTraceWriter::on_event(const Event& event) { write(event_json(event, !deterministic_)); }

void JsonlTraceWriter::on_run_end(const RunInfo&, const Report* failure) {
  Json j = Json::object();
  j.set("ev", "run_end");
  j.set("status", failure ? "error" : "ok");
  if (failure) {
    j.set("kind", failure->kind);
    j.set("message", failure->message);
  }
  write(j);
}

}  // namespace spmd
