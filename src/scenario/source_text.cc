#include "scenario/source_text.h"

namespace spmd::scenario {

SourceText::SourceText(std::string path, std::string_view text)
    : path_(std::move(path)), interned_(intern_path(path_)), text_(text) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
  if (!text_.empty() && text_.back() == '\n') line_starts_.pop_back();
}

std::string SourceText::line(std::uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  std::size_t start = line_starts_[line - 1];
  std::size_t end = text_.find('\n', start);
  if (end == std::string::npos) end = text_.size();
  if (end > start && text_[end - 1] == '\r') --end;
  return text_.substr(start, end - start);
}

}  // namespace spmd::scenario
