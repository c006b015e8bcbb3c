#include "util/output_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "spmd/error.h"

namespace spmd {

void throw_write_error(const std::string& path, std::string_view what, int error) {
  throw_invalid_argument("OutputError",
                         "cannot write the " + std::string(what) + " '" + path + "': " +
                             std::strerror(error ? error : EIO),
                         "the file is incomplete; free space on its disk or write it elsewhere");
}

void write_output_file(const std::string& path, std::string_view what, std::string_view text) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw_invalid_argument("UsageError",
                           "cannot open the " + std::string(what) + " '" + path + "': " + std::strerror(errno ? errno : EIO),
                           "check that the directory exists and is writable");
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  if (!out) throw_write_error(path, what, errno);
  out.close();
  if (out.fail()) throw_write_error(path, what, errno);
}

}  // namespace spmd
