#pragma once
// Writing the files a user asks for (--timeline, --junit) whole, with every
// failure said: a file that cannot be opened (kind "UsageError": the path is
// wrong) or a write that fails (kind "OutputError": a full disk, /dev/full),
// each naming the file and errno's text. A failed write never exits 0.

#include <string>
#include <string_view>

namespace spmd {

/// Writes `text` to `path` (`what`: "timeline file", "JUnit file"). Throws InvalidArgument.
void write_output_file(const std::string& path, std::string_view what, std::string_view text);

/// The error for a failed write of `what` at `path` (errno `error`).
[[noreturn]] void throw_write_error(const std::string& path, std::string_view what, int error);

}  // namespace spmd
