#pragma once
// The text of a scenario file, kept for error reports (source lines).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/source_loc.h"
#include "scenario/token.h"

namespace spmd::scenario {

class SourceText {
 public:
  SourceText(std::string path, std::string_view text);

  const std::string& path() const { return path_; }
  /// Process-lifetime copy of the path, for SourceLoc.
  const char* interned_path() const { return interned_; }
  const std::string& text() const { return text_; }
  /// Line `line` (1-based) without its newline; empty when out of range.
  std::string line(std::uint32_t line) const;
  std::uint32_t line_count() const { return static_cast<std::uint32_t>(line_starts_.size()); }
  SourceLoc loc(Pos pos) const { return SourceLoc{interned_, pos.line, pos.col}; }

 private:
  std::string path_;
  const char* interned_;
  std::string text_;
  std::vector<std::size_t> line_starts_;
};

}  // namespace spmd::scenario
