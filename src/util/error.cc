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

int exit_code_for_kind(std::string_view kind) {
  if (kind == "Deadlock") return 3;
  if (kind == "CollectiveMismatch") return 4;
  if (kind == "SyntaxError" || kind == "IndentationError" || kind == "TabError" || kind == "UsageError" ||
      kind == "BackendUnavailable") {
    return 2;
  }
  if (kind == "Interrupted") return 130;
  return 1;
}

std::string status_for_kind(std::string_view kind) {
  if (kind == "Deadlock") return "deadlock";
  if (kind == "CollectiveMismatch") return "mismatch";
  if (kind == "Interrupted") return "interrupted";
  return "error";
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
