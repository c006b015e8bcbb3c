// Results every member gets (psum, all_gather) are written once and shared by
// the members' outputs; each output still belongs to, and is charged to, its
// own device, and the storage is freed with the last of them.

#include <catch2/catch.hpp>

#include <mutex>

#include "support/spawn.h"

using namespace spmd;
using namespace spmd::testing;

namespace {

struct Seen {
  std::mutex mu;
  std::vector<const void*> data;
  std::vector<DeviceId> owner;
  std::vector<std::size_t> charged;  // live bytes the collective added on the device
  explicit Seen(int n) : data(n), owner(n), charged(n) {}
};

// Runs `collective` on every device of `n`, recording its output's storage,
// owner and the bytes it added to the device's arena.
std::vector<Array> run_recording(Runtime& rt, int n, Seen& seen, const std::function<Array(const Array&)>& collective) {
  Array x = Array::from_doubles(std::vector<double>(static_cast<std::size_t>(n) * 250, 1.0), {n, 250}, DType::kFloat32);
  return run_on(rt, n, {x}, [&](std::span<const Array> a) {
    const int d = static_cast<int>(axis_index("i").element_as_int64(0));
    const std::size_t before = rt.arena_usage(d).live_bytes;
    Array out = collective(a[0]);
    const std::size_t after = rt.arena_usage(d).live_bytes;
    std::lock_guard<std::mutex> lock(seen.mu);
    seen.data[static_cast<std::size_t>(d)] = out.raw_data();
    seen.owner[static_cast<std::size_t>(d)] = out.device();
    seen.charged[static_cast<std::size_t>(d)] = after - before;
    return std::vector<Array>{out};
  });
}

}  // namespace

TEST_CASE("collectives::shared results: psum writes one result the members share, charged to each", "[collectives]") {
  Runtime rt({.devices = 4});
  Seen seen(4);
  auto out = run_recording(rt, 4, seen, [](const Array& x) { return psum(x, "i"); });
  for (int d = 0; d < 4; ++d) {
    INFO("device " << d);
    CHECK(seen.data[static_cast<std::size_t>(d)] == seen.data[0]);
    CHECK(seen.owner[static_cast<std::size_t>(d)] == d);
    CHECK(seen.charged[static_cast<std::size_t>(d)] == 1000);  // 250 float32, as if it held its own copy
    CHECK(row(out[0], d) == std::vector<double>(250, 4.0));
    CHECK(rt.arena_usage(d).live_bytes == 0);
  }
}

TEST_CASE("collectives::shared results: all_gather shares one result per group of axis_index_groups",
          "[collectives]") {
  Runtime rt({.devices = 4});
  Seen seen(4);
  auto out = run_recording(rt, 4, seen, [](const Array& x) {
    return all_gather(x, "i", 0, /*tiled=*/false, AxisIndexGroups{{0, 2}, {1, 3}});
  });
  CHECK(seen.data[0] == seen.data[2]);
  CHECK(seen.data[1] == seen.data[3]);
  CHECK(seen.data[0] != seen.data[1]);
  for (int d = 0; d < 4; ++d) {
    INFO("device " << d);
    CHECK(seen.owner[static_cast<std::size_t>(d)] == d);
    CHECK(seen.charged[static_cast<std::size_t>(d)] == 2000);  // [2, 250] float32
    CHECK(out[0].shape() == Shape{4, 2, 250});
  }
}

TEST_CASE("collectives::shared results: another device's shared result is still not usable", "[collectives]") {
  Runtime rt({.devices = 2});
  std::mutex mu;
  Array device0_sum;
  auto e = expect_error<InvalidArgument>([&] {
    run_on(rt, 2, {}, [&](std::span<const Array>) {
      Array s = psum(Array::scalar(1.0, DType::kFloat32), "i");
      const bool first = axis_index("i").element_as_int64(0) == 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (first) device0_sum = s;
      }
      barrier("i");
      if (!first) return std::vector<Array>{s + device0_sum};  // device 0's array on device 1
      return std::vector<Array>{s};
    });
  });
  CHECK(e.report().kind == "DeviceOwnershipError");
  CHECK(e.report().device == 1);
}
