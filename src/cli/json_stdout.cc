#include "cli/json_stdout.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace spmd::cli {

JsonStdout::JsonStdout() {
  std::cout.flush();
  std::fflush(stdout);
  saved_ = ::dup(1);
  // Without a spare descriptor (EMFILE), or with no stderr, the program's
  // descriptor-level output stays on stdout as before: nothing else changes.
  if (saved_ >= 0 && ::dup2(2, 1) < 0) {
    ::close(saved_);
    saved_ = -1;
  }
}

JsonStdout::~JsonStdout() { restore(); }

void JsonStdout::restore() noexcept {
  if (saved_ < 0) return;
  std::cout.flush();
  std::fflush(stdout);  // what the program's C code buffered goes where it wrote: stderr
  ::dup2(saved_, 1);
  ::close(saved_);
  saved_ = -1;
}

void JsonStdout::document(const std::string& text) {
  restore();
  std::cout << text << std::endl;
}

}  // namespace spmd::cli
