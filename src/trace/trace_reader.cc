#include "trace/trace_reader.h"

#include <algorithm>
#include <cctype>

#include "spmd/error.h"
#include "spmd/trace/event.h"
#include "spmd/trace/jsonl_trace.h"
#include "spmd/util/json.h"

namespace spmd::detail {

namespace {

[[noreturn]] void bad(const std::string& source, int line, int column, const std::string& text, const std::string& what,
                      const std::string& hint) {
  Report r = make_report("SyntaxError",
                         source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": invalid trace: " + what,
                         hint);
  r.where = SourceLoc{intern_path(source), static_cast<std::uint32_t>(line), static_cast<std::uint32_t>(column)};
  r.source_line = text.size() > 200 ? text.substr(0, 200) + "..." : text;
  throw SyntaxError(std::move(r));
}

}  // namespace

Trace read_trace(std::istream& in, const std::string& source) {
  Trace trace;
  std::string text;
  int line = 0;
  std::vector<std::int64_t> collectives_seen;  // per uid
  auto need = [&](const Json& j, const char* key, bool (Json::*is)() const, const char* type) -> const Json& {
    const Json* v = j.find(key);
    if (v == nullptr || !(v->*is)()) {
      bad(source, line, 1, text, std::string("missing or invalid field \"") + key + "\" (expected " + type + ")",
          "every event needs the fields of its kind; see the schema in spmd/trace/jsonl_trace.h");
    }
    return *v;
  };
  auto loc_of = [](const Json& j) { return loc_from_json(&j); };
  auto device_of = [&](const Json& j) -> TraceDevice& {
    std::int64_t uid = need(j, "uid", &Json::is_int, "an integer").as_int();
    if (uid < 0 || uid >= static_cast<std::int64_t>(trace.contexts.size()) || trace.contexts[static_cast<std::size_t>(uid)].uid < 0) {
      bad(source, line, 1, text, "event of device uid " + std::to_string(uid) + " before its device_start",
          "a trace lists each device's device_start before its other events");
    }
    return trace.contexts[static_cast<std::size_t>(uid)];
  };

  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json j = Json::parse(text, source, line - 1);
    if (!j.is_object()) bad(source, line, 1, text, "each line must be a JSON object", "one event object per line");
    std::string ev = need(j, "ev", &Json::is_string, "a string").as_string();
    if (ev == "run_start") {
      if (const Json* v = j.find("version"); v != nullptr && (!v->is_int() || v->as_int() != kTraceVersion)) {
        bad(source, line, 1, text, "trace format version " + v->dump() + ", but this spmd reads version " + std::to_string(kTraceVersion),
            "record the trace again with this spmd (spmd run --trace FILE)");
      }
      const Json* b = j.find("backend");
      if (b && b->is_string()) trace.backend = b->as_string();
      const Json* d = j.find("devices");
      if (d && d->is_int()) trace.devices = static_cast<int>(d->as_int());
      continue;
    }
    if (ev == "run_end") {
      trace.end_status = need(j, "status", &Json::is_string, "a string").as_string();
      const Json* k = j.find("kind");
      if (k && k->is_string()) trace.end_kind = k->as_string();
      continue;
    }
    EventKind kind;
    if (!parse_event_kind(ev, kind)) {
      bad(source, line, 1, text, "unknown event \"" + ev + "\"",
          "known events: run_start, device_start, collective_enter, collective_exit, debug_print, decision, "
          "breakpoint, nested_pmap, error, device_finish, run_end");
    }
    if (kind == EventKind::kDeviceStart) {
      std::int64_t uid = need(j, "uid", &Json::is_int, "an integer").as_int();
      if (uid < 0 || uid > 10'000'000) bad(source, line, 1, text, "uid out of range", "uids are small non-negative integers");
      if (static_cast<std::size_t>(uid) >= trace.contexts.size()) trace.contexts.resize(static_cast<std::size_t>(uid) + 1);
      TraceDevice& d = trace.contexts[static_cast<std::size_t>(uid)];
      if (d.uid >= 0) bad(source, line, 1, text, "device uid " + std::to_string(uid) + " starts twice", "each uid starts once");
      d.uid = static_cast<int>(uid);
      d.start_line = line;
      d.parent = static_cast<int>(need(j, "parent", &Json::is_int, "an integer").as_int());
      d.device = static_cast<int>(need(j, "device", &Json::is_int, "an integer").as_int());
      // (A nested pmap's devices number past the run's top-level count.)
      if (d.parent < 0 && trace.devices > 0 && (d.device < 0 || d.device >= trace.devices)) {
        bad(source, line, 1, text,
            "device " + std::to_string(d.device) + " is outside the run's " + std::to_string(trace.devices) + " devices",
            "the run_start line says how many devices the run had; device ids go from 0 to that count - 1");
      }
      const Json* label = j.find("label");
      d.label = label && label->is_string() ? label->as_string() : "device " + std::to_string(d.device);
      for (const Json& a : need(j, "env", &Json::is_array, "an array").as_array()) {
        if (!a.is_object()) bad(source, line, 1, text, "env entries must be objects", "{\"name\": \"i\", \"index\": 0, \"size\": 4}");
        AxisBinding b{need(a, "name", &Json::is_string, "a string").as_string(),
                      static_cast<int>(need(a, "index", &Json::is_int, "an integer").as_int()),
                      static_cast<int>(need(a, "size", &Json::is_int, "an integer").as_int())};
        if (b.size < 1 || b.index < 0 || b.index >= b.size) {
          bad(source, line, 1, text, "env axis '" + b.name + "' has index " + std::to_string(b.index) + " of size " + std::to_string(b.size),
              "0 <= index < size");
        }
        d.env.push_back(std::move(b));
      }
      continue;
    }
    TraceDevice& d = device_of(j);
    switch (kind) {
      case EventKind::kCollectiveEnter: {
        // Each device numbers its collectives 0, 1, 2, ...: a gap means lost
        // events, and a replay of what is left would judge another run.
        if (collectives_seen.size() <= static_cast<std::size_t>(d.uid)) collectives_seen.resize(static_cast<std::size_t>(d.uid) + 1, 0);
        const std::int64_t done = collectives_seen[static_cast<std::size_t>(d.uid)]++;
        if (const Json* seq = j.find("seq"); seq != nullptr && (!seq->is_int() || seq->as_int() != done)) {
          bad(source, line, 1, text,
              d.label + "'s collective #" + seq->dump() + " follows " + std::to_string(done) +
                  " collective(s) of it: events are missing or out of order",
              "replay the whole trace as spmd wrote it; a truncated or hand-edited trace cannot be judged");
        }
        TraceStep step;
        auto op = parse_collective(need(j, "op", &Json::is_string, "a string").as_string());
        if (!op) bad(source, line, 1, text, "unknown collective \"" + j.find("op")->as_string() + "\"", "psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute, barrier");
        step.sig.kind = *op;
        std::vector<std::string> axes;
        for (const Json& a : need(j, "axes", &Json::is_array, "an array").as_array()) {
          if (!a.is_string()) bad(source, line, 1, text, "axes must be strings", "\"axes\": [\"i\"]");
          axes.push_back(a.as_string());
        }
        step.sig.axes = detail::AxisNames::intern(axes);
        for (const Json& o : need(j, "operands", &Json::is_array, "an array").as_array()) {
          OperandType t;
          if (!o.is_string() || !parse_operand_type(o.as_string(), t)) {
            bad(source, line, 1, text, "operand types look like \"f32[4,8]\"", "dtype short name, then the shape in brackets");
          }
          step.sig.operands.push_back(std::move(t));
        }
        const Json* params = j.find("params");
        if (params && params->is_string() && !parse_params(params->as_string(), step.sig)) {
          bad(source, line, 1, text, "unreadable params \"" + params->as_string() + "\"", "params look like \"axis=0 tiled=False\"");
        }
        step.sig.loc = loc_of(j);
        d.steps.push_back(std::move(step));
        break;
      }
      case EventKind::kCollectiveExit:
        for (auto it = d.steps.rbegin(); it != d.steps.rend(); ++it) {
          if (it->kind == TraceStep::Kind::kCollective) {
            it->completed = true;
            break;
          }
        }
        break;
      case EventKind::kDecision: {
        TraceStep step;
        step.kind = TraceStep::Kind::kDecision;
        step.what = need(j, "op", &Json::is_string, "a string").as_string();
        step.value = need(j, "value", &Json::is_int, "an integer").as_int();
        step.loc = loc_of(j);
        d.steps.push_back(std::move(step));
        break;
      }
      case EventKind::kNestedPmap: {
        TraceStep step;
        step.kind = TraceStep::Kind::kNestedPmap;
        d.steps.push_back(std::move(step));
        break;
      }
      case EventKind::kError:
        d.end = TraceDevice::End::kRaised;
        d.error_kind = need(j, "kind", &Json::is_string, "a string").as_string();
        d.error_text = need(j, "text", &Json::is_string, "a string").as_string();
        d.error_loc = loc_of(j);
        break;
      case EventKind::kDeviceFinish: d.end = TraceDevice::End::kFinished; break;
      default: break;  // prints and breakpoints do not affect the replay
    }
  }
  // Whole-trace problems point at its last line (line 1 for an empty trace).
  const auto last_line = std::max<decltype(line)>(line, 1);
  for (const auto& d : trace.contexts) {
    if (d.uid < 0) bad(source, last_line, 1, "", "device uids are not contiguous", "every uid from 0 up must have a device_start");
  }
  if (trace.contexts.empty()) bad(source, last_line, 1, "", "the trace has no devices", "record one with spmd run --trace FILE");
  // Replay runs one pmap: its top-level devices must share one mesh.
  const TopLevelAxes axes = check_top_level_axes(trace);
  if (axes.differs != nullptr) {
    bad(source, axes.differs->start_line, 1, "", "top-level devices disagree on their axes (" + axes.differs->label + ")",
        "a trace holds one pmap run; record each run to its own file");
  }
  if (axes.first == nullptr) bad(source, last_line, 1, "", "the trace has no top-level devices", "record one with spmd run --trace FILE");
  return trace;
}

TopLevelAxes check_top_level_axes(const Trace& trace) {
  TopLevelAxes r;
  for (const auto& d : trace.contexts) {
    if (d.parent >= 0) continue;
    if (r.first == nullptr) {
      r.first = &d;
      continue;
    }
    bool same = d.env.size() == r.first->env.size();
    for (std::size_t a = 0; same && a < d.env.size(); ++a) {
      same = d.env[a].name == r.first->env[a].name && d.env[a].size == r.first->env[a].size;
    }
    if (!same) {
      r.differs = &d;
      return r;
    }
  }
  return r;
}

}  // namespace spmd::detail
