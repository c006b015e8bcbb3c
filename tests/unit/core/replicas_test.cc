// Arrays of equal contents on several devices over one block of host memory:
// one pointer, each array owned by and charged to its own device.

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/arena.h"
#include "core/placement.h"
#include "core/replicas.h"
#include "spmd/detail/buffer.h"
#include "spmd/error.h"

using namespace spmd;
using spmd::detail::Arena;

namespace {

std::vector<std::shared_ptr<Arena>> arenas(std::vector<std::size_t> capacities, MemoryKind kind = MemoryKind::kHost) {
  std::vector<std::shared_ptr<Arena>> out;
  for (std::size_t d = 0; d < capacities.size(); ++d) {
    out.push_back(std::make_shared<Arena>(static_cast<DeviceId>(d), capacities[d], "device " + std::to_string(d), kind));
  }
  return out;
}

}  // namespace

TEST_CASE("core::replicas: one block, one array per device, each charged to its own arena", "[core][arena]") {
  auto devices = arenas({1 << 20, 1 << 20, 1 << 20});
  std::vector<Array> replicas = detail::uninitialized_replicas(devices, {10, 25}, DType::kFloat32, "psum output");
  REQUIRE(replicas.size() == 3);
  float* data = replicas[0].mutable_data<float>();
  for (int i = 0; i < 250; ++i) data[i] = static_cast<float>(i) * 0.5f;
  for (std::size_t d = 0; d < 3; ++d) {
    INFO("device " << d);
    CHECK(replicas[d].device() == static_cast<DeviceId>(d));
    CHECK(replicas[d].shape() == Shape{10, 25});
    CHECK(replicas[d].raw_data() == data);
    CHECK(replicas[d].element_as_double(249) == 124.5);
    CHECK(devices[d]->stats().live_bytes == 1000);
    CHECK(devices[d]->stats().allocations == 1);
  }
  // Dropping one device's array frees its charge only; the block lives on.
  replicas[0] = Array();
  CHECK(devices[0]->stats().live_bytes == 0);
  CHECK(devices[1]->stats().live_bytes == 1000);
  CHECK(replicas[2].element_as_double(3) == 1.5);
  replicas.clear();
  for (const auto& a : devices) CHECK(a->stats().live_bytes == 0);
  for (const auto& a : devices) CHECK(a->stats().peak_bytes == 1000);
}

TEST_CASE("core::replicas: a device over capacity fails as its own allocation would, charging nobody",
          "[core][arena]") {
  auto devices = arenas({1 << 20, 512, 1 << 20});
  auto e = [&] {
    try {
      detail::uninitialized_replicas(devices, {1000}, DType::kFloat32, "all_gather output");
    } catch (const OutOfMemoryError& e) {
      return e;
    }
    throw std::runtime_error("expected OutOfMemoryError");
  }();
  CHECK(e.report().device == 1);
  CHECK(e.report().op == "all_gather output");
  CHECK(e.report().message == "device 1: out of memory allocating 3.9 KiB for all_gather output");
  for (const auto& a : devices) CHECK(a->stats().live_bytes == 0);
}

TEST_CASE("core::replicas: GPU-memory arenas never share a block", "[core][arena]") {
  auto devices = arenas({1 << 20, 1 << 20}, MemoryKind::kCuda);
  CHECK_THROWS_AS(detail::uninitialized_replicas(devices, {4}, DType::kFloat32, "psum output"), std::logic_error);
  for (const auto& a : devices) CHECK(a->stats().live_bytes == 0);
}

TEST_CASE("core::replicas: a filled array's contents shared with other devices, each charged as for a copy",
          "[core][arena]") {
  auto devices = arenas({1 << 20, 1 << 20, 2000});
  detail::Placement on0{nullptr, devices[0], 0};
  std::optional<detail::SharedContents> contents;
  Array original;
  {
    detail::PlacementScope scope(&on0);
    original = Array::from_doubles(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}, DType::kFloat32).with_weak_type(true);
    contents = detail::SharedContents::of(original);
  }
  REQUIRE(contents.has_value());
  CHECK(devices[0]->stats().live_bytes == 24);
  Array on1 = contents->on(devices[1], "replicated pmap input");
  CHECK(on1.device() == 1);
  CHECK(on1.shares_memory_with(original));
  CHECK(on1.shape() == Shape{2, 3});
  CHECK(on1.weak_type());
  CHECK(devices[1]->stats().live_bytes == 24);
  // The array it came from goes; the block stays for the others, and its
  // own device is no longer charged.
  original = Array();
  CHECK(devices[0]->stats().live_bytes == 0);
  CHECK(on1.to_doubles() == std::vector<double>{1, 2, 3, 4, 5, 6});
  Array on2 = contents->on(devices[2], "replicated pmap input");
  contents.reset();
  on1 = Array();
  CHECK(on2.element_as_double(5) == 6);
  on2 = Array();
  for (const auto& a : devices) CHECK(a->stats().live_bytes == 0);

  // Over capacity: the taker's own OutOfMemoryError.
  Array big = Array::from_doubles(std::vector<double>(1000, 1.0), {1000}, DType::kFloat32);
  auto e = [&] {
    try {
      detail::SharedContents::of(big)->on(devices[2], "sub output");
    } catch (const OutOfMemoryError& e) {
      return e;
    }
    throw std::runtime_error("expected OutOfMemoryError");
  }();
  CHECK(e.report().device == 2);
  CHECK(e.report().message == "device 2: out of memory allocating 3.9 KiB for sub output");
  CHECK(devices[2]->stats().live_bytes == 0);
}

TEST_CASE("core::replicas: arrays in GPU memory have no shareable contents", "[core][arena]") {
  auto gpu = arenas({1 << 20}, MemoryKind::kCuda);
  detail::Placement on_gpu{nullptr, gpu[0], 0};
  detail::PlacementScope scope(&on_gpu);
  Array a = Array::uninitialized({4}, DType::kFloat32, "x");
  CHECK_FALSE(detail::SharedContents::of(a).has_value());
  CHECK_THROWS_AS(detail::Buffer::over_block(gpu[0], std::make_shared<int>(0), 4, "x"), std::logic_error);
}

TEST_CASE("core::replicas: a row along the first axis is read in place, charged as a copy of the row",
          "[core][arena]") {
  auto devices = arenas({1 << 20, 1 << 20, 1 << 20});
  detail::Placement on0{nullptr, devices[0], 0};
  std::optional<detail::SharedContents> contents;
  Array original;
  {
    detail::PlacementScope scope(&on0);
    original = Array::from_doubles(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 2, 2},
                                   DType::kFloat32)
                   .with_weak_type(true);
    contents = detail::SharedContents::of(original);
  }
  Array row2 = contents->row(2).on(devices[2], "pmap input shard");
  CHECK(row2.shape() == Shape{2, 2});
  CHECK(row2.weak_type());
  CHECK(row2.device() == 2);
  CHECK(row2.raw_data() == static_cast<const float*>(original.raw_data()) + 8);
  CHECK(devices[2]->stats().live_bytes == 16);
  Array row0 = contents->row(0).on(devices[1], "pmap input shard");
  CHECK(row0.raw_data() == original.raw_data());
  CHECK_FALSE(row0.identical(row2));
  // The rows keep the whole block: the original and the contents may go.
  original = Array();
  contents.reset();
  CHECK(row2.to_doubles() == std::vector<double>{9, 10, 11, 12});
  CHECK(row0.to_doubles() == std::vector<double>{1, 2, 3, 4});
  row0 = Array();
  row2 = Array();
  for (const auto& a : devices) CHECK(a->stats().live_bytes == 0);

  Array scalar = Array::from_doubles(std::vector<double>{1}, {}, DType::kFloat32);
  CHECK_THROWS_AS(detail::SharedContents::of(scalar)->row(0), std::out_of_range);
  Array two = Array::from_doubles(std::vector<double>{1, 2}, {2}, DType::kFloat32);
  CHECK_THROWS_AS(detail::SharedContents::of(two)->row(2), std::out_of_range);
  CHECK_THROWS_AS(detail::SharedContents::of(two)->row(-1), std::out_of_range);
}
