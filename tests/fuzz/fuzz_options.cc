// libFuzzer target: the values of spmd's options (the CLI surface a user
// types): sizes with units, seconds, 64-bit whole numbers, output paths.
// Every input is accepted with a value inside its range or refused with a
// CLI::ValidationError; nothing else may escape, and no value may wrap.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/option_values.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 4096) return 0;
  const std::uint8_t which = data[0] % 4;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (which) {
    case 0: {
      constexpr double kMin = 16 * 1024.0, kMax = 1024.0 * 1024 * 1024;
      try {
        const std::size_t bytes = spmd::cli::parse_size("--stack-size", text, kMin, kMax, "16KiB and 1GiB");
        if (bytes < 16 * 1024 || bytes > (std::size_t{1} << 30)) {
          std::fprintf(stderr, "fuzz_options: '%s' accepted as %zu bytes, outside its range\n", text.c_str(), bytes);
          std::abort();
        }
      } catch (const CLI::ValidationError&) {
      }
      break;
    }
    case 1: (void)spmd::cli::seconds()(text); break;
    case 2: (void)spmd::cli::non_negative_integer()(text); break;
    default: (void)spmd::cli::output_path()(text); break;
  }
  return 0;
}
