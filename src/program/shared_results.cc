// Replicated values computed once per pmap run. See shared_results.h.

#include "program/shared_results.h"

namespace spmd::program {

namespace {
enum State : int { kOpen, kComputing, kPublished, kUnshareable };
}

struct SharedResults::Slot {
  std::atomic<int> state{kOpen};
  std::atomic<int> to_pass{0};  // devices that have not passed the step yet
  // Written by the claimer before the release store of kPublished; read by
  // takers after their acquire load; cleared by the last device to pass.
  std::vector<detail::SharedContents> values;
  std::vector<int> same_as;  // an output that is an earlier output's array: its index, else -1
  std::vector<std::string> what;
};

SharedResults::SharedResults(std::vector<bool> shared)
    : shared_(std::move(shared)), slots_(std::make_unique<Slot[]>(shared_.size())) {}

SharedResults::~SharedResults() = default;

void SharedResults::join(int devices) {
  std::call_once(joined_, [&] {
    for (std::size_t s = 0; s < shared_.size(); ++s) slots_[s].to_pass.store(devices, std::memory_order_relaxed);
  });
}

std::optional<std::vector<Array>> SharedResults::take(std::size_t step, const std::shared_ptr<detail::Arena>& arena) {
  Slot& slot = slots_[step];
  if (slot.state.load(std::memory_order_acquire) != kPublished) return std::nullopt;
  std::vector<Array> out;
  out.reserve(slot.values.size());
  for (std::size_t k = 0; k < slot.values.size(); ++k) {
    const int same = slot.same_as[k];
    out.push_back(same >= 0 ? out[static_cast<std::size_t>(same)] : slot.values[k].on(arena, slot.what[k]));
  }
  return out;
}

bool SharedResults::claim(std::size_t step) {
  int open = kOpen;
  return slots_[step].state.compare_exchange_strong(open, kComputing, std::memory_order_acq_rel);
}

void SharedResults::publish(std::size_t step, std::span<const Array> outputs, std::span<const Array> inputs,
                            std::vector<std::string> what) {
  Slot& slot = slots_[step];
  auto unshareable = [&] {
    slot.values.clear();
    slot.same_as.clear();
    slot.state.store(kUnshareable, std::memory_order_release);
  };
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    int same = -1;
    for (std::size_t j = 0; j < k && same < 0; ++j) {
      if (outputs[j].shares_memory_with(outputs[k])) same = static_cast<int>(j);
    }
    for (const Array& in : inputs) {
      if (in.valid() && in.shares_memory_with(outputs[k])) return unshareable();
    }
    std::optional<detail::SharedContents> contents = detail::SharedContents::of(outputs[k]);
    if (!contents) return unshareable();
    slot.values.push_back(std::move(*contents));
    slot.same_as.push_back(same);
  }
  slot.what = std::move(what);
  slot.state.store(kPublished, std::memory_order_release);
}

void SharedResults::abandon(std::size_t step) { slots_[step].state.store(kOpen, std::memory_order_release); }

void SharedResults::passed(std::size_t step) {
  Slot& slot = slots_[step];
  if (slot.to_pass.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    slot.values.clear();  // the blocks go with the last array over them
  }
}

}  // namespace spmd::program
