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

/// How a run or command that ended with an error of `kind` ends for its
/// caller: the one mapping from kinds to exit statuses and verdict words,
/// used by every command (run, test, replay, diagnose) and their JSON.
///   Deadlock 3 "deadlock"; CollectiveMismatch 4 "mismatch"; Interrupted 130
///   "interrupted"; SyntaxError, IndentationError, TabError, UsageError,
///   BackendUnavailable 2 "error"; any other kind 1 "error".
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
