#pragma once
// Test helper: a fresh directory under /tmp, removed with everything in it
// when the test is done.

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace spmd::testing {

struct TempDir {
  std::string path;
  explicit TempDir(const char* prefix = "spmd-test") {
    std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace spmd::testing
