#include "spmd/source_loc.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace spmd {

std::string SourceLoc::to_string() const {
  if (!valid()) return "<unknown>";
  std::string s = file;
  s += ":" + std::to_string(line);
  if (column) s += ":" + std::to_string(column);
  return s;
}

bool SourceLoc::same_file_text(const char* a, const char* b) { return a && b && std::strcmp(a, b) == 0; }

const char* intern_path(std::string_view path) {
  // Leaked on purpose: interned strings must outlive every SourceLoc.
  static auto* table = new std::set<std::string, std::less<>>();
  static auto* mu = new std::mutex();
  std::lock_guard<std::mutex> lock(*mu);
  auto it = table->find(path);
  if (it == table->end()) it = table->emplace(path).first;
  return it->c_str();
}

}  // namespace spmd
