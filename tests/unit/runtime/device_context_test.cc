// A device's life cycle as DeviceContext owns it: each transition is a
// method, the ones the life cycle does not have throw, and what ended a
// device (the first reason the run gave, the error it raised) is kept as data.

#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>

#include "rendezvous/communicator.h"
#include "runtime/backend_registry.h"
#include "runtime/device_context.h"
#include "runtime/run.h"

using spmd::SourceLoc;
using spmd::detail::Arrival;
using spmd::detail::CollectiveSignature;
using spmd::detail::DeviceContext;
using spmd::detail::DeviceState;

namespace {

// A run of the simulator's devices, none launched: the contexts are driven by hand.
struct Fixture {
  spmd::detail::RuntimeState state;
  std::unique_ptr<spmd::detail::Run> run;
  Fixture() {
    state.options.devices = 2;
    state.backend = spmd::detail::create_backend("sim", 2, 1, 0, state.options.fiber_stack_size);
    state.arenas.resize(2);
    state.local = {0, 2};
    run = std::make_unique<spmd::detail::Run>(state, spmd::RunInfo{});
  }
  DeviceContext& device(int id, DeviceContext* parent = nullptr) {
    return run->add_context(parent, id, {{"i", 2, id}}, id, 2, 1);
  }
};

// Device `d` arriving at collective #seq, a psum whose call site is f.py:line.
struct ParkedAt {
  CollectiveSignature sig;
  Arrival arrival;
  ParkedAt(DeviceContext& d, std::int64_t seq, std::uint32_t line) {
    sig.loc = SourceLoc{"f.py", line, 5};
    arrival.ctx = &d;
    arrival.sig = &sig;
    arrival.seq = seq;
  }
  ParkedAt(const ParkedAt&) = delete;
};

}  // namespace

TEST_CASE("runtime::DeviceContext: ready, running, parked at a collective, woken, finished", "[runtime][lifecycle]") {
  Fixture f;
  DeviceContext& d = f.device(0);
  REQUIRE(d.state() == DeviceState::kReady);
  REQUIRE_FALSE(d.ended());
  d.start();
  REQUIRE(d.state() == DeviceState::kRunning);

  ParkedAt at(d, 0, 9);
  d.begin_wait(DeviceState::kWaitingCollective, &at.arrival);
  REQUIRE(d.state() == DeviceState::kWaitingCollective);
  REQUIRE(d.waiting() == &at.arrival);
  REQUIRE_FALSE(d.released());
  d.complete_collective();
  d.wake();
  REQUIRE(d.state() == DeviceState::kRunning);
  REQUIRE(d.waiting() == nullptr);
  REQUIRE(d.released());
  REQUIRE(d.collectives_done() == 1);

  d.current_loc = SourceLoc{"f.py", 12, 3};
  d.finish();
  REQUIRE(d.state() == DeviceState::kFinished);
  REQUIRE(d.ended());
  REQUIRE(d.end_loc().line == 12);
}

TEST_CASE("runtime::DeviceContext: a transition the life cycle does not have is a logic_error naming both states",
          "[runtime][lifecycle]") {
  Fixture f;
  DeviceContext& d = f.device(1);
  // Not started: it can neither wait nor finish.
  REQUIRE_THROWS_WITH(d.begin_wait(DeviceState::kAtBreakpoint),
                      Catch::Contains("device 1 cannot go from not started to at breakpoint"));
  REQUIRE_THROWS_AS(d.finish(), std::logic_error);
  REQUIRE(d.state() == DeviceState::kReady);  // a refused transition changes nothing
  d.start();
  REQUIRE_THROWS_WITH(d.start(), Catch::Contains("cannot go from running to running"));
  REQUIRE_THROWS_AS(d.wake(), std::logic_error);  // running: nothing to wake from
  d.finish();
  // Ended is final.
  REQUIRE_THROWS_WITH(d.stop(), Catch::Contains("cannot go from finished to stopped"));
  REQUIRE_THROWS_AS(d.raise({"ValueError", "late", {}}), std::logic_error);
  REQUIRE(d.state() == DeviceState::kFinished);
}

TEST_CASE("runtime::DeviceContext: the first stop reason stands, a parked device says what it was parked at",
          "[runtime][lifecycle]") {
  Fixture f;
  DeviceContext& waiting = f.device(0);
  waiting.start();
  ParkedAt at(waiting, 4, 7);
  waiting.begin_wait(DeviceState::kWaitingCollective, &at.arrival);
  waiting.note_stop_while_parked();
  waiting.note_stop("stopped while running", SourceLoc{"f.py", 1, 1});  // later: ignored
  waiting.stop();
  REQUIRE(waiting.state() == DeviceState::kAborted);
  REQUIRE(waiting.end_detail().rfind("stopped while waiting at ", 0) == 0);
  REQUIRE(waiting.end_detail().find("#4") != std::string::npos);
  REQUIRE(waiting.end_loc().line == 7);

  DeviceContext& fresh = f.device(1);
  fresh.start();
  fresh.stop();  // never ran a line
  REQUIRE(fresh.end_detail() == "stopped before it ran");
}

TEST_CASE("runtime::DeviceContext: a breakpoint's values go when it is left, a raised error keeps its line",
          "[runtime][lifecycle]") {
  Fixture f;
  DeviceContext& d = f.device(0);
  d.start();
  d.hold_breakpoint({{"x", spmd::Array()}}, SourceLoc{"f.py", 3, 1});
  d.begin_wait(DeviceState::kAtBreakpoint);
  REQUIRE(d.breakpoint_values().size() == 1);
  REQUIRE(d.breakpoint_loc().line == 3);
  d.wake();
  REQUIRE(d.breakpoint_values().empty());

  d.current_loc = SourceLoc{"f.py", 20, 1};
  d.raise({"NameError", "name 'y' is not defined", SourceLoc{"f.py", 5, 2}});
  REQUIRE(d.state() == DeviceState::kRaised);
  REQUIRE(d.raised()->kind == "NameError");
  REQUIRE(d.raised()->text() == "raised NameError: name 'y' is not defined");
  REQUIRE(d.end_loc().line == 5);  // where it was raised, not where the device stood last
}

TEST_CASE("runtime::DeviceContext: a parent in a nested pmap waits for its last child", "[runtime][lifecycle]") {
  Fixture f;
  DeviceContext& parent = f.device(0);
  parent.start();
  parent.wait_for_children(2);
  REQUIRE(parent.state() == DeviceState::kWaitingChildren);
  REQUIRE_FALSE(parent.child_ended());
  REQUIRE(parent.child_ended());
  parent.wake();
  REQUIRE(parent.state() == DeviceState::kRunning);
}
