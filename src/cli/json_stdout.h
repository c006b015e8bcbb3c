#pragma once
// `--format json` promises one JSON document on stdout. A program can write
// to file descriptor 1 without sys.stdout (os.write(1, ...), sys.__stdout__,
// a subprocess, a C extension): while a JsonStdout is alive, descriptor 1 is
// the process's stderr, and document() writes to the real stdout.

#include <string>

namespace spmd::cli {

class JsonStdout {
 public:
  /// Points descriptor 1 at stderr (after flushing what is buffered for it).
  JsonStdout();
  /// Gives descriptor 1 back, if document() did not.
  ~JsonStdout();
  JsonStdout(const JsonStdout&) = delete;
  JsonStdout& operator=(const JsonStdout&) = delete;

  /// Gives descriptor 1 back and writes `text` to it.
  void document(const std::string& text);

 private:
  void restore() noexcept;
  int saved_ = -1;  // the real stdout, while descriptor 1 is stderr
};

}  // namespace spmd::cli
