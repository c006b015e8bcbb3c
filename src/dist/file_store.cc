#include "dist/file_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "spmd/error.h"

namespace spmd::dist {

namespace {

[[noreturn]] void store_error(const std::string& what, const std::string& path, int err) {
  Report r = make_report("StoreError", what + " " + path + ": " + std::strerror(err),
                         "the store is a directory every rank can write (SPMD_STORE); check that it exists on "
                         "every host (a shared mount across hosts) and is writable");
  throw BackendError(std::move(r));
}

bool valid_key(std::string_view key) {
  if (key.empty() || key.front() == '.') return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

FileStore::FileStore(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) store_error("cannot create the store directory", dir_, ec.value());
  if (::access(dir_.c_str(), W_OK) != 0) store_error("cannot write to the store directory", dir_, errno);
}

std::string FileStore::path_of(std::string_view key) const {
  if (!valid_key(key)) {
    throw_invalid_argument("StoreError", "invalid store key \"" + std::string(key) + "\"",
                           "keys use letters, digits, '.', '-' and '_', and do not start with '.'");
  }
  return dir_ + "/" + std::string(key);
}

void FileStore::set(std::string_view key, std::string_view value) const {
  const std::string path = path_of(key);
  // Hidden and unique per writer: readers never list or open it.
  const std::string tmp = dir_ + "/.tmp." + std::string(key) + "." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) store_error("cannot write", tmp, errno);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    out.flush();
    if (!out) store_error("cannot write", tmp, errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) store_error("cannot publish", path, errno);
}

void FileStore::remove(std::string_view key) const {
  const std::string path = path_of(key);
  if (std::remove(path.c_str()) != 0 && errno != ENOENT) store_error("cannot remove", path, errno);
}

std::optional<std::string> FileStore::get(std::string_view key) const {
  const std::string path = path_of(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT || !std::filesystem::exists(path)) return std::nullopt;
    store_error("cannot read", path, errno);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace spmd::dist
