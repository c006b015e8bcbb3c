#include "cli/scenario_header.h"

#include <charconv>
#include <sstream>

#include "spmd/error.h"

namespace spmd::cli {

namespace {

[[noreturn]] void bad(const std::string& path, int line, const std::string& text, const std::string& what,
                      const std::string& hint) {
  Report r = make_report("UsageError", path + ":" + std::to_string(line) + ": bad spmd header: " + what, hint);
  r.where = SourceLoc{intern_path(path), static_cast<std::uint32_t>(line), 1};
  r.source_line = text;
  throw InvalidArgument(std::move(r));
}

std::uint64_t number(const std::string& path, int line, const std::string& text, const std::string& key,
                     const std::string& value, std::uint64_t min, std::uint64_t max = ~std::uint64_t{0}) {
  std::uint64_t v = 0;
  std::size_t used = 0;
  try {
    v = std::stoull(value, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != value.size() || v < min || value[0] == '-') {
    bad(path, line, text, key + "=" + value + " is not a number >= " + std::to_string(min),
        "write e.g. # spmd: " + key + "=" + std::to_string(std::max<std::uint64_t>(min, 4)));
  }
  if (v > max) {
    bad(path, line, text, key + "=" + value + " is larger than " + std::to_string(max),
        "write e.g. # spmd: " + key + "=" + std::to_string(std::max<std::uint64_t>(min, 4)));
  }
  return v;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

ScenarioHeader parse_scenario_header(const std::string& text, const std::string& path) {
  ScenarioHeader h;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string t = trim(raw);
    if (t.empty()) continue;
    if (t[0] != '#') break;  // first line of code ends the header
    std::string body = trim(t.substr(1));
    if (body.rfind("spmd:", 0) != 0) continue;
    body = trim(body.substr(5));
    if (body.rfind("expect-stdout:", 0) == 0) {
      std::string out = body.substr(14);
      if (!out.empty() && out[0] == ' ') out.erase(0, 1);
      if (!h.expect_stdout) h.expect_stdout.emplace();
      h.expect_stdout->push_back(out);
      continue;
    }
    // expect-message= takes the rest of the line, whatever precedes it.
    if (auto at = body.find("expect-message="); at != std::string::npos) {
      h.expect_message.push_back(body.substr(at + 15));
      body = trim(body.substr(0, at));
    }
    std::istringstream words(body);
    std::string word;
    while (words >> word) {
      auto eq = word.find('=');
      if (eq == std::string::npos) {
        bad(path, line, raw, "'" + word + "' is not key=value", "write e.g. # spmd: devices=4 expect=deadlock");
      }
      std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "devices") {
        h.devices = static_cast<int>(number(path, line, raw, key, value, 1, kMaxDevices));
      } else if (key == "threads") {
        h.threads = static_cast<int>(number(path, line, raw, key, value, 1, kMaxThreads));
      } else if (key == "seed") {
        h.seed = number(path, line, raw, key, value, 0);
      } else if (key == "max-steps") {
        h.max_steps = number(path, line, raw, key, value, 1);
      } else if (key == "processes") {
        h.processes = static_cast<int>(number(path, line, raw, key, value, 1, kMaxProcesses));
      } else if (key == "process-devices") {
        if (value != "all" && value != "local") {
          bad(path, line, raw, "process-devices=" + value + " is not all or local",
              "process-devices=all runs every device in every process, process-devices=local gives each process "
              "its share (devices / processes)");
        }
        h.process_local_devices = value == "local";
      } else if (key == "strict") {
        if (value != "0" && value != "1") {
          bad(path, line, raw, "strict=" + value + " is not 0 or 1",
              "strict=1 makes warnings about the program (parameter drift) errors, as --strict does");
        }
        h.strict = value == "1";
      } else if (key == "expect") {
        int status = 0;
        const char* digits_end = value.data() + value.size();
        const bool exit_status = value.rfind("exit:", 0) == 0 &&
                                 std::from_chars(value.data() + 5, digits_end, status).ptr == digits_end &&
                                 value.size() > 5 && status >= 1 && status <= 255;
        if (value != "ok" && value != "deadlock" && value != "mismatch" &&
            !(value.rfind("error:", 0) == 0 && value.size() > 6) && !exit_status) {
          bad(path, line, raw, "expect=" + value + " is not an outcome",
              "use expect=ok, expect=deadlock, expect=mismatch, expect=error:KIND (e.g. error:NameError) or "
              "expect=exit:N (the program's own sys.exit(N), 1..255)");
        }
        h.expect = value;
      } else if (key == "requires") {
        std::stringstream names(value);
        for (std::string name; std::getline(names, name, ',');) {
          if (name.empty()) {
            bad(path, line, raw, "requires=" + value + " has an empty module name",
                "name the top-level modules the scenario imports, separated by commas: requires=optax,flax");
          }
          h.requires_modules.push_back(name);
        }
      } else if (key == "expect-line") {
        h.expect_line = static_cast<int>(number(path, line, raw, key, value, 1, 1u << 30));
      } else if (key == "expect-decision-line") {
        h.expect_decision_line = static_cast<int>(number(path, line, raw, key, value, 1, 1u << 30));
      } else {
        bad(path, line, raw, "unknown key '" + key + "'",
            "known keys: devices, threads, seed, max-steps, processes, process-devices, strict, requires, expect, "
            "expect-line, "
            "expect-decision-line, expect-message=, expect-stdout:");
      }
    }
  }
  return h;
}

}  // namespace spmd::cli
