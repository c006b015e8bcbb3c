#pragma once
/// \file
/// `--trace`: every event of a run as one JSON object per line, the input of
/// `spmd replay`. The schema (version 1), one object per line:
///
///   {"ev":"run_start","version":1,"backend":"sim","devices":4,"axes":"i=4"}
///   {"ev":"device_start","uid":0,"parent":-1,"device":0,"label":"device 0",
///    "env":[{"name":"i","index":0,"size":4}]}
///   {"ev":"collective_enter","uid":0,"device":0,"seq":3,"op":"psum","axes":["i"],
///    "operands":["f32[4]"],"params":"","file":"f.py","line":12,"column":5,"t_us":10.5}
///   {"ev":"collective_exit", ...same fields...}
///   {"ev":"debug_print","uid":0,"device":0,"text":"...","file":...}
///   {"ev":"decision","uid":0,"device":0,"op":"lax.cond","value":1,"file":...}
///   {"ev":"breakpoint"|"nested_pmap"|"device_finish", "uid":0, ...}
///   {"ev":"error","uid":0,"device":0,"kind":"NameError","text":"name 'x' is not defined", ...}
///   {"ev":"run_end","status":"ok"|"error","kind":"Deadlock","message":"..."}
///
/// "t_us" is omitted when `deterministic` is set, so traces compare as text.

#include <fstream>
#include <mutex>
#include <ostream>
#include <string>

#include "spmd/trace/observer.h"

namespace spmd {

class Json;

/// The format version run_start records; spmd replay reads only this one.
inline constexpr int kTraceVersion = 1;

class JsonlTraceWriter final : public Observer {
 public:
  /// Writes to `out`, which must outlive the writer.
  JsonlTraceWriter(std::ostream& out, bool deterministic);
  /// Opens `path`; throws InvalidArgument when it cannot be written.
  JsonlTraceWriter(const std::string& path, bool deterministic);

  void on_run_start(const RunInfo& info) override;
  void on_event(const Event& event) override;
  void on_run_end(const RunInfo& info, const Report* failure) override;

  /// The JSON object for one event (shared with tests and other writers).
  static Json event_json(const Event& e, bool with_time);

  /// Why the trace could not be written ("cannot write the trace file
  /// 't.jsonl': No space left on device"); empty while every write worked.
  std::string write_error() const;

 private:
  void write(const Json& j);
  std::ofstream file_;
  std::ostream* out_;
  std::string path_;
  bool deterministic_;
  mutable std::mutex mu_;
  std::string error_;
};

}  // namespace spmd
