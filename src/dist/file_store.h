#pragma once
// A key/value store in a directory every rank can read and write: a local
// directory for processes on one host, a shared (NFS) one across hosts. A
// value is published by writing a temporary file and renaming it over the
// key, so a reader sees a whole value or none, never half of one.

#include <optional>
#include <string>
#include <string_view>

namespace spmd::dist {

class FileStore {
 public:
  /// Creates `dir` (and its parents) when missing. Throws BackendError (kind
  /// "StoreError") naming the path when it cannot.
  explicit FileStore(std::string dir);

  /// Publishes `value` under `key` (letters, digits, '.', '-', '_').
  void set(std::string_view key, std::string_view value) const;
  /// The value under `key`, or nullopt when nothing was published yet.
  std::optional<std::string> get(std::string_view key) const;
  /// Forgets `key` (nothing happens when it is not there).
  void remove(std::string_view key) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string path_of(std::string_view key) const;
  std::string dir_;
};

}  // namespace spmd::dist
