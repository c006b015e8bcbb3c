// The executor's plan: which equations fuse into one elementwise pass, which
// values become arrays, when values die; and that a planned program gives
// exactly what its equations give one at a time.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/arena.h"
#include "core/placement.h"
#include "program/execution_plan.h"
#include "program/fusion.h"
#include "spmd/program/executor.h"
#include "spmd/program/primitive.h"
#include "support/fake_device.h"
#include "support/spawn.h"

using namespace spmd;
using namespace spmd::program;
using namespace spmd::testing;

namespace {

const SourceLoc kLoc{"prog.py", 3, 5};

Atom lit(double v) { return Atom::of_literal(Array::scalar(v, DType::kFloat32, true)); }

Params with(std::string name, std::vector<std::int64_t> v) {
  Params p;
  p.set(std::move(name), std::move(v));
  return p;
}

Array ramp(Shape shape) {
  std::vector<double> v(static_cast<std::size_t>(num_elements(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.1 * static_cast<double>(i));
  return f32(v, shape);
}

// An MLP layer and its loss, as jax.grad's forward pass traces it:
//   h = tanh(x @ w + b); d = h - y; loss = sum(d * d) / n; also returns h
struct Layer {
  ProgramRef program;
  Var h, d, sq;
};

Layer layer() {
  ProgramBuilder b;
  Var x = b.add_input({{8, 16}, DType::kFloat32, false});
  Var w = b.add_input({{16, 16}, DType::kFloat32, false});
  Var bias = b.add_input({{16}, DType::kFloat32, false});
  Var y = b.add_input({{8, 16}, DType::kFloat32, false});
  Var xw = b.add_equation("matmul", {Atom::of(x), Atom::of(w)}, {}, kLoc)[0];                     // 0
  Params bc = with("shape", {8, 16});
  bc.set("broadcast_dimensions", std::vector<std::int64_t>{1});
  Var bb = b.add_equation("broadcast_in_dim", {Atom::of(bias)}, bc, kLoc)[0];                     // 1
  Var pre = b.add_equation("add", {Atom::of(xw), Atom::of(bb)}, {}, kLoc)[0];                     // 2
  Var h = b.add_equation("tanh", {Atom::of(pre)}, {}, SourceLoc{"prog.py", 4, 9})[0];            // 3
  Var d = b.add_equation("sub", {Atom::of(h), Atom::of(y)}, {}, SourceLoc{"prog.py", 5, 9})[0];  // 4
  Var sq = b.add_equation("mul", {Atom::of(d), Atom::of(d)}, {}, kLoc)[0];                         // 5
  Var s = b.add_equation("reduce_sum", {Atom::of(sq)}, with("axes", {0, 1}), kLoc)[0];             // 6
  Var loss = b.add_equation("div", {Atom::of(s), lit(128)}, {}, kLoc)[0];                          // 7
  b.set_outputs({Atom::of(loss), Atom::of(h)});
  return {b.finish(), h, d, sq};
}

std::vector<Array> layer_args() {
  return {ramp({8, 16}), ramp({16, 16}), ramp({16}), ramp({8, 16})};
}

// The program's equations run one at a time by their primitives.
std::vector<Array> one_at_a_time(const Program& p, const std::vector<Array>& args) {
  std::vector<Array> env(p.vars().size());
  for (std::size_t i = 0; i < args.size(); ++i) env[static_cast<std::size_t>(p.inputs()[i])] = args[i];
  auto value = [&](const Atom& a) { return a.is_literal() ? a.literal : env[static_cast<std::size_t>(a.var)]; };
  for (const Equation& eq : p.equations()) {
    std::vector<Array> in;
    for (const Atom& a : eq.inputs) in.push_back(value(a));
    std::vector<Array> out = apply(*eq.primitive, in, eq.params, eq.loc);
    for (std::size_t k = 0; k < out.size(); ++k) env[static_cast<std::size_t>(eq.outputs[k])] = out[k];
  }
  std::vector<Array> result;
  for (const Atom& a : p.outputs()) result.push_back(value(a));
  return result;
}

}  // namespace

TEST_CASE("program::plan: consecutive elementwise equations of one shape fuse, what is read later is output",
          "[program][fusion]") {
  Layer l = layer();
  const ExecutionPlan& plan = l.program->plan();
  REQUIRE(plan.steps.size() == 3);
  CHECK(plan.steps[0].first_equation == 0);  // matmul
  CHECK(plan.steps[0].fused == nullptr);
  // broadcast_in_dim, add, tanh, sub, mul and the reduce_sum that ends them: one pass
  CHECK(plan.steps[1].first_equation == 1);
  CHECK(plan.steps[1].equation_count == 6);
  REQUIRE(plan.steps[1].fused != nullptr);
  const FusedChain& chain = *plan.steps[1].fused;
  // h is a program output, then the sum; pre, d, sq and the broadcast bias
  // exist only inside the pass.
  const Var sum = l.program->equations()[6].outputs[0];
  CHECK(chain.outputs() == std::vector<Var>{l.h, sum});
  CHECK(chain.output_locs()[0] == SourceLoc{"prog.py", 4, 9});
  CHECK(chain.output_locs()[1] == kLoc);
  CHECK(chain.inputs().size() == 3);  // x @ w, bias, y
  CHECK(chain.chain().op_count() == 4);
  CHECK(chain.chain().has_reduction());
  CHECK(plan.steps[2].fused == nullptr);  // div: a chain of one is just the op
  // x @ w, bias and y are read for the last time in the chain (so are the
  // broadcast bias, pre, d and sq, which have no array to drop); h lives on,
  // the sum dies at the div.
  CHECK(plan.steps[1].release.size() == 7);
  CHECK(std::count(plan.steps[1].release.begin(), plan.steps[1].release.end(), l.h) == 0);
  CHECK(std::count(plan.steps[1].release.begin(), plan.steps[1].release.end(), l.sq) == 1);
  CHECK(std::count(plan.steps[1].release.begin(), plan.steps[1].release.end(), l.program->inputs()[2]) == 1);
  CHECK(plan.steps[2].release == std::vector<Var>{sum});
}

TEST_CASE("program::plan: a sum over leading or trailing axes ends a chain, a max over leading axes does not",
          "[program][fusion]") {
  // The backward pass of a bias add: g = d * (1 - h * h), then sum over the batch.
  ProgramBuilder b;
  Var d = b.add_input({{64, 33}, DType::kFloat32, false});
  Var h = b.add_input({{64, 33}, DType::kFloat32, false});
  Var hh = b.add_equation("mul", {Atom::of(h), Atom::of(h)}, {}, kLoc)[0];           // 0
  Var one_minus = b.add_equation("sub", {lit(1), Atom::of(hh)}, {}, kLoc)[0];         // 1
  Var g = b.add_equation("mul", {Atom::of(d), Atom::of(one_minus)}, {}, kLoc)[0];     // 2
  Var gb = b.add_equation("reduce_sum", {Atom::of(g)}, with("axes", {0}), kLoc)[0];  // 3: columns
  Var e = b.add_equation("exp", {Atom::of(g)}, {}, kLoc)[0];                          // 4
  Var m = b.add_equation("reduce_max", {Atom::of(e)}, with("axes", {0}), kLoc)[0];   // 5: not fused
  Var t = b.add_equation("neg", {Atom::of(e)}, {}, kLoc)[0];                          // 6
  Var r = b.add_equation("reduce_sum", {Atom::of(t)}, with("axes", {1}), kLoc)[0];   // 7: rows
  b.set_outputs({Atom::of(gb), Atom::of(m), Atom::of(r), Atom::of(g)});
  ProgramRef p = b.finish();
  const ExecutionPlan& plan = p->plan();
  REQUIRE(plan.steps.size() == 4);
  CHECK(plan.steps[0].equation_count == 4);  // mul, sub, mul, reduce_sum over axis 0
  REQUIRE(plan.steps[0].fused != nullptr);
  CHECK(plan.steps[0].fused->outputs() == std::vector<Var>{g, gb});
  CHECK(plan.steps[1].equation_count == 1);  // exp: its max over the batch is not fused
  CHECK(plan.steps[2].equation_count == 1);  // reduce_max
  CHECK(plan.steps[3].equation_count == 2);  // neg, reduce_sum over axis 1
  CHECK(plan.steps[3].fused->outputs() == std::vector<Var>{r});
  std::vector<Array> args = {ramp({64, 33}), ramp({64, 33})};
  std::vector<Array> fused = execute(*p, args);
  std::vector<Array> plain = one_at_a_time(*p, args);
  REQUIRE(fused.size() == 4);
  for (std::size_t k = 0; k < 4; ++k) CHECK(fused[k].identical(plain[k]));
}

TEST_CASE("program::execute: a fused program equals its equations one at a time, bit for bit", "[program][fusion]") {
  Layer l = layer();
  std::vector<Array> args = layer_args();
  std::vector<Array> fused = execute(*l.program, args);
  std::vector<Array> plain = one_at_a_time(*l.program, args);
  REQUIRE(fused.size() == 2);
  CHECK(fused[0].identical(plain[0]));
  CHECK(fused[1].identical(plain[1]));
}

TEST_CASE("program::execute: on a device with its own memory a chain's equations run one at a time",
          "[program][fusion]") {
  Layer l = layer();
  std::vector<Array> args = layer_args();
  std::vector<Array> host = one_at_a_time(*l.program, args);
  ScopedFakeDeviceOps fake;
  FakeDevicePlacement device(1);
  std::vector<Array> got = execute(*l.program, args);
  CHECK(got[1].memory_kind() == MemoryKind::kCuda);
  CHECK(got[0].identical(host[0]));
  CHECK(got[1].identical(host[1]));
}

TEST_CASE("program::execute: a value's array is freed after its last reader", "[program][fusion]") {
  // x -> transpose -> transpose -> ... (not fusible): one live intermediate at a time.
  ProgramBuilder b;
  Var v = b.add_input({{100, 100}, DType::kFloat32, false});
  for (int k = 0; k < 6; ++k) v = b.add_equation("transpose", {Atom::of(v)}, with("permutation", {1, 0}), kLoc)[0];
  b.set_outputs({Atom::of(v)});
  ProgramRef p = b.finish();
  Array x = ramp({100, 100});
  auto arena = std::make_shared<detail::Arena>(0, detail::Arena::kUnlimited, "device 0");
  detail::Placement device{nullptr, arena, 0};
  detail::PlacementScope scope(&device);
  std::vector<Array> out = execute(*p, std::vector<Array>{x});
  CHECK(out[0].identical(x));  // six transposes
  const detail::ArenaStats stats = arena->stats();
  CHECK(stats.allocations == 6);
  CHECK(stats.peak_bytes == 2 * 100 * 100 * 4);  // the operand and the result of one transpose
}

TEST_CASE("program::plan: a matmul reads a transpose's operand in place, with the flag, and the transpose goes",
          "[program][fusion]") {
  ProgramBuilder b;
  Var x = b.add_input({{2, 6, 5}, DType::kFloat32, false});
  Var w = b.add_input({{2, 4, 5}, DType::kFloat32, false});
  Var v = b.add_input({{3, 6}, DType::kFloat32, false});
  // x @ swapaxes(w, -1, -2): batched, rhs folded
  Var wt = b.add_equation("transpose", {Atom::of(w)}, with("permutation", {0, 2, 1}), kLoc)[0];
  Var y = b.add_equation("matmul", {Atom::of(x), Atom::of(wt)}, {}, kLoc)[0];
  // matmul[transpose_a](v.T, v.T) = v @ v.T: a's flags cancel, b gets one;
  // v.T is also returned, so its transpose stays
  Var vt = b.add_equation("transpose", {Atom::of(v)}, with("permutation", {1, 0}), kLoc)[0];
  Params ta;
  ta.set("transpose_a", true);
  Var z = b.add_equation("matmul", {Atom::of(vt), Atom::of(vt)}, ta, kLoc)[0];
  b.set_outputs({Atom::of(y), Atom::of(z), Atom::of(vt)});
  ProgramRef p = b.finish();

  const ExecutionPlan& plan = p->plan();
  REQUIRE(plan.steps.size() == 3);  // matmul, transpose of v, matmul
  REQUIRE(plan.steps[0].rewritten != nullptr);
  CHECK(plan.steps[0].first_equation == 1);
  CHECK(plan.steps[0].rewritten->inputs[1].var == w);
  CHECK(plan.steps[0].rewritten->params.get_or<bool>("transpose_b", false));
  CHECK(plan.steps[0].release == std::vector<Var>{x, w});
  CHECK(plan.steps[1].first_equation == 2);
  CHECK(plan.steps[1].rewritten == nullptr);
  REQUIRE(plan.steps[2].rewritten != nullptr);
  CHECK(plan.steps[2].rewritten->inputs[0].var == v);
  CHECK(plan.steps[2].rewritten->inputs[1].var == v);
  CHECK_FALSE(plan.steps[2].rewritten->params.get_or<bool>("transpose_a", true));
  CHECK(plan.steps[2].rewritten->params.get_or<bool>("transpose_b", false));

  std::vector<Array> args{ramp({2, 6, 5}), ramp({2, 4, 5}), ramp({3, 6})};
  std::vector<Array> got = execute(*p, args);
  std::vector<Array> plain = one_at_a_time(*p, args);
  for (std::size_t k = 0; k < got.size(); ++k) {
    INFO("output " << k);
    CHECK(got[k].shape() == plain[k].shape());
    CHECK(got[k].identical(plain[k]));
  }
}
