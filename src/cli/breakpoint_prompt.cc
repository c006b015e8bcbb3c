#include "cli/breakpoint_prompt.h"

#include <poll.h>

#include <istream>
#include <ostream>
#include <set>
#include <sstream>

#include "spmd/core/format.h"
#include "spmd/error.h"

namespace spmd::cli {

namespace {

void header(std::span<const BreakpointStop> stops, std::ostream& out) {
  out << "breakpoint: " << stops.size() << " device" << (stops.size() == 1 ? "" : "s") << " stopped";
  if (!stops.empty() && stops[0].loc.valid()) out << " at " << stops[0].loc.to_string();
  out << '\n';
}

void print_value(const BreakpointStop& s, const std::string& name, const Array& v, std::ostream& out) {
  std::string text = to_string(v);
  std::string indent(s.device_label.size() + 4 + name.size() + 3, ' ');
  std::string shown;
  for (char c : text) {
    shown += c;
    if (c == '\n') shown += indent;
  }
  out << "  [" << s.device_label << "] " << name << " = " << shown << '\n';
}

}  // namespace

void print_breakpoint(std::span<const BreakpointStop> stops, std::ostream& out) {
  header(stops, out);
  for (const auto& s : stops) {
    if (s.values.empty()) out << "  [" << s.device_label << "] (no array values in scope)\n";
    for (const auto& [name, v] : s.values) print_value(s, name, v, out);
  }
  out << std::flush;
}

void prompt_breakpoint(std::span<const BreakpointStop> stops, std::istream& in, std::ostream& out, int in_fd,
                       const std::function<bool()>& interrupted) {
  header(stops, out);
  out << "commands: p NAME [DEVICE], l, d, c, q, h\n";
  std::string line;
  // Whether a line can be read without blocking past an interrupt.
  auto wait_for_input = [&] {
    if (in_fd < 0 || !interrupted || in.rdbuf()->in_avail() > 0) return true;
    while (!interrupted()) {
      pollfd p{in_fd, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) return true;
    }
    return false;
  };
  while (true) {
    out << "(spmd-pdb) " << std::flush;
    if (!wait_for_input()) {
      out << "\n(interrupted: continuing, so every device stops where it stands)\n" << std::flush;
      return;
    }
    if (!std::getline(in, line)) {
      out << "\n(end of input: continuing)\n";
      return;
    }
    std::istringstream words(line);
    std::string cmd, name;
    words >> cmd;
    if (cmd.empty()) continue;
    if (cmd == "c" || cmd == "continue") return;
    if (cmd == "q" || cmd == "quit") {
      throw Error(make_report("BreakpointAbandoned", "the breakpoint prompt was quit",
                              "use c to let the devices continue instead of ending the run"));
    }
    if (cmd == "h" || cmd == "help") {
      out << "p NAME [DEVICE]  print NAME on every stopped device (or one)\n"
             "l                list the names in scope\n"
             "d                list the stopped devices\n"
             "c                continue all devices\n"
             "q                quit: end the run\n";
      continue;
    }
    if (cmd == "d") {
      for (const auto& s : stops) out << "  " << s.device_label << " at " << s.loc.to_string() << '\n';
      continue;
    }
    if (cmd == "l") {
      std::set<std::string> names;
      for (const auto& s : stops) {
        for (const auto& [n, v] : s.values) names.insert(n);
      }
      for (const auto& n : names) out << "  " << n << '\n';
      continue;
    }
    if (cmd == "p" && (words >> name)) {
      int only = -1;
      words >> only;
      bool found = false;
      for (const auto& s : stops) {
        if (only >= 0 && s.device != only) continue;
        for (const auto& [n, v] : s.values) {
          if (n == name) {
            print_value(s, n, v, out);
            found = true;
          }
        }
      }
      if (!found) out << "  no value named '" << name << "'" << (only >= 0 ? " on that device" : "") << " (l lists them)\n";
      continue;
    }
    out << "  unknown command '" << line << "' (h for help)\n";
  }
}

}  // namespace spmd::cli
