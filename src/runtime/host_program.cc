#include "runtime/host_program.h"

#include <sstream>
#include <string>

#include "spmd/error.h"
#include "spmd/runtime/runtime.h"

namespace spmd::detail {

namespace {
thread_local HostProgramScope* t_scope = nullptr;
}

HostProgramScope::HostProgramScope(const Runtime* runtime, std::uint64_t max_steps, double max_seconds)
    : runtime_(runtime),
      max_steps_(max_steps),
      max_seconds_(max_seconds),
      start_(std::chrono::steady_clock::now()),
      previous_(t_scope) {
  t_scope = this;
}

HostProgramScope::~HostProgramScope() { t_scope = previous_; }

HostProgramScope* HostProgramScope::current() noexcept { return t_scope; }

void HostProgramScope::step(std::uint64_t n) {
  std::uint64_t before = steps_;
  steps_ += n;
  if (runtime_ != nullptr && runtime_->interrupted()) {
    try {
      runtime_->check_interrupted();
    } catch (Error& e) {
      e.mutable_report().where = loc_;
      throw;
    }
  }
  if (max_steps_ != 0 && steps_ > max_steps_) {
    Report r = make_report("BudgetExceeded",
                           "the host program exceeded the step budget of " + std::to_string(max_steps_) +
                               " interpreter steps",
                           "a loop outside pmap may never end; raise the budget (--max-steps) if the program is "
                           "just long");
    r.where = loc_;
    throw BudgetExceeded(std::move(r));
  }
  constexpr std::uint64_t kClockEvery = 1024;
  if (max_seconds_ > 0 && before / kClockEvery != steps_ / kClockEvery &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > max_seconds_) {
    std::ostringstream budget;
    budget << max_seconds_;
    Report r = make_report("BudgetExceeded",
                           "the host program exceeded its time budget of " + budget.str() + " s",
                           "a loop outside pmap may never end; raise the budget (--max-seconds) if the program is "
                           "just slow");
    r.where = loc_;
    throw BudgetExceeded(std::move(r));
  }
}

}  // namespace spmd::detail
