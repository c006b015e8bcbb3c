// Faults inside device programs: each one ends the run with a report that
// says where every device stands. Budgets, deadlocks while other devices
// print, abandoned breakpoints, exceptions, arena exhaustion, interrupts.

#include <catch2/catch.hpp>

#include <atomic>
#include <sstream>
#include <thread>

#include "support/spawn.h"

using namespace spmd;
using namespace spmd::testing;

namespace {

SourceLoc at(std::uint32_t line) { return SourceLoc{"f.py", line, 5}; }

const DeviceStatus& status_of(const Report& r, int device) {
  for (const auto& d : r.devices) {
    if (d.device == device) return d;
  }
  throw std::runtime_error("no status for device " + std::to_string(device));
}

// Spins on count_steps() forever at `line` (only a budget or an interrupt ends it).
[[noreturn]] void loop_forever(std::uint32_t line) {
  set_current_location(at(line));
  while (true) count_steps();
}

}  // namespace

TEST_CASE("runtime::faults: a device that loops without collectives exceeds the step budget", "[runtime][faults]") {
  Runtime rt({.devices = 4, .threads = 1, .step_budget = 10000});
  auto e = expect_error<BudgetExceeded>([&] {
    run_on(rt, 4, {}, [](std::span<const Array>) {
      if (current_device().id == 2) loop_forever(20);
      return std::vector<Array>{psum(ones({1}), "i", {}, at(10))};
    });
  });
  const Report& r = e.report();
  REQUIRE(r.kind == "BudgetExceeded");
  REQUIRE(r.device == 2);
  REQUIRE(r.message == "device 2 exceeded the step budget of 10000 interpreter steps");
  REQUIRE(r.where == at(20));
  REQUIRE(r.devices.size() == 4);
  REQUIRE(status_of(r, 2).state == "raised");
  REQUIRE(status_of(r, 2).loc == at(20));
  for (int d : {0, 1, 3}) {
    INFO("device " << d);
    REQUIRE(status_of(r, d).state == "stopped");
    REQUIRE(status_of(r, d).detail == "stopped while waiting at psum over 'i' #0");
    REQUIRE(status_of(r, d).loc == at(10));
  }
  // The Runtime is usable again, and its arenas are empty.
  auto ok = run_on(rt, 4, {}, [](std::span<const Array>) { return std::vector<Array>{psum(ones({1}), "i")}; });
  REQUIRE(ok[0].to_doubles() == std::vector<double>{4, 4, 4, 4});
  for (int d = 0; d < 4; ++d) REQUIRE(rt.arena_usage(d).live_bytes == 0);
}

TEST_CASE("runtime::faults: every device loops, the step budget stops the first, the report places each",
          "[runtime][faults]") {
  auto threads = GENERATE(1, 2);
  Runtime rt({.devices = 4, .threads = threads, .step_budget = 5000});
  auto e = expect_error<BudgetExceeded>([&] {
    run_on(rt, 4, {}, [](std::span<const Array>) -> std::vector<Array> {
      loop_forever(30 + static_cast<std::uint32_t>(current_device().id));
    });
  });
  const Report& r = e.report();
  REQUIRE(r.device >= 0);
  REQUIRE(r.device < 4);
  REQUIRE(r.message == "device " + std::to_string(r.device) + " exceeded the step budget of 5000 interpreter steps");
  for (int d = 0; d < 4; ++d) {
    INFO("device " << d);
    const DeviceStatus& s = status_of(r, d);
    if (d == r.device) {
      REQUIRE(s.state == "raised");
      REQUIRE(s.loc == at(30 + static_cast<std::uint32_t>(d)));
    } else {
      REQUIRE(s.state == "stopped");
      // A device the scheduler had not reached yet stops before it ran.
      if (s.detail == "stopped while running") {
        REQUIRE(s.loc == at(30 + static_cast<std::uint32_t>(d)));
      } else {
        REQUIRE(s.detail == "stopped before it ran");
      }
    }
  }
}

TEST_CASE("runtime::faults: every device loops, the time budget stops the run and places each device",
          "[runtime][faults]") {
  auto threads = GENERATE(1, 2);
  Runtime rt({.devices = 4, .threads = threads, .time_budget_s = 0.05});
  auto e = expect_error<BudgetExceeded>([&] {
    run_on(rt, 4, {}, [](std::span<const Array>) -> std::vector<Array> {
      loop_forever(40 + static_cast<std::uint32_t>(current_device().id));
    });
  });
  const Report& r = e.report();
  REQUIRE(r.kind == "BudgetExceeded");
  REQUIRE(r.device >= 0);
  REQUIRE(r.device < 4);
  REQUIRE(r.message == "the run exceeded its time budget of 0.05 s while device " + std::to_string(r.device) +
                           " was running");
  REQUIRE(r.where == at(40 + static_cast<std::uint32_t>(r.device)));
  REQUIRE(r.devices.size() == 4);
  for (int d = 0; d < 4; ++d) {
    INFO("device " << d);
    const DeviceStatus& s = status_of(r, d);
    REQUIRE(s.state == (d == r.device ? "raised" : "stopped"));
    if (s.detail != "stopped before it ran") REQUIRE(s.loc == at(40 + static_cast<std::uint32_t>(d)));
  }
}

TEST_CASE("runtime::faults: a deadlock while other devices are inside debug_print loses no print",
          "[runtime][faults]") {
  auto threads = GENERATE(1, 2);
  std::ostringstream out;
  RuntimeOptions opts{.devices = 4, .threads = threads};
  opts.print_sink = [&](const DebugPrint& p) { out << "[" << p.device_label << "] " << p.text << "\n"; };
  Runtime rt(opts);
  auto e = expect_error<DeadlockError>([&] {
    run_on(rt, 4, {}, [](std::span<const Array>) {
      int d = current_device().id;
      // Device 3 is still printing while devices 0..2 block at the barrier.
      for (int k = 0; k < (d == 3 ? 200 : 50); ++k) debug_print("line " + std::to_string(k), at(50));
      if (d != 3) barrier("i", at(51));
      return std::vector<Array>{};
    });
  });
  std::ostringstream expected;
  for (int d = 0; d < 4; ++d) {
    for (int k = 0; k < (d == 3 ? 200 : 50); ++k) expected << "[device " << d << "] line " << k << "\n";
  }
  REQUIRE(out.str() == expected.str());
  const Report& r = e.report();
  REQUIRE(r.kind == "Deadlock");
  REQUIRE(r.where == at(51));
  for (int d = 0; d < 3; ++d) {
    REQUIRE(status_of(r, d).state == "waiting");
    REQUIRE(status_of(r, d).loc == at(51));
  }
  REQUIRE(status_of(r, 3).state == "finished");
  REQUIRE(status_of(r, 3).detail == "returned after 0 collectives");
}

TEST_CASE("runtime::faults: a breakpoint abandoned while other devices wait at a collective", "[runtime][faults]") {
  RuntimeOptions opts{.devices = 4};
  int handler_calls = 0;
  opts.breakpoint_handler = [&](std::span<const BreakpointStop> stops) {
    ++handler_calls;
    REQUIRE(stops.size() == 2);
    throw InvalidArgument(make_report("BreakpointAbandoned", "the debugger session ended"));
  };
  Runtime rt(opts);
  auto e = expect_error<InvalidArgument>([&] {
    run_on(rt, 4, {}, [](std::span<const Array>) {
      if (current_device().id < 2) breakpoint({}, at(60));
      return std::vector<Array>{psum(ones({1}), "i", {}, at(61))};
    });
  });
  REQUIRE(handler_calls == 1);
  const Report& r = e.report();
  REQUIRE(r.kind == "BreakpointAbandoned");
  REQUIRE(r.message == "the debugger session ended");
  for (int d : {0, 1}) {
    REQUIRE(status_of(r, d).state == "stopped");
    REQUIRE(status_of(r, d).detail == "stopped at a breakpoint");
    REQUIRE(status_of(r, d).loc == at(60));
  }
  for (int d : {2, 3}) {
    REQUIRE(status_of(r, d).state == "stopped");
    REQUIRE(status_of(r, d).detail == "stopped while waiting at psum over 'i' #0");
    REQUIRE(status_of(r, d).loc == at(61));
  }
}

TEST_CASE("runtime::faults: a breakpoint, then a deadlock once the devices continue", "[runtime][faults]") {
  RuntimeOptions opts{.devices = 3};
  int handler_calls = 0;
  opts.breakpoint_handler = [&](std::span<const BreakpointStop>) { ++handler_calls; };
  Runtime rt(opts);
  auto e = expect_error<DeadlockError>([&] {
    run_on(rt, 3, {}, [](std::span<const Array>) {
      if (current_device().id == 2) return std::vector<Array>{};
      breakpoint({}, at(70));
      return std::vector<Array>{psum(ones({1}), "i", {}, at(71))};
    });
  });
  REQUIRE(handler_calls == 1);
  const Report& r = e.report();
  REQUIRE(r.where == at(71));
  REQUIRE(status_of(r, 0).state == "waiting");
  REQUIRE(status_of(r, 1).state == "waiting");
  REQUIRE(status_of(r, 2).state == "finished");
}

TEST_CASE("runtime::faults: an exception in one device while another is at a breakpoint", "[runtime][faults]") {
  auto threads = GENERATE(1, 2);
  RuntimeOptions opts{.devices = 3, .threads = threads};
  opts.breakpoint_handler = [](std::span<const BreakpointStop>) {};
  Runtime rt(opts);
  auto e = expect_error<DeviceError>([&] {
    run_on(rt, 3, {}, [](std::span<const Array>) {
      int d = current_device().id;
      if (d == 0) breakpoint({}, at(80));
      if (d == 1) {
        set_current_location(at(81));
        throw 42;  // not even a std::exception
      }
      return std::vector<Array>{psum(ones({1}), "i", {}, at(82))};
    });
  });
  const Report& r = e.report();
  REQUIRE(r.kind == "DeviceError");
  REQUIRE(r.device == 1);
  REQUIRE(r.message == "device 1 raised an exception that is not a std::exception");
  REQUIRE(r.where == at(81));
  REQUIRE(status_of(r, 1).state == "raised");
  // Device 0 stopped at its breakpoint, or had not reached it yet (threads=2).
  REQUIRE(status_of(r, 0).state == "stopped");
  REQUIRE(status_of(r, 2).state == "stopped");
}

TEST_CASE("runtime::faults: an arena out of memory while others wait, every arena is released", "[runtime][faults]") {
  auto threads = GENERATE(1, 2);
  Runtime rt({.devices = 4, .threads = threads, .arena_capacity = 64 * 1024});
  auto e = expect_error<OutOfMemoryError>([&] {
    run_on(rt, 4, {}, [](std::span<const Array>) {
      Array keep = zeros({1024});  // 4 KiB held by every device
      if (current_device().id == 3) {
        set_current_location(at(90));
        return std::vector<Array>{keep, zeros({64 * 1024})};  // 256 KiB
      }
      return std::vector<Array>{psum(keep, "i", {}, at(91))};
    });
  });
  const Report& r = e.report();
  REQUIRE(r.kind == "OutOfMemoryError");
  REQUIRE(r.device == 3);
  REQUIRE(r.message == "device 3: out of memory allocating 256.0 KiB for zeros");
  REQUIRE(r.where == at(90));
  REQUIRE(status_of(r, 3).state == "raised");
  for (int d = 0; d < 4; ++d) REQUIRE(rt.arena_usage(d).live_bytes == 0);
}

TEST_CASE("runtime::faults: interrupt() stops looping devices and every later run", "[runtime][faults]") {
  auto threads = GENERATE(1, 2);
  Runtime rt({.devices = 4, .threads = threads});
  std::atomic<int> looping{0};
  std::thread interrupter([&] {
    while (looping.load() < 4) std::this_thread::yield();
    rt.interrupt("interrupted by the test");
  });
  auto e = expect_error<Error>([&] {
    run_on(rt, 4, {}, [&](std::span<const Array>) -> std::vector<Array> {
      set_current_location(at(100));
      looping.fetch_add(1);
      while (true) count_steps();
    });
  });
  interrupter.join();
  REQUIRE(e.report().kind == "Interrupted");
  REQUIRE(e.report().message == "interrupted by the test");
  REQUIRE(rt.interrupted());
  for (int d = 0; d < 4; ++d) {
    REQUIRE(status_of(e.report(), d).state == "stopped");
    REQUIRE(status_of(e.report(), d).detail == "stopped while running");
    REQUIRE(status_of(e.report(), d).loc == at(100));
  }
  // Sticky: a run that starts after the interrupt stops before its devices run.
  auto again = expect_error<Error>([&] {
    run_on(rt, 4, {}, [](std::span<const Array>) { return std::vector<Array>{psum(ones({1}), "i")}; });
  });
  REQUIRE(again.report().kind == "Interrupted");
  for (int d = 0; d < 4; ++d) REQUIRE(status_of(again.report(), d).detail == "stopped before it ran");
  REQUIRE_THROWS_AS(rt.check_interrupted(), Error);
}

TEST_CASE("runtime::faults: interrupt() wakes devices parked at a collective", "[runtime][faults]") {
  // The waker runs on another OS thread: single-threaded runs park devices
  // without a condition variable, and this is the one remote wake-up. One
  // thread also makes the order exact: devices 0-2 park before 3 starts.
  Runtime rt({.devices = 4, .threads = 1});
  std::atomic<bool> looping{false};
  std::thread interrupter([&] {
    while (!looping.load()) std::this_thread::yield();
    rt.interrupt("interrupted by the test");
  });
  auto e = expect_error<Error>([&] {
    run_on(rt, 4, {}, [&](std::span<const Array>) -> std::vector<Array> {
      if (current_device().id != 3) return {psum(ones({1}), "i", {}, at(110))};
      set_current_location(at(111));
      looping.store(true);
      while (true) count_steps();
    });
  });
  interrupter.join();
  REQUIRE(e.report().kind == "Interrupted");
  for (int d = 0; d < 3; ++d) {
    REQUIRE(status_of(e.report(), d).state == "stopped");
    REQUIRE(status_of(e.report(), d).detail == "stopped while waiting at psum over 'i' #0");
    REQUIRE(status_of(e.report(), d).loc == at(110));
  }
  REQUIRE(status_of(e.report(), 3).detail == "stopped while running");
}
