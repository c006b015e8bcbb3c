// Memory kinds and the DeviceOps dispatch, on the CPU: every op placed on a
// fake GPU device (memory the host cannot touch, see support/fake_device.h)
// must go through DeviceOps and give the host's result bit for bit.

#include <catch2/catch.hpp>

#include <functional>
#include <limits>

#include "support/fake_device.h"
#include "support/op_cases.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/format.h"
#include "spmd/core/layout.h"
#include "spmd/core/linalg.h"
#include "spmd/core/reduction.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;
using spmd::testing::FakeDevicePlacement;
using spmd::testing::FakeMemory;
using spmd::testing::ScopedFakeDeviceOps;


TEST_CASE("core::DeviceOps: every op on a fake GPU device equals the host result", "[core][device]") {
  ScopedFakeDeviceOps fake;
  for (const spmd::testing::OpCase& c : spmd::testing::op_cases()) {
    INFO(c.name);
    Array expected = c.fn(c.inputs);
    REQUIRE(expected.memory_kind() == MemoryKind::kHost);
    for (bool upload_first : {true, false}) {
      INFO((upload_first ? "device inputs" : "host inputs used inside the device"));
      FakeDevicePlacement device(3);
      std::vector<Array> inputs;
      for (const Array& x : c.inputs) inputs.push_back(upload_first ? detail::in_placement_memory(x, "test") : x);
      for (const Array& x : inputs) REQUIRE(x.memory_kind() == (upload_first ? MemoryKind::kCuda : MemoryKind::kHost));
      int calls_before = fake.ops().calls.load();
      Array got = c.fn(inputs);
      CHECK(got.memory_kind() == MemoryKind::kCuda);
      CHECK(FakeMemory::instance().is_device(got.raw_data()));
      CHECK(got.device() == 3);
      if (!upload_first) CHECK(fake.ops().calls.load() > calls_before);  // device inputs may give views
      CHECK(got.weak_type() == expected.weak_type());
      CHECK(got.abstract_type() == expected.abstract_type());
      CHECK(got.identical(expected));
      CHECK(to_string(got) == to_string(expected));
    }
  }
}

TEST_CASE("core::Array: memory kind, to_host and element access of device arrays", "[core][device]") {
  ScopedFakeDeviceOps fake;
  Array host = arr({1.5, 2.5, -3.0}, DType::kFloat32);
  CHECK(host.memory_kind() == MemoryKind::kHost);
  CHECK(host.to_host().raw_data() == host.raw_data());  // identity for host arrays
  CHECK(memory_kind_name(MemoryKind::kCuda) == "cuda");
  Array dev;
  {
    FakeDevicePlacement device(1);
    dev = detail::in_placement_memory(host, "test");
    CHECK(dev.memory_kind() == MemoryKind::kCuda);
    CHECK(dev.element_as_double(1) == 2.5);
    CHECK(dev.element_as_int64(2) == -3);
    CHECK(dev.element_as_bool(0));
    CHECK(dev.to_doubles() == std::vector<double>{1.5, 2.5, -3.0});
    CHECK(repr(dev) == repr(host));
    CHECK(format_scalar(dev, 2) == "-3.0");
  }
  Array back = dev.to_host();
  CHECK(back.memory_kind() == MemoryKind::kHost);
  CHECK(back.device() == kHost);
  CHECK(back.identical(host));
  CHECK(dev.identical(host));
  CHECK(fake.ops().downloads.load() > 0);
}

TEST_CASE("core::DeviceOps: device memory without registered ops is a BackendError, never a host read",
          "[core][device]") {
  FakeDevicePlacement device(0);
  Report r = error_of([] { zeros({4}, DType::kFloat32); });
  CHECK(r.kind == "BackendError");
  CHECK(r.message.find("no operations are registered for cuda memory") != std::string::npos);
}

TEST_CASE("core::Arena: device arenas keep the capacity accounting and OutOfMemoryError report", "[core][device]") {
  ScopedFakeDeviceOps fake;
  FakeDevicePlacement device(2, 1024);
  Array ok = zeros({128}, DType::kFloat32);  // 512 bytes
  Report r = error_of([] { zeros({256}, DType::kFloat32); });
  CHECK(r.kind == "OutOfMemoryError");
  CHECK(r.device == 2);
  CHECK(r.message.find("device 2: out of memory allocating 1.0 KiB for zeros") != std::string::npos);
  CHECK(device.arena()->stats().live_bytes == 512);
  CHECK(device.arena()->memory_kind() == MemoryKind::kCuda);
}
