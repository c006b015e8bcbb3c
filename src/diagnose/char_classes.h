#pragma once
// The ASCII character classes the log and dump readers test, without
// <cctype> (whose functions are undefined for a plain char above 127 and
// depend on the locale).

#include <string_view>

namespace spmd::detail {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
inline bool is_word(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

/// `s` is not empty and every character passes `ok`.
inline bool all_chars(std::string_view s, bool (*ok)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!ok(c)) return false;
  }
  return true;
}

}  // namespace spmd::detail
