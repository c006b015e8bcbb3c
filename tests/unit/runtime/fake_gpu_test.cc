// The runtime over device memory, on the CPU: pmaps on the "fakegpu" backend
// (simulated devices whose arrays live in memory the host cannot touch, and
// collectives through the device data plane) must give the simulator's
// results bit for bit: input splitting, replication, output stacking,
// collectives with every layout, breakpoints and debug prints.

#include <catch2/catch.hpp>

#include <set>
#include <sstream>

#include "support/collective_programs.h"
#include "support/fake_device.h"
#include "support/spawn.h"

using namespace spmd;
using namespace spmd::testing;

namespace {

PmapOptions axis(std::string name) {
  PmapOptions o;
  o.axis_name = std::move(name);
  return o;
}


}  // namespace

TEST_CASE("runtime::fakegpu: pmaps over device memory equal the simulator bit for bit", "[runtime][device]") {
  register_fake_gpu_backend();
  ScopedFakeDeviceOps ops;
  for (int n : {4, 3, 1}) {
  for (const Program& p : programs(n)) {
    INFO(p.name << " on " << n << " devices");
    auto expected = run_with("sim", n, p);
    auto got = run_with("fakegpu", n, p);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("output " << i << ": " << to_string(got[i]) << " vs " << to_string(expected[i]));
      CHECK(got[i].memory_kind() == MemoryKind::kHost);  // stacked on the host
      CHECK(got[i].identical(expected[i]));
      CHECK(got[i].weak_type() == expected[i].weak_type());
    }
  }
  }
  CHECK(FakeMemory::instance().live_blocks() == 0);  // every device buffer was released
}

TEST_CASE("runtime::fakegpu: breakpoints and debug prints read device arrays through host copies",
          "[runtime][device]") {
  register_fake_gpu_backend();
  ScopedFakeDeviceOps ops;
  RuntimeOptions o;
  o.devices = 2;
  o.backend = "fakegpu";
  std::ostringstream prints;
  o.print_sink = [&](const DebugPrint& p) { prints << p.device_label << ": " << p.text << "\n"; };
  std::vector<std::string> seen;
  o.breakpoint_handler = [&](std::span<const BreakpointStop> stops) {
    for (const auto& s : stops) {
      for (const auto& [name, v] : s.values) {
        CHECK(v.memory_kind() == MemoryKind::kHost);
        seen.push_back(s.device_label + " " + name + "=" + to_string(v));
      }
    }
  };
  Runtime rt(o);
  Array x = Array::from_doubles(std::vector<double>{1, 2, 3, 4}, {2, 2}, DType::kFloat32);
  rt.pmap(
      [](std::span<const Array> a) {
        Array y = a[0] * Array::scalar(2.0, DType::kFloat32, true);
        debug_print("y = " + to_string(y));
        breakpoint({{"y", y}});
        return std::vector<Array>{y};
      },
      std::vector<Array>{x}, axis("i"));
  CHECK(prints.str() == "device 0: y = [2. 4.]\ndevice 1: y = [6. 8.]\n");
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == "device 0 y=[2. 4.]");
  CHECK(seen[1] == "device 1 y=[6. 8.]");
}

TEST_CASE("runtime::fakegpu: the arena capacity bounds device memory with the usual report", "[runtime][device]") {
  register_fake_gpu_backend();
  ScopedFakeDeviceOps ops;
  RuntimeOptions o;
  o.devices = 2;
  o.backend = "fakegpu";
  o.arena_capacity = 4096;
  Runtime rt(o);
  Array x = Array::from_doubles(std::vector<double>{1, 2}, {2}, DType::kFloat32);
  auto e = expect_error<OutOfMemoryError>([&] {
    rt.pmap([](std::span<const Array>) { return std::vector<Array>{zeros({4096}, DType::kFloat32)}; },
            std::vector<Array>{x}, axis("i"));
  });
  CHECK(e.report().kind == "OutOfMemoryError");
  CHECK(e.report().message.find("out of memory allocating 16.0 KiB for zeros") != std::string::npos);
}

TEST_CASE("runtime::fakegpu: transport groups are the devices of each axis group, in axis order",
          "[runtime][device]") {
  register_fake_gpu_backend();
  ScopedFakeDeviceOps ops;
  auto groups_of = [](std::function<void(const Array&)> body) {
    {
      std::lock_guard<std::mutex> lock(FakeTransport::log_mu());
      FakeTransport::log().clear();
    }
    RuntimeOptions o;
    o.devices = 4;
    o.backend = "fakegpu";
    Runtime rt(o);
    PmapOptions p;
    p.mesh = {{"a", 2}, {"b", 2}};
    Array x = Array::from_doubles(std::vector<double>{1, 2, 3, 4}, {2, 2}, DType::kFloat32);
    rt.pmap(
        [&](std::span<const Array> a) {
          body(a[0]);
          return std::vector<Array>{a[0]};
        },
        std::vector<Array>{x}, p);
    std::lock_guard<std::mutex> lock(FakeTransport::log_mu());
    std::set<std::pair<std::vector<DeviceId>, std::string>> seen;
    for (const auto& g : FakeTransport::log()) seen.insert({g.devices, g.op});
    return seen;
  };
  using G = std::set<std::pair<std::vector<DeviceId>, std::string>>;
  CHECK(groups_of([](const Array& x) { psum(x, "b"); }) ==
        G{{{0, 1}, "psum over 'b' #0"}, {{2, 3}, "psum over 'b' #0"}});
  CHECK(groups_of([](const Array& x) { psum(x, "a"); }) ==
        G{{{0, 2}, "psum over 'a' #0"}, {{1, 3}, "psum over 'a' #0"}});
  // A tuple of axes orders the group as named: ('b', 'a') is b-major.
  CHECK(groups_of([](const Array& x) { psum(x, AxisSet({"b", "a"})); }) ==
        G{{{0, 2, 1, 3}, "psum over ('b', 'a') #0"}});
  CHECK(groups_of([](const Array& x) { psum(x, AxisSet({"a", "b"}), {{0, 3}, {2, 1}}); }) ==
        G{{{0, 3}, "psum over ('a', 'b') #0"}, {{2, 1}, "psum over ('a', 'b') #0"}});
}

TEST_CASE("runtime::fakegpu: a backend that cannot nest ends a nested pmap's devices with its error",
          "[runtime][device]") {
  register_fake_gpu_backend();
  ScopedFakeDeviceOps ops;
  RuntimeOptions o;
  o.devices = 4;
  o.backend = "fakegpu-flat";
  Runtime rt(o);
  PmapOptions outer = axis("i");
  outer.axis_size = 2;
  try {
    rt.pmap(
        [](std::span<const Array>) {
          PmapOptions inner = axis("j");
          inner.axis_size = 2;
          return pmap([](std::span<const Array>) { return std::vector<Array>{}; }, {}, inner);
        },
        {}, outer);
    FAIL("the nested pmap ran");
  } catch (const BackendError& e) {
    const Report& r = e.report();
    REQUIRE(r.message == "nested pmap is not supported on the fakegpu-flat backend");
    // The first nested pmap's two devices were refused with the backend's
    // error; that stopped the run, so both outer devices ended stopped.
    int raised = 0, stopped = 0;
    for (const DeviceStatus& d : r.devices) {
      if (d.state == "raised") {
        ++raised;
        REQUIRE(d.detail == "raised BackendError: nested pmap is not supported on the fakegpu-flat backend");
      }
      if (d.state == "stopped") ++stopped;
    }
    INFO(r.to_text());
    REQUIRE(raised == 2);
    REQUIRE(stopped == 2);
  }
}
