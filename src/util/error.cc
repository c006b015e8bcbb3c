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

Outcome outcome_of_kind(std::string_view kind) {
  if (kind == "Deadlock") return Outcome::kDeadlock;
  if (kind == "CollectiveMismatch") return Outcome::kMismatch;
  // A KeyboardInterrupt the program raised itself ends it as python3 does: 130.
  if (kind == "Interrupted" || kind == "KeyboardInterrupt") return Outcome::kInterrupted;
  if (kind == "SyntaxError" || kind == "IndentationError" || kind == "TabError" || kind == "UsageError" ||
      kind == "BackendUnavailable") {
    return Outcome::kBadInput;
  }
  return Outcome::kError;
}

int exit_code(Outcome outcome) {
  switch (outcome) {
    case Outcome::kError: return 1;
    case Outcome::kBadInput: return 2;
    case Outcome::kDeadlock: return 3;
    case Outcome::kMismatch: return 4;
    case Outcome::kInterrupted: return 130;
  }
  return 1;
}

std::string_view verdict_word(Outcome outcome) {
  switch (outcome) {
    case Outcome::kDeadlock: return "deadlock";
    case Outcome::kMismatch: return "mismatch";
    case Outcome::kInterrupted: return "interrupted";
    case Outcome::kError:
    case Outcome::kBadInput: return "error";
  }
  return "error";
}

int exit_code_for_kind(std::string_view kind) { return exit_code(outcome_of_kind(kind)); }
std::string status_for_kind(std::string_view kind) { return std::string(verdict_word(outcome_of_kind(kind))); }

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
