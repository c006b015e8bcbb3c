#pragma once
/// \file
/// A source position: where a collective, a print or an error came from.
///
/// `file` points at storage that lives for the whole process: a string literal
/// from `std::source_location`, or a scenario path interned by `intern_path()`.
/// That keeps SourceLoc trivially copyable, so the rendezvous can compare and
/// store it on its hot path without allocating.

#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>

namespace spmd {

struct SourceLoc {
  const char* file = nullptr;  ///< process-lifetime string, or nullptr when unknown
  std::uint32_t line = 0;      ///< 1-based; 0 when unknown
  std::uint32_t column = 0;    ///< 1-based; 0 when unknown

  bool valid() const { return file != nullptr && line != 0; }

  /// "file:line:column", "file:line" when the column is unknown, "<unknown>" when invalid.
  std::string to_string() const;

  static SourceLoc from(const std::source_location& loc) { return SourceLoc{loc.file_name(), loc.line(), loc.column()}; }

  /// Same line, column and file (by pointer first: the rendezvous compares
  /// locations once per arriving device).
  friend bool operator==(const SourceLoc& a, const SourceLoc& b) {
    return a.line == b.line && a.column == b.column && (a.file == b.file || same_file_text(a.file, b.file));
  }

 private:
  static bool same_file_text(const char* a, const char* b);
};

/// Returns a process-lifetime copy of `path`, the same pointer for equal strings.
/// Thread-safe.
const char* intern_path(std::string_view path);

}  // namespace spmd
