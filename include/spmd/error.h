#pragma once
/// \file
/// The spmd exception hierarchy.
///
/// Every error carries a structured Report (what, where, which device, a hint);
/// `what()` is its text rendering. The classes exist so C++ callers can catch
/// by category; the precise kind is `report().kind`, a stable string that the
/// CLI prints and scenario headers match (`# spmd: expect=error:AxisNameError`).
///
///   Error
///   |- InvalidArgument       bad call from the user: split sizes, axes, shapes, dtypes
///   |   |- ShapeError        an array op got incompatible shapes
///   |   `- AxisNameError     a collective names an axis that is not bound
///   |- CollectiveMismatch    devices met at a collective with different signatures
///   |- DeadlockError         every live device is blocked and no collective can complete
///   |- OutOfMemoryError      a device arena is over capacity
///   |- DeviceError           an exception escaped one device's function
///   |- ProgramError          a scenario program failed (NameError, TypeError, tracer errors, ...)
///   |   `- SyntaxError       a scenario or trace file does not parse
///   |- BudgetExceeded        the run exceeded its step or time budget
///   |- BackendUnavailable    the backend was not compiled in or has no devices
///   `- BackendError          CUDA / NCCL reported a failure

#include <stdexcept>
#include <string_view>
#include <string>

#include "spmd/report.h"

namespace spmd {

class Error : public std::runtime_error {
 public:
  explicit Error(Report report);
  const Report& report() const noexcept { return report_; }
  /// For layers that add context on the way out (the scenario interpreter sets
  /// `where` and `source_line`), then rethrow with `throw;`.
  Report& mutable_report() noexcept {
    text_.clear();
    return report_;
  }
  const std::string& kind() const noexcept { return report_.kind; }
  /// The text rendering of the report (rendered on first use).
  const char* what() const noexcept override;

 private:
  Report report_;
  mutable std::string text_;
};

#define SPMD_DECLARE_ERROR(Name, Base)                 \
  class Name : public Base {                           \
   public:                                             \
    explicit Name(Report report) : Base(std::move(report)) {} \
  }

SPMD_DECLARE_ERROR(InvalidArgument, Error);
SPMD_DECLARE_ERROR(ShapeError, InvalidArgument);
SPMD_DECLARE_ERROR(AxisNameError, InvalidArgument);
SPMD_DECLARE_ERROR(CollectiveMismatch, Error);
SPMD_DECLARE_ERROR(DeadlockError, Error);
SPMD_DECLARE_ERROR(OutOfMemoryError, Error);
SPMD_DECLARE_ERROR(DeviceError, Error);
SPMD_DECLARE_ERROR(ProgramError, Error);
SPMD_DECLARE_ERROR(SyntaxError, ProgramError);
SPMD_DECLARE_ERROR(BudgetExceeded, Error);
SPMD_DECLARE_ERROR(BackendUnavailable, Error);
SPMD_DECLARE_ERROR(BackendError, Error);

#undef SPMD_DECLARE_ERROR

/// What an error means for the caller of a run or a command: kinds are an
/// open set of names (the program's own Python exceptions among them), and
/// each falls into one of these. The one mapping from kinds to exit statuses
/// and verdict words, used by every command (run, test, replay, diagnose)
/// and their JSON.
enum class Outcome {
  kError,        ///< 1 "error": the program or a device failed
  kBadInput,     ///< 2 "error": the program, a file or the command line cannot be used as given
  kDeadlock,     ///< 3 "deadlock"
  kMismatch,     ///< 4 "mismatch": a collective's members disagree
  kInterrupted,  ///< 130 "interrupted": stopped from outside (SIGINT)
};
/// Deadlock, CollectiveMismatch, Interrupted; SyntaxError, IndentationError,
/// TabError, UsageError and BackendUnavailable are bad input; any other kind an error.
Outcome outcome_of_kind(std::string_view kind);
int exit_code(Outcome outcome);
std::string_view verdict_word(Outcome outcome);

/// exit_code(outcome_of_kind(kind)) and verdict_word(outcome_of_kind(kind)).
int exit_code_for_kind(std::string_view kind);
std::string status_for_kind(std::string_view kind);

/// Builds a Report with kind, message and hint; the remaining fields are
/// filled by the caller or by the runtime (device, location) on the way out.
Report make_report(std::string kind, std::string message, std::string hint = {});

/// Throws InvalidArgument with kind `kind` (e.g. "InputSplitError").
[[noreturn]] void throw_invalid_argument(std::string kind, std::string message, std::string hint = {});
/// Throws ShapeError (kind "ShapeError") naming the op.
[[noreturn]] void throw_shape_error(std::string_view op, std::string message, std::string hint = {});

}  // namespace spmd
