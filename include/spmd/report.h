#pragma once
/// \file
/// The structured report behind every spmd error and every run verdict.
///
/// A Report renders two ways: `to_text()` for people (the terminal), and
/// `to_json()` for tools (CI, editors). Both renderings carry the same fields;
/// nothing is only in one of them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spmd/source_loc.h"

namespace spmd {

class Json;

/// A small table, rendered with aligned columns: one row per device or per
/// group of devices that brought the same value.
struct ReportTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  /// At most this many rows in a terminal's text, with a line saying how many
  /// more there are (0: all): for tables whose rows can run into the
  /// hundreds (one per pytree leaf). JSON always holds every row.
  std::size_t text_rows = 0;
  bool empty() const { return rows.empty(); }
  /// The header and rows in aligned columns, each line starting with `indent`;
  /// `all_rows` ignores text_rows (spmd run --explain).
  std::string to_text(const std::string& indent, bool all_rows = false) const;
};

/// Where one device stands when the run stopped.
struct DeviceStatus {
  int device = -1;                  ///< flat device id
  std::string label;                ///< e.g. "device 3 (data=1, model=1)"
  std::string state;                ///< "finished", "waiting", "raised", "running", "at breakpoint", "aborted"
  std::string detail;               ///< e.g. "psum #4 over 'i' f32[8]", or the exception message
  SourceLoc loc;                    ///< where it stands (or where it raised)
  std::int64_t collectives_done = 0;
  std::vector<std::string> recent;  ///< last events, oldest first
};

/// The first point where devices stopped doing the same thing.
struct Divergence {
  /// Index (0-based, per device) of the first collective whose signature
  /// differs between devices, or -1 when the sequences agree.
  std::int64_t collective_index = -1;
  std::string collective_summary;  ///< e.g. "#3: devices {0,1,3} psum over 'i' at f.py:12; device {2} finished"
  SourceLoc decision_loc;          ///< the cond/loop/if whose outcome first differed (invalid if none)
  std::string decision_summary;    ///< e.g. "lax.cond at f.py:9 took branch 1 on devices {0}, branch 0 on {1,2,3}"
  bool empty() const { return collective_index < 0 && !decision_loc.valid(); }
};

/// The one JSON form of a DeviceStatus (in reports and in `spmd run
/// --format json`): id, label, state, detail, where, collectives_done,
/// recent_events.
Json device_status_to_json(const DeviceStatus& d);

/// {"file": ..., "line": ..., "column": ...}, or null for an invalid location.
Json loc_to_json(const SourceLoc& loc);
/// The location in `j`'s "file", "line" (>= 1) and "column" members; an
/// invalid one when `j` is null or they are missing.
SourceLoc loc_from_json(const Json* j);

struct Report {
  std::string kind;      ///< machine-readable kind: "Deadlock", "CollectiveMismatch", "InputSplitError", ...
  std::string message;   ///< one-line summary
  std::vector<std::string> details;  ///< further lines of explanation
  std::string hint;      ///< what to try; may be empty
  SourceLoc where;       ///< the user's line this is about, if known
  std::string source_line;  ///< text of that line (scenario files), if known
  int device = -1;       ///< the device it happened on, or -1 for host / all
  std::string op;        ///< collective or array op involved, if any
  std::string axis;      ///< axis name(s) involved, if any
  ReportTable table;     ///< per-device comparison, if any
  std::vector<DeviceStatus> devices;  ///< where every device stands (deadlocks, aborted runs)
  Divergence divergence;
  std::string repro;     ///< a command that reproduces the run, if known

  /// Multi-line rendering for a terminal; ends with a newline. `all_rows`:
  /// every row of the table, however long (--explain).
  std::string to_text(bool all_rows = false) const;
  /// JSON object with the same fields.
  Json to_json() const;
  /// The inverse of to_json() (reports another process printed with
  /// --format json); fields that are missing stay empty.
  static Report from_json(const Json& j);
};

}  // namespace spmd
