#pragma once
// The values of one pmap run that are the same on every device
// (program/invariance.h), computed by the first device to reach them and
// taken by the others, as XLA computes a replicated value once.
//
// A device taking a value gets arrays over the computing device's blocks,
// charged to its own arena as its own results would be (core/replicas.h):
// arena accounting, out-of-memory reports and results are unchanged, the
// host just does the work once. Only host memory is shared; a device whose
// arena is device memory computes everything itself.
//
// Devices on several threads may reach a step at once: one computes and
// publishes, the others compute their own copy meanwhile rather than wait
// (a fiber must not block its thread). The blocks are let go once every
// device has passed the step.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/replicas.h"
#include "spmd/core/array.h"

namespace spmd::detail {
class Arena;
}

namespace spmd::program {

class SharedResults {
 public:
  /// `shared`: one flag per step of the program's plan (shared_steps()).
  explicit SharedResults(std::vector<bool> shared);
  SharedResults(const SharedResults&) = delete;
  SharedResults& operator=(const SharedResults&) = delete;
  ~SharedResults();

  /// Each device calls this before its first step: `devices` is how many
  /// devices run the program (the same number from each).
  void join(int devices);

  bool shared(std::size_t step) const { return step < shared_.size() && shared_[step]; }

  /// The step's outputs as another device published them, as arrays charged
  /// to `arena`; nullopt when nothing is published: then claim() and compute.
  std::optional<std::vector<Array>> take(std::size_t step, const std::shared_ptr<detail::Arena>& arena);
  /// True for the one device that publishes the step's outputs once it has
  /// computed them; the others compute their own.
  bool claim(std::size_t step);
  /// The claimer's results. `inputs` are the values the step read: an
  /// output over an input's memory (a view, which costs its device nothing)
  /// is not shared, so every device computes the step itself. `what[k]`
  /// names output k in a taker's out-of-memory report.
  void publish(std::size_t step, std::span<const Array> outputs, std::span<const Array> inputs,
               std::vector<std::string> what);
  /// The claimer failed: another device may claim the step.
  void abandon(std::size_t step);
  /// The device is past the step (took it or computed it); the last one lets
  /// the published blocks go.
  void passed(std::size_t step);

 private:
  struct Slot;
  std::vector<bool> shared_;
  std::unique_ptr<Slot[]> slots_;
  std::once_flag joined_;
};

}  // namespace spmd::program
