#include "cli/option_values.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <system_error>

namespace spmd::cli {

std::size_t parse_size(const std::string& option, const std::string& text, double min, double max,
                       const std::string& range) {
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    throw CLI::ValidationError(option, "'" + text + "' is not a size (e.g. 16GiB, 512MiB, 4096)");
  }
  if (!std::isfinite(v)) throw CLI::ValidationError(option, "'" + text + "' is not a size (e.g. 16GiB, 512MiB, 4096)");
  std::string unit = text.substr(pos);
  double mult = 1;
  if (unit == "" || unit == "B")
    mult = 1;
  else if (unit == "KiB" || unit == "K" || unit == "KB")
    mult = 1024.0;
  else if (unit == "MiB" || unit == "M" || unit == "MB")
    mult = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G" || unit == "GB")
    mult = 1024.0 * 1024 * 1024;
  else if (unit == "TiB" || unit == "T" || unit == "TB")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else
    throw CLI::ValidationError(option, "unknown unit '" + unit + "' in '" + text + "' (use B, KiB, MiB, GiB, TiB)");
  const double bytes = v * mult;
  if (!(bytes >= min && bytes <= max)) {
    throw CLI::ValidationError(option, "'" + text + "' is out of range: it must be between " + range);
  }
  return static_cast<std::size_t>(bytes);
}

const CLI::Validator& seconds() {
  static const CLI::Validator v(
      [](std::string& text) -> std::string {
        double value = 0;
        std::size_t pos = 0;
        try {
          value = std::stod(text, &pos);
        } catch (...) {
          return "'" + text + "' is not a number of seconds";
        }
        if (pos != text.size() || !std::isfinite(value) || value < 0) {
          return "'" + text + "' is not a number of seconds (0 or more; 0: no limit)";
        }
        return {};
      },
      "SECONDS");
  return v;
}

const CLI::Validator& non_negative_integer() {
  static const CLI::Validator v(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
          return "'" + text + "' is not a whole number from 0 to 18446744073709551615";
        }
        return {};
      },
      "UINT");
  return v;
}

const CLI::Validator& output_path() {
  static const CLI::Validator v(
      [](std::string& text) -> std::string {
        return text.empty() ? "needs a file path (it was empty)" : std::string();
      },
      "PATH");
  return v;
}

namespace {

// The path as the file system resolves it: links and ".." followed, so two
// spellings of one file compare equal even before it exists.
std::filesystem::path resolved(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? std::filesystem::path(path).lexically_normal() : p;
}

}  // namespace

void check_distinct_outputs(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (path.empty()) continue;
    const std::filesystem::path out = resolved(path);
    for (const auto& [what, input] : inputs) {
      std::error_code ec;
      if (std::filesystem::is_directory(input, ec) || resolved(input) != out) continue;
      throw CLI::ValidationError(option, "'" + path + "' is " + what + ": writing it would overwrite it (hint: name "
                                                                       "a new file, e.g. " + path + ".out)");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (outputs[j].second.empty() || resolved(outputs[j].second) != out) continue;
      throw CLI::ValidationError(option, "'" + path + "' is also the file of " + outputs[j].first +
                                             ": one would overwrite the other (hint: give each its own file)");
    }
  }
}

}  // namespace spmd::cli
