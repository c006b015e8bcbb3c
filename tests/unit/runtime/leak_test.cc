// Thousands of failing runs in one process leave nothing behind: arenas go
// back to zero live bytes, fiber stacks and threads are unmapped (the
// process's mappings stop growing). Under ASan (tools/sanitize.sh asan) the
// leak checker also sees every heap block these runs allocated when this
// test's process exits.

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "support/spawn.h"
#include "support/process_maps.h"

using namespace spmd;
using namespace spmd::testing;

namespace {

enum class Fault { kDeadlock, kMismatch, kException, kOutOfMemory, kBudget, kBreakpoint, kNone };
constexpr int kFaults = 7;

// One run that ends with `fault`; returns the error kind ("ok" when none).
std::string run_with(Runtime& rt, Fault fault) {
  try {
    run_on(rt, 4, {}, [fault](std::span<const Array>) {
      int d = current_device().id;
      Array x = ones({16});
      switch (fault) {
        case Fault::kDeadlock:
          if (d == 1) return std::vector<Array>{x};
          break;
        case Fault::kMismatch:
          if (d == 2) return std::vector<Array>{all_gather(x, "i")};
          break;
        case Fault::kException:
          if (d == 3) throw std::runtime_error("bad shard");
          break;
        case Fault::kOutOfMemory:
          if (d == 0) return std::vector<Array>{zeros({1 << 20})};
          break;
        case Fault::kBudget:
          if (d == 2) {
            while (true) count_steps();
          }
          break;
        case Fault::kBreakpoint:
          if (d == 1) breakpoint({{"x", x}});
          break;
        case Fault::kNone: break;
      }
      return std::vector<Array>{psum(x, "i")};
    });
  } catch (const Error& e) {
    return e.kind();
  }
  return "ok";
}

const char* expected_kind(Fault f) {
  switch (f) {
    case Fault::kDeadlock: return "Deadlock";
    case Fault::kMismatch: return "CollectiveMismatch";
    case Fault::kException: return "DeviceError";
    case Fault::kOutOfMemory: return "OutOfMemoryError";
    case Fault::kBudget: return "BudgetExceeded";
    case Fault::kBreakpoint: return "BreakpointAbandoned";
    case Fault::kNone: return "ok";
  }
  return "?";
}

}  // namespace

TEST_CASE("runtime::leaks: thousands of failing runs release every arena byte, stack and thread",
          "[runtime][leak]") {
  auto threads = GENERATE(1, 2);
  RuntimeOptions opts{.devices = 4, .threads = threads, .arena_capacity = 1 << 20, .step_budget = 3000};
  opts.fiber_stack_size = 64 * 1024;
  opts.breakpoint_handler = [](std::span<const BreakpointStop>) {
    throw InvalidArgument(make_report("BreakpointAbandoned", "the debugger session ended"));
  };
  Runtime rt(opts);
  const int warmup = 4 * kFaults;
  const int runs = 1500;
  std::size_t mappings = 0;
  for (int i = 0; i < warmup + runs; ++i) {
    if (i == warmup) mappings = mapping_count();
    Fault f = static_cast<Fault>(i % kFaults);
    std::string kind = run_with(rt, f);
    if (kind != expected_kind(f)) FAIL("run " << i << ": expected " << expected_kind(f) << ", got " << kind);
    for (int d = 0; d < 4; ++d) {
      if (rt.arena_usage(d).live_bytes != 0) FAIL("run " << i << ": device " << d << " arena still holds bytes");
    }
  }
  // Stacks come from pooled mappings released after each run; a leak of one
  // pool per run would add thousands of mappings.
  std::size_t after = mapping_count();
  INFO("mappings after warm-up " << mappings << ", after " << runs << " runs " << after);
  // Allocators (ASan's above all) may still map a few new regions; a leak
  // per run would add one mapping or more per run.
  if (spmd::testing::kMappingCountIsOurs) REQUIRE(after <= mappings + static_cast<std::size_t>(runs) / 10);
}
