// Values the same on every device of a pmap: which steps make them
// (shared_steps), one device computing them for all (SharedResults and the
// executor), with the same results and the same arena accounting as when
// every device computes them itself.

#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <mutex>
#include <vector>

#include "core/arena.h"
#include "core/placement.h"
#include "core/replicas.h"
#include "program/execution_plan.h"
#include "program/invariance.h"
#include "program/shared_execution.h"
#include "program/shared_results.h"
#include "spmd/program/executor.h"
#include "spmd/program/primitive.h"
#include "support/spawn.h"

using namespace spmd;
using namespace spmd::program;
using namespace spmd::testing;

namespace {

const SourceLoc kLoc{"prog.py", 7, 5};

Params axes_param(std::vector<std::string> names) {
  Params p;
  p.set("axes", std::move(names));
  return p;
}

Array ramp(Shape shape, double phase) {
  std::vector<double> v(static_cast<std::size_t>(num_elements(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + phase);
  return f32(v, shape);
}

// An SGD step's shape: g = x @ w per device, s = psum(g) (replicated), then
// only replicated values: v = w - 0.5 * s (one fused step), t = transpose(v),
// r = reshape(v) (a view of v), and n = neg(axis_index) (per device).
// Outputs (v, t, r, g). The 32x32 float32 values are 4 KiB: shareable.
ProgramRef sgd_like(const std::string& psum_axis) {
  ProgramBuilder b({{"i", 4}, {"j", 1}});
  Var w = b.add_input({{32, 32}, DType::kFloat32, false});
  Var x = b.add_input({{32, 32}, DType::kFloat32, false});
  Params contract;
  contract.set("lhs_contracting", std::vector<std::int64_t>{1});
  contract.set("rhs_contracting", std::vector<std::int64_t>{0});
  contract.set("lhs_batch", std::vector<std::int64_t>{});
  contract.set("rhs_batch", std::vector<std::int64_t>{});
  Var g = b.add_equation("dot_general", {Atom::of(x), Atom::of(w)}, contract, kLoc)[0];  // step 0
  Var s = b.add_equation("psum", {Atom::of(g)}, axes_param({psum_axis}), kLoc)[0];  // step 1
  Var u = b.add_equation("mul", {Atom::of(s), Atom::of_literal(Array::scalar(0.5, DType::kFloat32, true))}, {},
                         kLoc)[0];
  Var v = b.add_equation("sub", {Atom::of(w), Atom::of(u)}, {}, kLoc)[0];  // step 2: mul and sub fused
  Params perm;
  perm.set("permutation", std::vector<std::int64_t>{1, 0});
  Var t = b.add_equation("transpose", {Atom::of(v)}, perm, kLoc)[0];  // step 3
  Params sizes;
  sizes.set("new_sizes", std::vector<std::int64_t>{32, 32});
  Var r = b.add_equation("reshape", {Atom::of(v)}, sizes, kLoc)[0];  // step 4
  b.set_outputs({Atom::of(v), Atom::of(t), Atom::of(r), Atom::of(g)});
  return b.finish();
}

}  // namespace

TEST_CASE("program::shared: replicated values come from replicated inputs, literals and full-axis reductions",
          "[program][shared]") {
  ProgramRef p = sgd_like("i");
  REQUIRE(p->plan().steps.size() == 5);
  REQUIRE(p->plan().steps[2].fused);
  // w replicated, x mapped, the pmap binds "i": from the psum on.
  CHECK(shared_steps(*p, {true, false}, {"i"}) == std::vector<bool>{false, false, true, true, true});
  // The psum's result is replicated over "i" only: under a mesh of ("i",
  // "k") it differs along "k", and so does everything after it.
  CHECK(shared_steps(*p, {true, false}, {"i", "k"}) == std::vector<bool>{false, false, false, false, false});
  // An anonymous pmap: no collective names its axis.
  CHECK(shared_steps(*p, {true, false}, {}) == std::vector<bool>{false, false, false, false, false});
  // w mapped: w - 0.5 * s differs per device.
  CHECK(shared_steps(*p, {false, false}, {"i"}) == std::vector<bool>{false, false, false, false, false});
  // Everything replicated: the product too (a psum of a replicated value is one).
  CHECK(shared_steps(*p, {true, true}, {"i"}) == std::vector<bool>{true, false, true, true, true});
  // A psum over another axis than the pmap's leaves its result per device.
  CHECK(shared_steps(*sgd_like("j"), {true, false}, {"i"}) == std::vector<bool>{false, false, false, false, false});
}

TEST_CASE("program::shared: per-device primitives, groups and small values are not shared", "[program][shared]") {
  ProgramBuilder b({{"i", 4}});
  Var w = b.add_input({{32, 32}, DType::kFloat32, false});
  Var small = b.add_input({{8}, DType::kFloat32, false});
  Var idx = b.add_equation("axis_index", {}, axes_param({"i"}), kLoc)[0];                         // step 0
  Var f = b.add_equation("convert_element_type", {Atom::of(idx)},
                         [] { Params c; c.set("new_dtype", std::string("float32")); return c; }(), kLoc)[0];  // 1
  Var wf = b.add_equation("mul", {Atom::of(w), Atom::of(f)}, {}, kLoc)[0];  // 2: w * device index
  Params grouped = axes_param({"i"});
  grouped.set("axis_index_groups", std::vector<std::int64_t>{0, 1, 2, 3});
  grouped.set("group_size", std::int64_t{2});
  Var pg = b.add_equation("psum", {Atom::of(wf)}, grouped, kLoc)[0];       // 3: per group
  Var pn = b.add_equation("neg", {Atom::of(pg)}, {}, kLoc)[0];             // 4
  Var sq = b.add_equation("exp", {Atom::of(small)}, {}, kLoc)[0];          // 5: 32 bytes
  Var ss = b.add_equation("reduce_sum", {Atom::of(sq)}, [] { Params r; r.set("axes", std::vector<std::int64_t>{0}); return r; }(), kLoc)[0];  // 6
  b.set_outputs({Atom::of(pn), Atom::of(ss)});
  ProgramRef p = b.finish();
  REQUIRE(p->plan().steps.size() == 6);  // exp and its reduce_sum are one chain
  // Nothing of 4 KiB is replicated; the 32-byte chain from `small` is, but
  // recomputing it costs less than sharing it.
  CHECK(shared_steps(*p, {true, true}, {"i"}) == std::vector<bool>(6, false));
}

TEST_CASE("program::shared: one device computes, the others take its blocks, charged to their own arenas",
          "[program][shared]") {
  auto arena = [](DeviceId d) { return std::make_shared<detail::Arena>(d, 1 << 20, "device " + std::to_string(d)); };
  auto a0 = arena(0);
  auto a1 = arena(1);
  SharedResults shared({true, true});
  shared.join(2);
  Array in;
  Array out;
  {
    detail::Placement on0{nullptr, a0, 0};
    detail::PlacementScope scope(&on0);
    in = ramp({16, 16}, 0.0);
    CHECK_FALSE(shared.take(0, a0).has_value());
    REQUIRE(shared.claim(0));
    CHECK_FALSE(shared.claim(0));  // one claimer
    out = unary(UnaryOp::kNegative, in);
    shared.publish(0, std::vector<Array>{out, out}, std::vector<Array>{in}, {"neg output", "neg output"});
    shared.passed(0);
  }
  const std::size_t charged0 = a0->stats().live_bytes;
  CHECK(charged0 == 2 * 1024);
  auto taken = shared.take(0, a1);
  REQUIRE(taken.has_value());
  REQUIRE(taken->size() == 2);
  CHECK((*taken)[0].shares_memory_with(out));
  CHECK((*taken)[0].device() == 1);
  CHECK((*taken)[0].identical(out));
  // The same array twice is one charge, as on the computing device.
  CHECK((*taken)[1].shares_memory_with((*taken)[0]));
  CHECK(a1->stats().live_bytes == 1024);
  shared.passed(0);
  // The computing device lets go of its result: the block lives on in the taker's.
  out = Array();
  in = Array();
  CHECK(a0->stats().live_bytes == 0);
  CHECK((*taken)[0].element_as_double(5) == -static_cast<double>(static_cast<float>(std::sin(0.37 * 5))));
  taken.reset();
  CHECK(a1->stats().live_bytes == 0);

  // An output over an input's memory (a view) costs its device nothing: it
  // is not shared, every device computes it.
  detail::Placement on0{nullptr, a0, 0};
  detail::PlacementScope scope(&on0);
  Array x = ramp({16, 16}, 1.0);
  REQUIRE(shared.claim(1));
  Array view = reshape(x, {256});
  shared.publish(1, std::vector<Array>{view}, std::vector<Array>{x}, {"reshape output"});
  CHECK_FALSE(shared.take(1, a1).has_value());
  CHECK_FALSE(shared.claim(1));
}

TEST_CASE("program::shared: a pmap computes replicated steps once, with the same bits and arena charges",
          "[program][shared]") {
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    ProgramRef p = sgd_like("i");
    const Array w = ramp({32, 32}, 0.25);
    const Array xs = ramp({4, 32, 32}, 2.0);
    Runtime rt({.devices = 4, .threads = threads});
    std::mutex mu;
    std::vector<std::vector<Array>> per_device(4);
    std::vector<bool> reads_w_in_place(4, false);
    auto shared = std::make_shared<SharedResults>(shared_steps(*p, {true, false}, {"i"}));
    PmapOptions o;
    o.axis_name = "i";
    o.in_axes = {kReplicated, 0};
    rt.pmap(
        [&](std::span<const Array> shard) {
          shared->join(current_device().devices_in_pmap);
          std::vector<Array> out = execute(*p, shard, shared.get());
          std::lock_guard<std::mutex> lock(mu);
          const auto d = static_cast<std::size_t>(current_device().index_in_pmap);
          per_device[d] = out;
          reads_w_in_place[d] = shard[0].shares_memory_with(w) && shard[0].device() == static_cast<DeviceId>(d);
          return out;
        },
        std::vector<Array>{w, xs}, o);
    // The replicated argument: the caller's block, each device's own array.
    CHECK(reads_w_in_place == std::vector<bool>(4, true));
    // v and t: one block for all devices (on one thread, where device 0
    // computes them before the others start; on two, a device arriving while
    // another computes computes its own); r (a view of v) over v's block on
    // each; g per device.
    for (int d = 1; d < 4; ++d) {
      INFO("device " << d);
      if (threads == 1) {
        CHECK(per_device[d][0].shares_memory_with(per_device[0][0]));
        CHECK(per_device[d][1].shares_memory_with(per_device[0][1]));
      }
      CHECK(per_device[d][0].identical(per_device[0][0]));
      CHECK(per_device[d][1].identical(per_device[0][1]));
      CHECK(per_device[d][2].shares_memory_with(per_device[d][0]));
      CHECK_FALSE(per_device[d][3].shares_memory_with(per_device[0][3]));
    }
    // The same bits as computed on the host, without any sharing: the
    // psum adds the devices' products in device order.
    Array sum;
    for (int d = 0; d < 4; ++d) {
      INFO("device " << d);
      const Array g = matmul(reshape(chunk(xs, 4, d, 0), {32, 32}), w);
      CHECK(per_device[d][3].identical(g));
      sum = d == 0 ? g : binary(BinaryOp::kAdd, sum, g);
    }
    const Array v = binary(BinaryOp::kSubtract, w, binary(BinaryOp::kMultiply, sum, Array::scalar(0.5, DType::kFloat32, true)));
    CHECK(per_device[0][0].identical(v));
    CHECK(per_device[0][1].identical(transpose(v)));
    per_device.clear();
    // Every device was charged the same, taker or computer.
    for (int d = 1; d < 4; ++d) {
      INFO("device " << d);
      CHECK(rt.arena_usage(d).peak_bytes == rt.arena_usage(0).peak_bytes);
      CHECK(rt.arena_usage(d).live_bytes == 0);
    }
  }
}
