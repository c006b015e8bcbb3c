#include "spmd/error.h"

namespace spmd {

Error::Error(Report report) : std::runtime_error(report.message), report_(std::move(report)) {}

const char* Error::what() const noexcept {
  try {
    if (text_.empty()) text_ = report_.to_text();
    return text_.c_str();
  } catch (...) {
    return std::runtime_error::what();
  }
}

Report make_report(std::string kind, std::string message, std::string hint) {
  Report r;
  r.kind = std::move(kind);
  r.message = std::move(message);
  r.hint = std::move(hint);
  return r;
}

void throw_invalid_argument(std::string kind, std::string message, std::string hint) {
  throw InvalidArgument(make_report(std::move(kind), std::move(message), std::move(hint)));
}

void throw_shape_error(std::string_view op, std::string message, std::string hint) {
  Report r = make_report("ShapeError", std::string(op) + ": " + std::move(message), std::move(hint));
  r.op = std::string(op);
  throw ShapeError(std::move(r));
}

}  // namespace spmd
