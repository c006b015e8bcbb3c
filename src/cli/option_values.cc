#include "cli/option_values.h"

#include <charconv>
#include <cmath>
#include <cstdint>

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

}  // namespace spmd::cli
