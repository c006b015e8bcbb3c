#include "spmd/trace/chrome_trace.h"

#include <algorithm>
#include <fstream>

#include "spmd/error.h"
#include "spmd/report.h"
#include "util/output_file.h"

namespace spmd {

ChromeTraceWriter::ChromeTraceWriter(std::string path) : path_(std::move(path)) {
  std::ofstream probe(path_);
  if (!probe) {
    throw_invalid_argument("UsageError", "cannot write the timeline file '" + path_ + "'",
                           "check that the directory exists and is writable");
  }
}

void ChromeTraceWriter::on_run_start(const RunInfo& info) {
  std::lock_guard<std::mutex> lock(mu_);
  Json meta = Json::object();
  meta.set("name", "process_name");
  meta.set("ph", "M");
  meta.set("pid", 0);
  Json args = Json::object();
  args.set("name", "spmd " + info.backend + " (" + info.axes + ")");
  meta.set("args", std::move(args));
  events_.push(std::move(meta));
}

namespace {
Json base(const Event& e, const std::string& name, const char* ph) {
  Json j = Json::object();
  j.set("name", name);
  j.set("ph", ph);
  j.set("pid", 0);
  j.set("tid", e.uid);
  j.set("ts", e.time_us);
  return j;
}
std::string axes_of(const Event& e) {
  std::string s;
  for (const auto& a : e.axes) s += (s.empty() ? "" : ",") + a;
  return s;
}
}  // namespace

void ChromeTraceWriter::on_event(const Event& e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(named_tracks_.begin(), named_tracks_.end(), e.uid) == named_tracks_.end()) {
    named_tracks_.push_back(e.uid);
    Json meta = Json::object();
    meta.set("name", "thread_name");
    meta.set("ph", "M");
    meta.set("pid", 0);
    meta.set("tid", e.uid);
    Json args = Json::object();
    args.set("name", e.device_label);
    meta.set("args", std::move(args));
    events_.push(std::move(meta));
  }
  switch (e.kind) {
    case EventKind::kDeviceStart: events_.push(base(e, "device function", "B")); break;
    case EventKind::kDeviceFinish: events_.push(base(e, "device function", "E")); break;
    case EventKind::kCollectiveEnter: {
      Json j = base(e, e.op + " " + axes_of(e), "B");
      Json args = Json::object();
      args.set("seq", e.seq);
      std::string ops;
      for (const auto& o : e.operands) ops += (ops.empty() ? "" : ",") + o;
      args.set("operands", ops);
      args.set("where", e.loc.to_string());
      j.set("args", std::move(args));
      events_.push(std::move(j));
      break;
    }
    case EventKind::kCollectiveExit: events_.push(base(e, e.op + " " + axes_of(e), "E")); break;
    default: {
      std::string name = e.kind == EventKind::kDebugPrint ? "print: " + e.text
                         : e.kind == EventKind::kDecision ? e.op + " -> " + std::to_string(e.value)
                         : e.kind == EventKind::kError    ? "error: " + e.text
                                                          : std::string(event_kind_name(e.kind));
      Json j = base(e, name, "i");
      j.set("s", "t");
      events_.push(std::move(j));
    }
  }
}

Json ChromeTraceWriter::document() const {
  std::lock_guard<std::mutex> lock(mu_);
  Json doc = Json::object();
  doc.set("traceEvents", events_);
  doc.set("displayTimeUnit", "ms");
  return doc;
}

void ChromeTraceWriter::on_run_end(const RunInfo&, const Report* failure) {
  if (failure) {
    std::lock_guard<std::mutex> lock(mu_);
    Json j = Json::object();
    j.set("name", "run ended: " + failure->kind);
    j.set("ph", "i");
    j.set("s", "g");
    j.set("pid", 0);
    j.set("tid", 0);
    double last = 0;
    for (const auto& ev : events_.as_array()) {
      if (const Json* ts = ev.find("ts")) last = std::max(last, ts->as_double());
    }
    j.set("ts", last);
    events_.push(std::move(j));
  }
  try {
    write_output_file(path_, "timeline file", document().dump() + "\n");
  } catch (const Error& e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.empty()) error_ = e.report().message;
  }
}

std::string ChromeTraceWriter::write_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace spmd
