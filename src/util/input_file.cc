#include "util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "spmd/error.h"
#include "util/format_bytes.h"

namespace spmd {

namespace {

[[noreturn]] void refuse(const std::string& path, std::string_view what, const std::string& why, std::string hint) {
  throw_invalid_argument("UsageError", "cannot read the " + std::string(what) + " '" + path + "': " + why,
                         std::move(hint));
}

[[noreturn]] void refuse_errno(const std::string& path, std::string_view what, int error) {
  std::string hint = error == ENOENT   ? "check the path"
                     : error == EACCES ? "the file exists but this user may not read it; check its permissions"
                                       : "give a regular file";
  refuse(path, what, std::strerror(error), std::move(hint));
}

// Closes the descriptor on every way out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

std::string read_input(const std::string& path, std::string_view what, std::size_t max_bytes, bool text_only) {
  if (path.empty()) refuse(path, what, "the path is empty", "name a file");
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) refuse_errno(path, what, errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) refuse_errno(path, what, errno);
  if (S_ISDIR(st.st_mode)) refuse(path, what, "it is a directory", "name a file in it");
  const std::string too_large = "it is larger than " + format_bytes(max_bytes);
  if (S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    refuse(path, what, too_large, "is this the file you meant?");
  }
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(file.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse_errno(path, what, errno);
    if (n == 0) break;
    // Programs and traces are text: a NUL byte says this is something else
    // (/dev/zero, /dev/urandom, a binary), found at once instead of at the bound.
    if (const void* nul = !text_only ? nullptr : std::memchr(buf, '\0', static_cast<std::size_t>(n))) {
      const std::size_t at = text.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - buf);
      refuse(path, what, "it holds a NUL byte at offset " + std::to_string(at) + ", so it is not a text file",
             "give the " + std::string(what) + " itself, a text file");
    }
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
      refuse(path, what, too_large,
             S_ISREG(st.st_mode) ? "is this the file you meant?"
                                 : "it is not a regular file and did not end (a device such as /dev/zero?); give a file");
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace

std::string read_input_file(const std::string& path, std::string_view what, std::size_t max_bytes) {
  return read_input(path, what, max_bytes, true);
}

std::string read_input_bytes(const std::string& path, std::string_view what, std::size_t max_bytes) {
  return read_input(path, what, max_bytes, false);
}

}  // namespace spmd
