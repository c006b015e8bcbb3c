// Every detection of the rendezvous, with the report's fields.

#include <catch2/catch.hpp>

#include "support/spawn.h"

using namespace spmd;
using namespace spmd::testing;

namespace {
Array four() { return f32({1, 2, 3, 4}, {4}); }
bool detection_contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("rendezvous::mismatch: psum here, all_gather there", "[rendezvous]") {
  Runtime rt({.devices = 4});
  SourceLoc l1{"f.py", 10, 5}, l2{"f.py", 12, 5};
  auto e = expect_error<CollectiveMismatch>([&] {
    run_on(rt, 4, {four()}, [&](std::span<const Array> a) {
      if (current_device().id == 2) return std::vector<Array>{all_gather(a[0], "i", 0, false, {}, l2)};
      return std::vector<Array>{psum(a[0], "i", {}, l1)};
    });
  });
  const Report& r = e.report();
  REQUIRE(r.kind == "CollectiveMismatch");
  REQUIRE(r.message ==
          "collective mismatch at psum over 'i' (collective #0): devices disagree on the op: devices {0, 1, 3} call "
          "psum; device 2 calls all_gather");
  REQUIRE(r.op == "psum");
  REQUIRE(r.axis == "'i'");
  REQUIRE(r.where == l1);
  REQUIRE(r.table.columns == std::vector<std::string>{"devices", "op", "axes", "operands", "params", "where"});
  REQUIRE(r.table.rows.size() == 2);
  REQUIRE(r.table.rows[0] == std::vector<std::string>{"devices {0, 1, 3}", "psum", "'i'", "f32[]", "", "f.py:10:5"});
  REQUIRE(r.table.rows[1] ==
          std::vector<std::string>{"device 2", "all_gather", "'i'", "f32[]", "axis=0 tiled=False", "f.py:12:5"});
  REQUIRE(detection_contains(r.hint, "every device must call the same collective"));
}

TEST_CASE("rendezvous::mismatch: shapes and dtypes differ", "[rendezvous]") {
  Runtime rt({.devices = 4});
  SourceLoc l{"f.py", 7, 1};
  SECTION("shape") {
    auto e = expect_error<CollectiveMismatch>([&] {
      run_on(rt, 4, {}, [&](std::span<const Array>) {
        int d = current_device().id;
        return std::vector<Array>{psum(zeros({d == 3 ? 5 : 4}), "i", {}, l)};
      });
    });
    REQUIRE(e.report().message ==
            "collective mismatch at psum over 'i' (collective #0): devices disagree on the shape: devices {0..2} "
            "bring f32[4]; device 3 brings f32[5]");
    REQUIRE(e.report().table.rows[1][3] == "f32[5]");
  }
  SECTION("dtype") {
    auto e = expect_error<CollectiveMismatch>([&] {
      run_on(rt, 4, {}, [&](std::span<const Array>) {
        int d = current_device().id;
        return std::vector<Array>{psum(zeros({4}, d % 2 ? DType::kInt32 : DType::kFloat32), "i", {}, l)};
      });
    });
    REQUIRE(e.report().message ==
            "collective mismatch at psum over 'i' (collective #0): devices disagree on the dtype: devices {0, 2} "
            "bring f32[4]; devices {1, 3} bring i32[4]");
    REQUIRE(detection_contains(e.report().hint, "same dtype on every device"));
  }
  SECTION("parameters") {
    auto e = expect_error<CollectiveMismatch>([&] {
      run_on(rt, 4, {}, [&](std::span<const Array>) {
        int d = current_device().id;
        return std::vector<Array>{all_gather(zeros({2, 2}), "i", d == 0 ? 1 : 0, false, {}, l)};
      });
    });
    REQUIRE(detection_contains(e.report().message, "devices disagree on the parameters: devices {1..3} bring axis=0 tiled=False; "
                                         "device 0 brings axis=1 tiled=False"));
  }
  SECTION("ppermute pairs (equal ones are shared between devices, different ones compared)") {
    const Permutation ring = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
    const Permutation back = {{1, 0}, {2, 1}, {3, 2}, {0, 3}};
    auto e = expect_error<CollectiveMismatch>([&] {
      run_on(rt, 4, {}, [&](std::span<const Array>) {
        int d = current_device().id;
        return std::vector<Array>{ppermute(zeros({2}), "i", d == 2 ? back : ring, l)};
      });
    });
    REQUIRE(detection_contains(e.report().message,
                               "devices disagree on the parameters: devices {0, 1, 3} bring perm=[(0, 1), (1, 2), (2, 3), "
                               "(3, 0)]; device 2 brings perm=[(1, 0), (2, 1), (3, 2), (0, 3)]"));
  }
  SECTION("call site") {
    auto e = expect_error<CollectiveMismatch>([&] {
      run_on(rt, 4, {}, [&](std::span<const Array>) {
        int d = current_device().id;
        return std::vector<Array>{psum(zeros({2}), "i", {}, d == 1 ? SourceLoc{"f.py", 9, 1} : l)};
      });
    });
    REQUIRE(detection_contains(e.report().message, "devices disagree on the call site: devices {0, 2, 3} bring f.py:7:1; device 1 brings f.py:9:1"));
  }
}

TEST_CASE("rendezvous::axis name: typo gets the closest bound name", "[rendezvous]") {
  Runtime rt({.devices = 2});
  auto e = expect_error<AxisNameError>([&] {
    run_on(rt, 2, {}, [](std::span<const Array>) {
      return std::vector<Array>{psum(ones({2}), "my_device", {}, SourceLoc{"f.py", 3, 9})};
    }, "my_devices");
  });
  REQUIRE(e.report().kind == "AxisNameError");
  REQUIRE(e.report().message == "psum: unbound axis name: 'my_device'. The bound axis names are: 'my_devices'");
  REQUIRE(e.report().hint ==
          "did you mean 'my_devices'? A collective names a bound axis exactly: the axis_name of a pmap or vmap "
          "(pmap(..., axis_name='my_devices')), or a mesh axis of a shard_map");
  REQUIRE(e.report().where == SourceLoc{"f.py", 3, 9});
  REQUIRE(e.report().device >= 0);
}

TEST_CASE("rendezvous::axis name: a collective on the host names the problem", "[rendezvous]") {
  auto e = expect_error<AxisNameError>([&] { psum(ones({2}), "i"); });
  REQUIRE(e.report().message == "psum: unbound axis name: 'i' (called outside any pmap-ed function)");
}

TEST_CASE("rendezvous::deadlock: a device returns early", "[rendezvous][deadlock]") {
  auto threads = GENERATE(1, 2, 4);
  auto seed = GENERATE(0u, 7u);
  Runtime rt({.devices = 4, .threads = threads, .seed = seed});
  SourceLoc l{"f.py", 14, 9};
  auto e = expect_error<DeadlockError>([&] {
    run_on(rt, 4, {four()}, [&](std::span<const Array> a) {
      Array y = psum(a[0], "i", {}, SourceLoc{"f.py", 12, 9});
      if (current_device().id == 2) return std::vector<Array>{y};
      return std::vector<Array>{psum(y, "i", {}, l)};
    });
  });
  const Report& r = e.report();
  REQUIRE(r.kind == "Deadlock");
  REQUIRE(r.message == "deadlock: devices {0, 1, 3} wait at psum over 'i' #1 (f.py:14:9) but device 2 returned after 1 collective");
  REQUIRE(r.where == l);
  REQUIRE(r.op == "psum");
  REQUIRE(r.axis == "'i'");
  REQUIRE(r.devices.size() == 4);
  REQUIRE(r.devices[2].state == "finished");
  REQUIRE(r.devices[0].state == "waiting");
  REQUIRE(r.devices[0].detail == "psum over 'i' #1 f32[]");
  REQUIRE(r.devices[0].collectives_done == 1);
  REQUIRE(r.divergence.collective_index == 1);
  REQUIRE(r.divergence.collective_summary ==
          "#1: devices {0, 1, 3} psum over 'i' f32[] at f.py:14:9; device 2 no collective #1: returned after 1 collective");
  REQUIRE(detection_contains(r.hint, "returned without reaching the collective"));
  REQUIRE(r.devices[0].recent.back() == "#1 psum over 'i' f32[] at f.py:14:9 (entered)");
}

TEST_CASE("rendezvous::deadlock: the report names the decision that differed", "[rendezvous][deadlock]") {
  Runtime rt({.devices = 4});
  SourceLoc cond{"f.py", 5, 8};
  auto e = expect_error<DeadlockError>([&] {
    run_on(rt, 4, {four()}, [&](std::span<const Array> a) {
      bool take = current_device().id == 0;
      record_decision("lax.cond", take ? 1 : 0, cond);
      if (take) return std::vector<Array>{psum(a[0], "i", {}, SourceLoc{"f.py", 6, 12})};
      return std::vector<Array>{a[0]};
    });
  });
  REQUIRE(e.report().divergence.decision_loc == cond);
  REQUIRE(e.report().divergence.decision_summary ==
          "lax.cond at f.py:5:8: took the false branch on devices {1..3}; took the true branch on device 0");
  REQUIRE(detection_contains(e.report().hint, "The first differing decision was lax.cond at f.py:5:8"));
}

TEST_CASE("rendezvous::deadlock: devices wait at different collectives", "[rendezvous][deadlock]") {
  Runtime rt({.devices = 4});
  PmapOptions o;
  o.mesh = {{"x", 2}, {"y", 2}};
  auto e = expect_error<DeadlockError>([&] {
    rt.pmap(
        [](std::span<const Array>) {
          // Device 0 reduces over 'x' while the others reduce over 'y'.
          AxisSet axes = current_device().id == 0 ? AxisSet("x") : AxisSet("y");
          return std::vector<Array>{psum(ones({1}), axes, {}, SourceLoc{"f.py", 20, 1})};
        },
        {}, o);
  });
  REQUIRE(e.report().kind == "Deadlock");
  INFO(e.what());
  REQUIRE(e.report().message ==
          "deadlock: device 0 (x=0, y=0) waits at psum over 'x' #0 (f.py:20:1) but device 2 (x=1, y=0) returned "
          "after 1 collective");
  REQUIRE(detection_contains(e.report().hint, "returned without reaching the collective"));
  REQUIRE(detection_contains(e.report().hint, "Devices wait at different collectives"));
  REQUIRE(e.report().details[2] == "psum over 'y' at f.py:20:1 needs 2 devices; 1 arrived (device 1)");
  REQUIRE(e.report().devices.size() == 4);
}

TEST_CASE("rendezvous::deadlock: nested pmap child skips the inner psum", "[rendezvous][deadlock]") {
  Runtime rt({.devices = 4});
  PmapOptions outer;
  outer.axis_name = "i";
  outer.axis_size = 2;
  auto e = expect_error<DeadlockError>([&] {
    rt.pmap(
        [](std::span<const Array>) {
          PmapOptions inner;
          inner.axis_name = "j";
          inner.axis_size = 2;
          return pmap(
              [](std::span<const Array>) {
                if (current_device().id == 3) return std::vector<Array>{ones({1})};
                return std::vector<Array>{psum(ones({1}), "j")};
              },
              {}, inner);
        },
        {}, outer);
  });
  INFO(e.what());
  REQUIRE(detection_contains(e.report().message, "device 2 (i=1, j=0) waits at psum over 'j' #0"));
  REQUIRE(detection_contains(e.report().message, "device 3 (i=1, j=1) returned after 0 collectives"));
  // The outer level's rows are named by their coordinates, not as devices 0 and 1.
  const auto& d = e.report().devices;
  REQUIRE(d.size() == 6);
  REQUIRE(d[0].label == "outer i=0");
  REQUIRE(d[1].label == "outer i=1");
  REQUIRE(d[2].label == "device 0 (i=0, j=0)");
  REQUIRE(d[5].label == "device 3 (i=1, j=1)");
}

TEST_CASE("rendezvous::deadlock: recent events interleave collectives with other events, newest kept",
          "[rendezvous][deadlock]") {
  Runtime rt({.devices = 2, .recent_events = 5, .print_sink = [](const DebugPrint&) {}});
  auto e = expect_error<DeadlockError>([&] {
    run_on(rt, 2, {}, [&](std::span<const Array>) {
      Array x = ones({2});
      x = psum(x, "i", {}, SourceLoc{"f.py", 10, 5});
      debug_print("a", SourceLoc{"f.py", 11, 5});
      x = psum(x, "i", {}, SourceLoc{"f.py", 12, 5});
      record_decision("if", 1, SourceLoc{"f.py", 13, 5});
      debug_print("b", SourceLoc{"f.py", 14, 5});
      x = pmax(x, "i", {}, SourceLoc{"f.py", 15, 5});
      if (current_device().id == 1) return std::vector<Array>{x};
      return std::vector<Array>{psum(x, "i", {}, SourceLoc{"f.py", 17, 5})};
    });
  });
  const Report& r = e.report();
  REQUIRE(r.devices[0].recent == std::vector<std::string>{
                                     "#1 psum over 'i' f32[2] at f.py:12:5 (done)",
                                     "if at f.py:13:5 -> 1",
                                     "debug_print at f.py:14:5: b",
                                     "#2 pmax over 'i' f32[2] at f.py:15:5 (done)",
                                     "#3 psum over 'i' f32[2] at f.py:17:5 (entered)",
                                 });
  REQUIRE(r.devices[1].recent == std::vector<std::string>{
                                     "#1 psum over 'i' f32[2] at f.py:12:5 (done)",
                                     "if at f.py:13:5 -> 1",
                                     "debug_print at f.py:14:5: b",
                                     "#2 pmax over 'i' f32[2] at f.py:15:5 (done)",
                                     "returned",
                                 });
}

TEST_CASE("rendezvous::deadlock: asking for more recent events than the history keeps retains them all",
          "[rendezvous][deadlock]") {
  // The collective history holds 128 by default; recent_events above that grows it.
  Runtime rt({.devices = 2, .recent_events = 300});
  auto e = expect_error<DeadlockError>([&] {
    run_on(rt, 2, {}, [&](std::span<const Array>) {
      for (int k = 0; k < 200; ++k) barrier("i", SourceLoc{"f.py", 20, 5});
      if (current_device().id == 1) return std::vector<Array>{};
      barrier("i", SourceLoc{"f.py", 22, 5});
      return std::vector<Array>{};
    });
  });
  const auto& recent = e.report().devices[0].recent;
  REQUIRE(recent.size() == 202);
  REQUIRE(recent[0] == "started");
  REQUIRE(recent[1] == "#0 barrier over 'i' at f.py:20:5 (done)");
  REQUIRE(recent[200] == "#199 barrier over 'i' at f.py:20:5 (done)");
  REQUIRE(recent[201] == "#200 barrier over 'i' at f.py:22:5 (entered)");
}
