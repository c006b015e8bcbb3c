#include "spmd/trace/event.h"

#include <array>

namespace spmd {

namespace {
constexpr std::array<std::string_view, 9> kEventKindNames = {
    "device_start", "collective_enter", "collective_exit", "debug_print", "decision",
    "breakpoint",   "nested_pmap",      "error",           "device_finish"};
}

std::string_view event_kind_name(EventKind kind) { return kEventKindNames[static_cast<int>(kind)]; }

bool parse_event_kind(std::string_view name, EventKind& out) {
  for (std::size_t i = 0; i < kEventKindNames.size(); ++i) {
    if (kEventKindNames[i] == name) {
      out = static_cast<EventKind>(i);
      return true;
    }
  }
  return false;
}

std::string Event::summary() const {
  std::string where = loc.valid() ? " at " + loc.to_string() : "";
  std::string ax;
  for (std::size_t i = 0; i < axes.size(); ++i) ax += (i ? ", " : "") + axes[i];
  switch (kind) {
    case EventKind::kCollectiveEnter:
    case EventKind::kCollectiveExit: {
      std::string ops;
      for (std::size_t i = 0; i < operands.size(); ++i) ops += (i ? "," : "") + operands[i];
      return "#" + std::to_string(seq) + " " + op + " over " + ax + (ops.empty() ? "" : " " + ops) + where +
             (kind == EventKind::kCollectiveEnter ? " (entered)" : " done");
    }
    case EventKind::kDebugPrint: return "debug_print" + where + ": " + text;
    case EventKind::kDecision: return op + where + " -> " + std::to_string(value);
    case EventKind::kError: return "raised" + where + ": " + text;
    default: return std::string(event_kind_name(kind)) + where;
  }
}

}  // namespace spmd
