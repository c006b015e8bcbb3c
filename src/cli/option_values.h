#pragma once
// The values spmd's options take, checked before anything runs: sizes with
// a unit in a range, seconds (finite, not negative), whole numbers that fit
// 64 bits, output paths that are not empty. Each says what is wrong with the
// value; main turns that into exit code 2.

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace spmd::cli {

/// "16GiB", "512MiB", "4096" as bytes, between `min` and `max` (`range` says
/// them in the error). Throws CLI::ValidationError naming `option`.
std::size_t parse_size(const std::string& option, const std::string& text, double min, double max,
                       const std::string& range);

/// A number of seconds: finite and not negative ("nan" and "inf" are refused).
const CLI::Validator& seconds();
/// A count or seed: digits only, at most 2^64 - 1 ("-1" would wrap).
const CLI::Validator& non_negative_integer();
/// An output file: an empty path would silently write nothing.
const CLI::Validator& output_path();

/// An option and the path it names ("--trace", "run.jsonl").
using NamedPath = std::pair<std::string, std::string>;
/// Refuses (CLI::ValidationError) an output that is one of the inputs or
/// another output, as spelled or through links: `--trace prog.py` would
/// overwrite the program, `--trace X --timeline X` keep only one of them.
/// Unset outputs (empty paths) are skipped; directories among the inputs
/// are not compared.
void check_distinct_outputs(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

}  // namespace spmd::cli
