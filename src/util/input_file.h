#pragma once
// Reading the files a user names on the command line (a program, a header,
// a trace): opened once, so a FIFO or a process substitution (`<(cat p.py)`)
// is read, not consumed by a first look; refused with the reason when it is a
// directory, unreadable, not text, or larger than a bound (/dev/zero never ends).

#include <cstddef>
#include <string>
#include <string_view>

namespace spmd {

/// The whole contents of `path`, at most `max_bytes`. Throws InvalidArgument
/// (kind "UsageError") naming the file, `what` it is ("program file",
/// "trace file") and the cause: missing, permission denied, a directory,
/// not text (a NUL byte), larger than `max_bytes`, or a read error (errno's text).
std::string read_input_file(const std::string& path, std::string_view what, std::size_t max_bytes);
/// The same for a file that may be binary (a pickle): NUL bytes are data.
std::string read_input_bytes(const std::string& path, std::string_view what, std::size_t max_bytes);

}  // namespace spmd
