// pmap: splitting, replication, stacking, and every input/output error.

#include <catch2/catch.hpp>

#include <algorithm>

#include "spmd/util/json.h"
#include "support/spawn.h"

using namespace spmd;
using namespace spmd::testing;

namespace {
std::vector<Array> identity(std::span<const Array> a) { return {a.begin(), a.end()}; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
Array arange_f32(std::int64_t n, Shape s) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i));
  return f32(v, s);
}
}  // namespace

TEST_CASE("pmap::split: in_axes picks the split axis, None replicates", "[pmap]") {
  Runtime rt({.devices = 4});
  Array x = arange_f32(12, {3, 4});  // split along axis 1: device d gets column d
  Array y = f32({5}, {});
  PmapOptions o;
  o.axis_name = "i";
  o.in_axes = {1, kReplicated};
  auto out = rt.pmap(
      [](std::span<const Array> a) {
        REQUIRE(a[0].shape() == Shape{3});
        REQUIRE(a[1].shape() == Shape{});
        return std::vector<Array>{a[0] * a[1]};
      },
      std::vector<Array>{x, y}, o);
  REQUIRE(out[0].shape() == Shape{4, 3});
  REQUIRE(row(out[0], 1) == std::vector<double>{5, 25, 45});
}

TEST_CASE("pmap::split: replicated inputs are copied into each device's arena", "[pmap]") {
  Runtime rt({.devices = 2});
  Array y = arange_f32(256, {256});
  PmapOptions o;
  o.in_axes = {kReplicated};
  o.axis_size = 2;
  rt.pmap(
      [](std::span<const Array> a) {
        REQUIRE(a[0].device() == current_device().id);
        return std::vector<Array>{};
      },
      std::vector<Array>{y}, o);
  REQUIRE(rt.arena_usage(0).peak_bytes >= 1024);
  REQUIRE(rt.arena_usage(1).peak_bytes >= 1024);
  REQUIRE(rt.arena_usage(1).live_bytes == 0);
}

TEST_CASE("pmap::split: shards along axis 0 are read in place, each charged to its device", "[pmap]") {
  Runtime rt({.devices = 4});
  Array x = arange_f32(4 * 64, {4, 64});  // 256 bytes per device
  Array z = arange_f32(4 * 3, {3, 4});    // split along axis 1: copied
  PmapOptions o;
  o.in_axes = {0, 1};
  std::vector<const void*> seen(4);
  auto out = rt.pmap(
      [&](std::span<const Array> a) {
        const int d = current_device().index_in_pmap;
        REQUIRE(a[0].device() == current_device().id);
        REQUIRE(a[0].shape() == Shape{64});
        REQUIRE(a[0].element_as_double(0) == 64.0 * d);
        seen[static_cast<std::size_t>(d)] = a[0].raw_data();
        CHECK_FALSE(a[1].shares_memory_with(z));
        return std::vector<Array>{a[0] + a[0]};
      },
      std::vector<Array>{x, z}, o);
  for (std::size_t d = 0; d < 4; ++d) {
    INFO("device " << d);
    CHECK(seen[d] == static_cast<const float*>(x.raw_data()) + 64 * d);
    // The shard (256 bytes), z's column (12) and the output (256).
    CHECK(rt.arena_usage(static_cast<DeviceId>(d)).peak_bytes == 256 + 12 + 256);
    CHECK(rt.arena_usage(static_cast<DeviceId>(d)).live_bytes == 0);
  }
  CHECK(out[0].identical(x + x));

  // Nested pmaps: the merged mapped axes give each device one row of 16 floats.
  Runtime nested({.devices = 4});
  Array w = arange_f32(2 * 2 * 16, {2, 2, 16});
  PmapOptions outer, inner;
  outer.axis_name = "i";
  inner.axis_name = "j";
  std::vector<const void*> rows(4);
  nested.pmap(
      [&](std::span<const Array> a) {
        return pmap(
            [&](std::span<const Array> b) {
              REQUIRE(b[0].shape() == Shape{16});
              rows[static_cast<std::size_t>(current_device().id)] = b[0].raw_data();
              return std::vector<Array>{};
            },
            a, inner);
      },
      std::vector<Array>{w}, outer);
  std::sort(rows.begin(), rows.end());
  for (std::size_t d = 1; d < 4; ++d) CHECK(static_cast<const char*>(rows[d]) - static_cast<const char*>(rows[d - 1]) == 64);
}

TEST_CASE("pmap::split: negative in_axes and out_axes", "[pmap]") {
  Runtime rt({.devices = 2});
  Array x = arange_f32(6, {3, 2});
  PmapOptions o;
  o.in_axes = {-1};
  o.out_axes = {-1};
  auto out = rt.pmap(identity, std::vector<Array>{x}, o);
  REQUIRE(out[0].shape() == Shape{3, 2});
  REQUIRE(out[0].to_doubles() == x.to_doubles());
}

TEST_CASE("pmap::split: inconsistent mapped sizes name every argument", "[pmap]") {
  Runtime rt({.devices = 8});
  PmapOptions o;
  o.axis_name = "batch";
  o.arg_names = {"x", "y"};
  o.loc = SourceLoc{"f.py", 22, 10};
  auto e = expect_error<InvalidArgument>([&] {
    rt.pmap(identity, std::vector<Array>{zeros({4, 10}), zeros({3})}, o);
  });
  const Report& r = e.report();
  REQUIRE(r.kind == "InputSplitError");
  REQUIRE(r.message ==
          "pmap: got inconsistent sizes for array axes to be mapped: argument y has size 3 along axis 0, where "
          "argument x has size 4");
  // JAX's lines (api._mapped_axis_size), a size each.
  REQUIRE(r.details == std::vector<std::string>{"* one axis had size 4: axis 0 of argument x of type float32[4,10];",
                                                "* one axis had size 3: axis 0 of argument y of type float32[3]"});
  REQUIRE(r.where == SourceLoc{"f.py", 22, 10});
  REQUIRE(contains(r.hint, "in_axes=None"));
  REQUIRE(r.table.rows.size() == 2);
}

TEST_CASE("pmap::split: a large pytree's sizes are grouped, the odd one out named first", "[pmap]") {
  // Issue 33 (JAX PR #12800's program): 103 leaves gave a 217-line report naming every leaf twice.
  Runtime rt({.devices = 8});
  PmapOptions o;
  std::vector<Array> args;
  for (int i = 0; i < 102; ++i) {
    args.push_back(zeros({8, 3}));
    o.arg_names.push_back("params[" + std::to_string(i) + "]");
  }
  args.push_back(zeros({7, 2}));
  o.arg_names.push_back("batch");
  args.push_back(ones({5}, DType::kInt32));  // a third size; o.arg_names has no name for it
  auto e = expect_error<InvalidArgument>([&] { rt.pmap(identity, args, o); });
  const Report& r = e.report();
  REQUIRE(r.message ==
          "pmap: got inconsistent sizes for array axes to be mapped: args[103] has size 5 along axis 0, where 103 "
          "others have 2 other sizes");
  REQUIRE(r.details ==
          std::vector<std::string>{
              "* most axes (102 of them) had size 8, e.g. axis 0 of argument params[0] of type float32[8,3];",
              "  also params[1], params[2], params[3] and 98 more",
              "* one axis had size 7: axis 0 of argument batch of type float32[7,2];",
              "* one axis had size 5: axis 0 of args[103] of type int32[5]"});
  // Every leaf is in the table (JSON, --explain); a terminal shows its first 8 rows and says how many more.
  REQUIRE(r.table.rows.size() == 104);
  const std::string text = r.to_text();
  REQUIRE(contains(text, "    ... and 96 more rows (all of them with --explain, or in --format json)\n"));
  REQUIRE(std::count(text.begin(), text.end(), '\n') < 30);
  const std::string all = r.to_text(true);
  REQUIRE(contains(all, "\n    argument 103 "));
  REQUIRE_FALSE(contains(all, "more rows"));
  REQUIRE(Report::from_json(r.to_json()).to_text() == text);
}

TEST_CASE("pmap::split: an axis_size the mapped leaves all disagree with is named as the odd one out", "[pmap]") {
  Runtime rt({.devices = 8});
  PmapOptions o;
  o.arg_names = {"x", "y"};
  o.axis_size = 4;
  auto e = expect_error<InvalidArgument>([&] { rt.pmap(identity, std::vector<Array>{zeros({2, 3}), zeros({2})}, o); });
  REQUIRE(e.report().message ==
          "pmap: got inconsistent sizes for array axes to be mapped: the `axis_size` argument is 4, where every mapped "
          "axis has size 2");
  REQUIRE(e.report().details ==
          std::vector<std::string>{"* the `axis_size` argument was 4;",
                                   "* most axes (2 of them) had size 2, e.g. axis 0 of argument x of type float32[2,3]",
                                   "  also y"});
}

TEST_CASE("pmap::split: more devices than available suggests a reshape", "[pmap]") {
  Runtime rt({.devices = 4});
  PmapOptions o;
  o.arg_names = {"sharded_data"};
  auto e = expect_error<InvalidArgument>([&] { rt.pmap(identity, std::vector<Array>{zeros({8, 10})}, o); });
  REQUIRE(e.report().kind == "DeviceCountError");
  REQUIRE(e.report().message ==
          "pmap: the computation needs 8 devices, but only 4 are available; it is the size of axis 0 of argument 0 "
          "'sharded_data' (shape (8, 10)); e.g. reshape it to (4, 2, 10) to give each of the 4 devices 2 rows");
  REQUIRE(contains(e.report().hint, "jax.device_count() (4)"));
}

TEST_CASE("pmap::split: in_axes errors", "[pmap]") {
  Runtime rt({.devices = 4});
  SECTION("out of bounds") {
    PmapOptions o;
    o.in_axes = {2};
    auto e = expect_error<InvalidArgument>([&] { rt.pmap(identity, std::vector<Array>{zeros({4, 3})}, o); });
    REQUIRE(e.report().message == "pmap: in_axes[0]=2 is out of bounds for argument 0 of shape (4, 3) (rank 2)");
  }
  SECTION("scalar mapped") {
    auto e = expect_error<InvalidArgument>([&] { rt.pmap(identity, std::vector<Array>{zeros({})}, PmapOptions{}); });
    REQUIRE(e.report().hint == "a scalar has no axis to split: replicate it with in_axes=None");
  }
  SECTION("wrong count") {
    PmapOptions o;
    o.in_axes = {0, 0};
    auto e = expect_error<InvalidArgument>([&] { rt.pmap(identity, std::vector<Array>{zeros({4})}, o); });
    REQUIRE(e.report().message == "pmap: in_axes has 2 entries but the function is called with 1 argument");
  }
  SECTION("nothing mapped") {
    PmapOptions o;
    o.in_axes = {kReplicated};
    auto e = expect_error<InvalidArgument>([&] { rt.pmap(identity, std::vector<Array>{zeros({4})}, o); });
    REQUIRE(e.report().message ==
            "pmap: no argument is mapped and no axis_size is given, so the device count is unknown");
  }
}

TEST_CASE("pmap::stack: out_axes errors", "[pmap]") {
  Runtime rt({.devices = 4});
  SECTION("devices return different shapes") {
    auto e = expect_error<InvalidArgument>([&] {
      run_on(rt, 4, {}, [](std::span<const Array>) {
        return std::vector<Array>{zeros({current_device().id == 1 ? 2 : 3})};
      });
    });
    REQUIRE(e.report().kind == "OutAxesError");
    REQUIRE(e.report().message ==
            "pmap: cannot stack output 0: devices returned different shapes or dtypes: device 1 f32[2]; devices {0, 2, 3} f32[3]");
  }
  SECTION("out_axes=None with values that differ") {
    PmapOptions o;
    o.axis_size = 4;
    o.axis_name = "i";
    o.out_axes = {kReplicated};
    auto e = expect_error<InvalidArgument>([&] {
      rt.pmap([](std::span<const Array>) { return std::vector<Array>{axis_index("i")}; }, {}, o);
    });
    REQUIRE(e.report().message ==
            "pmap: out_axes=None for output 0 but its value differs between devices (device 0 and device 1 differ)");
  }
  SECTION("out_axes=None after psum returns one copy") {
    PmapOptions o;
    o.axis_size = 4;
    o.axis_name = "i";
    o.out_axes = {kReplicated};
    auto out = rt.pmap([](std::span<const Array>) { return std::vector<Array>{psum(axis_index("i"), "i")}; }, {}, o);
    REQUIRE(out[0].shape() == Shape{});
    REQUIRE(out[0].element_as_int64(0) == 6);
  }
  SECTION("out axis out of bounds") {
    PmapOptions o;
    o.axis_size = 4;
    o.out_axes = {2};
    auto e = expect_error<InvalidArgument>([&] {
      rt.pmap([](std::span<const Array>) { return std::vector<Array>{zeros({3})}; }, {}, o);
    });
    REQUIRE(e.report().message == "pmap: out_axes[0]=2 is out of bounds for output 0 of per-device shape (3,)");
  }
}

TEST_CASE("pmap::split: replicated argument shaped like a split gets a note on failure", "[pmap]") {
  Runtime rt({.devices = 4});
  PmapOptions o;
  o.axis_name = "i";
  o.in_axes = {0, kReplicated};
  o.arg_names = {"x", "w"};
  auto e = expect_error<ShapeError>([&] {
    rt.pmap([](std::span<const Array> a) { return std::vector<Array>{a[0] + a[1]}; },
            std::vector<Array>{zeros({4, 3}), zeros({4, 5})}, o);
  });
  REQUIRE(e.report().details.back() ==
          "note: argument 1 'w' (shape (4, 5)) is replicated (in_axes=None), yet its axis 0 equals the device count "
          "4: if each device should get one slice, use in_axes=0");
}

TEST_CASE("pmap::devices: explicit device ids and the device count check", "[pmap]") {
  Runtime rt({.devices = 8});
  PmapOptions o;
  o.axis_size = 2;
  o.devices = {5, 6};
  auto out = rt.pmap([](std::span<const Array>) { return std::vector<Array>{Array::scalar_int(current_device().id)}; }, {}, o);
  REQUIRE(out[0].to_int64s() == std::vector<std::int64_t>{5, 6});
  o.devices = {5, 5};
  auto e = expect_error<InvalidArgument>([&] { rt.pmap(identity, {}, o); });
  REQUIRE(e.report().message == "pmap: devices= contains 5 twice");
}

TEST_CASE("pmap::nested: needs outer x inner devices", "[pmap]") {
  Runtime rt({.devices = 4});
  PmapOptions outer;
  outer.axis_size = 2;
  auto e = expect_error<InvalidArgument>([&] {
    rt.pmap(
        [](std::span<const Array>) {
          PmapOptions inner;
          inner.axis_size = 4;
          return pmap([](std::span<const Array>) { return std::vector<Array>{}; }, {}, inner);
        },
        {}, outer);
  });
  REQUIRE(e.report().kind == "DeviceCountError");
  REQUIRE(e.report().message == "pmap: the nested pmap needs 2 x 4 = 8 devices, but only 4 are available");
}
