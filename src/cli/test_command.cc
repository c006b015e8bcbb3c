#include "cli/test_command.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "cli/process_launcher.h"
#include "cli/scenario_header.h"
#include "python/embed/python_runner.h"
#include "spmd/error.h"
#include "util/input_file.h"
#include "util/output_file.h"
#include "util/utf8.h"

namespace spmd::cli {

namespace fs = std::filesystem;

std::vector<std::string> collect_scenarios(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(p, ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".py") found.push_back(entry.path().string());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      throw InvalidArgument(make_report("UsageError", "no such file or directory: '" + p + "'",
                                        "pass scenario files (.py) or directories that contain them"));
    }
  }
  if (files.empty()) {
    throw InvalidArgument(make_report("UsageError", "no scenario files (*.py) found",
                                      "pass scenario files or a directory such as scenarios/"));
  }
  return files;
}

namespace {

std::string got_of(const RunOutcome& o) {
  if (o.status == "error" || o.status == "interrupted") return "error:" + (o.report ? o.report->kind : "?");
  if (o.status == "exit") return "exit:" + std::to_string(o.exit_code);
  return o.status;
}

// `text` with the scenario's directory left out of the paths in it (as
// given, or absolute), so that a scenario printing its own file name prints
// the same under `spmd test scenarios/`, `spmd test /abs/scenarios` or from
// its own directory: expectations name files relative to the scenario.
std::string relative_to_scenario(std::string text, const std::string& path) {
  const fs::path given = fs::path(path).parent_path();
  std::error_code ec;
  const fs::path absolute = fs::weakly_canonical(fs::absolute(given, ec), ec);
  std::vector<std::string> prefixes;
  if (!absolute.empty()) prefixes.push_back(absolute.string() + "/");
  if (!given.empty()) prefixes.push_back(given.string() + "/");
  // The longer first: one may end with the other ("../../tmp/s/" and "/tmp/s/").
  std::sort(prefixes.begin(), prefixes.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const std::string& prefix : prefixes) {
    for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) {
      text.erase(at, prefix.size());
    }
  }
  return text;
}

}  // namespace

TestResult test_scenario(const std::string& path, const RunSettings& base) {
  TestResult t;
  t.file = path;
  RunSettings settings = base;
  settings.path = path;
  settings.breakpoints = BreakpointMode::kPrint;
  ScenarioHeader header;
  try {
    settings.source = read_input_file(path, "program file", kMaxProgramBytes);
    header = parse_scenario_header(*settings.source, path);
  } catch (const Error& e) {
    t.problems.push_back(e.report().message);
  }
  for (const auto& module : header.requires_modules) {
    if (!python::module_available(module)) {
      t.skipped = "needs " + module + ", which cannot be imported here: pip install it into a venv and run with "
                  "the venv active (VIRTUAL_ENV)";
      t.passed = true;
      t.expected = header.expect;
      return t;
    }
  }
  auto start = std::chrono::steady_clock::now();
  t.outcome = run_scenario_apart(settings, process_layout(settings, header));
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.expected = header.expect;
  t.got = got_of(t.outcome);
  if (header.expect.empty()) {
    t.problems.push_back("no expectation: add a header line such as '# spmd: expect=ok'");
  } else if (header.expect != t.got) {
    std::string why = "expected " + header.expect + ", got " + t.got;
    if (t.outcome.report) why += ": " + t.outcome.report->message;
    t.problems.push_back(why);
  }
  const Report* r = t.outcome.report ? &*t.outcome.report : nullptr;
  if (header.expect_line) {
    int line = r && r->where.valid() ? static_cast<int>(r->where.line) : 0;
    if (line != *header.expect_line) {
      t.problems.push_back("expected the report at line " + std::to_string(*header.expect_line) + ", got " +
                           (line ? "line " + std::to_string(line) : "no location"));
    }
  }
  if (header.expect_decision_line) {
    int line = r && r->divergence.decision_loc.valid() ? static_cast<int>(r->divergence.decision_loc.line) : 0;
    if (line != *header.expect_decision_line) {
      t.problems.push_back("expected the first differing decision at line " +
                           std::to_string(*header.expect_decision_line) + ", got " +
                           (line ? "line " + std::to_string(line) : "none"));
    }
  }
  for (const auto& part : header.expect_message) {
    const std::string text = relative_to_scenario(r ? r->to_text() : "", path);
    if (text.find(part) == std::string::npos) t.problems.push_back("the report does not contain \"" + part + "\"");
  }
  if (header.expect_stdout) {
    std::string expected;
    for (const auto& l : *header.expect_stdout) expected += l + "\n";
    const std::string got = relative_to_scenario(t.outcome.stdout_text, path);
    if (expected != got) {
      std::string diff = "stdout differs (paths relative to the scenario's directory):\n--- expected\n" + expected +
                         "--- got\n" + got;
      t.problems.push_back(diff);
    }
  }
  t.passed = t.problems.empty();
  return t;
}

namespace {
// Text as XML 1.0 character data: the markup characters escaped, and what
// XML cannot hold at all (controls but tab, newline and return; U+FFFE and
// U+FFFF; bytes that are not UTF-8) as U+FFFD, so the file stays
// well-formed whatever the program printed.
std::string xml_escape(const std::string& s) {
  std::string o;
  std::string_view rest = s;
  while (!rest.empty()) {
    const std::size_t n = utf8_sequence_length(rest);
    const std::uint32_t cp = n == 0 ? 0xFFFD : utf8_code_point(rest, n);
    switch (cp) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default:
        if (n == 0 || (cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF) {
          append_utf8(o, 0xFFFD);
        } else {
          o.append(rest.substr(0, n));
        }
    }
    rest.remove_prefix(n == 0 ? 1 : n);
  }
  return o;
}
}  // namespace

std::string junit_xml(const std::vector<TestResult>& results) {
  int failures = static_cast<int>(std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.passed; }));
  double total = 0;
  for (const auto& r : results) total += r.seconds;
  std::ostringstream x;
  x << std::fixed << std::setprecision(3);
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const auto skipped = std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.skipped.empty(); });
  x << "<testsuite name=\"spmd scenarios\" tests=\"" << results.size() << "\" failures=\"" << failures
    << "\" skipped=\"" << skipped << "\" time=\"" << total << "\">\n";
  for (const auto& r : results) {
    x << "  <testcase classname=\"spmd\" name=\"" << xml_escape(r.file) << "\" time=\"" << r.seconds << "\">\n";
    if (!r.skipped.empty()) x << "    <skipped message=\"" << xml_escape(r.skipped) << "\"/>\n";
    if (!r.passed) {
      std::string msg;
      for (const auto& p : r.problems) msg += p + "\n";
      x << "    <failure message=\"" << xml_escape(r.problems.empty() ? "" : r.problems[0].substr(0, 200)) << "\">"
        << xml_escape(msg) << "</failure>\n";
    }
    if (r.outcome.report) x << "    <system-err>" << xml_escape(r.outcome.report->to_text()) << "</system-err>\n";
    x << "  </testcase>\n";
  }
  x << "</testsuite>\n";
  return x.str();
}

int run_tests(const std::vector<std::string>& paths, const RunSettings& base, const std::string& junit_path,
              std::ostream& out) {
  std::vector<std::string> files = collect_scenarios(paths);
  std::vector<TestResult> results;
  int failed = 0, skipped = 0;
  for (const auto& f : files) {
    TestResult r = test_scenario(f, base);
    if (!r.skipped.empty()) {
      ++skipped;
      out << "SKIP " << f << "  (" << r.skipped << ")\n" << std::flush;
      results.push_back(std::move(r));
      continue;
    }
    out << (r.passed ? "PASS " : "FAIL ") << f << "  (" << (r.got.empty() ? "?" : r.got) << ", " << std::fixed
        << std::setprecision(2) << r.seconds << " s)\n";
    if (!r.passed) {
      ++failed;
      for (const auto& p : r.problems) out << "     " << p << "\n";
    }
    out << std::flush;
    bool interrupted = r.outcome.status == "interrupted";
    results.push_back(std::move(r));
    if (interrupted) {
      out << "interrupted: the remaining " << files.size() - results.size() << " scenario(s) were not run\n";
      break;
    }
  }
  out << results.size() - static_cast<std::size_t>(failed + skipped) << " passed, " << failed << " failed";
  if (skipped > 0) out << ", " << skipped << " skipped";
  out << "\n";
  if (!junit_path.empty()) {
    write_output_file(junit_path, "JUnit file", junit_xml(results));
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace spmd::cli
