// FileStore: the directory every rank of a multi-process run reads and writes.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "dist/file_store.h"
#include "spmd/error.h"
#include "support/temp_dir.h"

using spmd::dist::FileStore;

using spmd::testing::TempDir;

TEST_CASE("dist::FileStore: values round-trip whole, binary included, unknown keys are empty", "[dist]") {
  TempDir tmp;
  FileStore store(tmp.path + "/a/b");  // parents are created
  REQUIRE(store.get("state.0") == std::nullopt);
  const std::string id("\x00\x01\xff id", 6);
  store.set("share.nccl-id", id);
  REQUIRE(store.get("share.nccl-id") == id);
  store.set("share.nccl-id", "second");  // a rank's own state is replaced the same way
  REQUIRE(store.get("share.nccl-id") == "second");
  // Only the published keys are visible: the temporary files were renamed away.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(store.dir())) {
    REQUIRE(e.path().filename().string()[0] != '.');
    ++files;
  }
  REQUIRE(files == 1);
}

TEST_CASE("dist::FileStore: bad keys and unusable directories are clear errors", "[dist]") {
  TempDir tmp;
  FileStore store(tmp.path);
  auto bad_key = [&](const std::string& key) {
    try {
      store.set(key, "x");
    } catch (const spmd::InvalidArgument& e) {
      return e.report().message;
    }
    return std::string("no error");
  };
  REQUIRE(bad_key("../escape") == "invalid store key \"../escape\"");
  REQUIRE(bad_key("a/b") == "invalid store key \"a/b\"");
  REQUIRE(bad_key("") == "invalid store key \"\"");
  // A file where the directory should be.
  store.set("plain", "x");
  try {
    FileStore inside(tmp.path + "/plain/sub");
    FAIL("expected a StoreError");
  } catch (const spmd::BackendError& e) {
    REQUIRE(e.report().kind == "StoreError");
    REQUIRE(e.report().message.rfind("cannot create the store directory " + tmp.path + "/plain/sub: ", 0) == 0);
  }
}
