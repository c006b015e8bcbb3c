#pragma once
// UTF-8 helpers for text that reports and Python-style formatting measure or build.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace spmd {

/// Number of code points in `s` (continuation bytes are not counted).
std::size_t utf8_length(std::string_view s);
/// Appends code point `cp` (< 0x110000) encoded as UTF-8.
void append_utf8(std::string& out, std::uint32_t cp);
/// Length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0
/// when it starts with a byte that is not one (stray continuation, overlong
/// form, surrogate, past U+10FFFF, truncated).
std::size_t utf8_sequence_length(std::string_view s);
/// The code point of the valid sequence of `length` bytes (from
/// utf8_sequence_length, not 0) at the start of `s`.
std::uint32_t utf8_code_point(std::string_view s, std::size_t length);

}  // namespace spmd
