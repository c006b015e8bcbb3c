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

// dot_general's dimension numbers: ((lc, rc), (lb, rb)).
Params dims(std::vector<std::int64_t> lc, std::vector<std::int64_t> rc, std::vector<std::int64_t> lb = {},
            std::vector<std::int64_t> rb = {}) {
  Params p;
  p.set("lhs_contracting", std::move(lc));
  p.set("rhs_contracting", std::move(rc));
  p.set("lhs_batch", std::move(lb));
  p.set("rhs_batch", std::move(rb));
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
  Var xw = b.add_equation("dot_general", {Atom::of(x), Atom::of(w)}, dims({1}, {0}), kLoc)[0];  // 0
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

// The plan's run of p gives the bits of its equations run one at a time.
void check_runs_as_one_at_a_time(const Program& p, const std::vector<Array>& args) {
  std::vector<Array> got = execute(p, args);
  std::vector<Array> plain = one_at_a_time(p, args);
  REQUIRE(got.size() == plain.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    INFO("output " << k);
    CHECK(got[k].shape() == plain[k].shape());
    CHECK(got[k].identical(plain[k]));
  }
}

}  // namespace

TEST_CASE("program::plan: consecutive elementwise equations of one shape fuse, what is read later is output",
          "[program][fusion]") {
  Layer l = layer();
  const ExecutionPlan& plan = l.program->plan();
  REQUIRE(plan.steps.size() == 3);
  CHECK(plan.steps[0].first_equation == 0);  // dot_general
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

TEST_CASE("program::plan: a dot_general reads a transpose's operand through renamed axes, and the transpose goes",
          "[program][fusion]") {
  ProgramBuilder b;
  Var x = b.add_input({{2, 6, 5}, DType::kFloat32, false});
  Var w = b.add_input({{2, 4, 5}, DType::kFloat32, false});
  Var v = b.add_input({{3, 6}, DType::kFloat32, false});
  // x @ swapaxes(w, -1, -2): batched, rhs folded
  Var wt = b.add_equation("transpose", {Atom::of(w)}, with("permutation", {0, 2, 1}), kLoc)[0];
  Var y = b.add_equation("dot_general", {Atom::of(x), Atom::of(wt)}, dims({2}, {1}, {0}, {0}), kLoc)[0];
  // v.T contracted with v.T over their first axes (v @ v.T): both operands
  // folded; v.T is also returned, so its transpose stays
  Var vt = b.add_equation("transpose", {Atom::of(v)}, with("permutation", {1, 0}), kLoc)[0];
  Var z = b.add_equation("dot_general", {Atom::of(vt), Atom::of(vt)}, dims({0}, {0}), kLoc)[0];
  // A transpose that reorders the free axes is not folded (the result's axes
  // would come out in another order)
  // (x's free axes 2 and 0 would have to come out as 0 and 2)
  Var xt = b.add_equation("transpose", {Atom::of(x)}, with("permutation", {2, 1, 0}), kLoc)[0];
  Var u = b.add_equation("dot_general", {Atom::of(xt), Atom::of(v)}, dims({1}, {1}), kLoc)[0];
  b.set_outputs({Atom::of(y), Atom::of(z), Atom::of(vt), Atom::of(u)});
  ProgramRef p = b.finish();

  const ExecutionPlan& plan = p->plan();
  REQUIRE(plan.steps.size() == 5);  // dot_general, transpose of v, dot_general, transpose of x, dot_general
  REQUIRE(plan.steps[0].rewritten != nullptr);
  CHECK(plan.steps[0].first_equation == 1);
  CHECK(plan.steps[0].rewritten->inputs[1].var == w);
  CHECK(plan.steps[0].rewritten->params.get<std::vector<std::int64_t>>("rhs_contracting", "t") ==
        std::vector<std::int64_t>{2});
  CHECK(plan.steps[0].rewritten->params.get<std::vector<std::int64_t>>("rhs_batch", "t") ==
        std::vector<std::int64_t>{0});
  CHECK(plan.steps[0].release == std::vector<Var>{w});
  CHECK(plan.steps[1].first_equation == 2);
  CHECK(plan.steps[1].rewritten == nullptr);
  REQUIRE(plan.steps[2].rewritten != nullptr);
  CHECK(plan.steps[2].rewritten->inputs[0].var == v);
  CHECK(plan.steps[2].rewritten->inputs[1].var == v);
  CHECK(plan.steps[2].rewritten->params.get<std::vector<std::int64_t>>("lhs_contracting", "t") ==
        std::vector<std::int64_t>{1});
  CHECK(plan.steps[2].rewritten->params.get<std::vector<std::int64_t>>("rhs_contracting", "t") ==
        std::vector<std::int64_t>{1});
  CHECK(plan.steps[3].first_equation == 4);
  CHECK(plan.steps[4].first_equation == 5);
  CHECK(plan.steps[4].rewritten == nullptr);

  check_runs_as_one_at_a_time(*p, {ramp({2, 6, 5}), ramp({2, 4, 5}), ramp({3, 6})});
}

TEST_CASE("program::plan: a transpose of a product read only by it is the product with its result permuted",
          "[program][fusion]") {
  // b's cotangent in grad(sum(a @ b)): transpose(dot_general(ct, a) over axis 1) is made as dot_general(a, ct).
  ProgramBuilder b;
  Var ct = b.add_input({{2, 5, 4}, DType::kFloat32, false});
  Var a = b.add_input({{2, 5, 3}, DType::kFloat32, false});
  Var prod = b.add_equation("dot_general", {Atom::of(ct), Atom::of(a)}, dims({1}, {1}, {0}, {0}), kLoc)[0];
  Var gb = b.add_equation("transpose", {Atom::of(prod)}, with("permutation", {0, 2, 1}), kLoc)[0];
  // Moving the batch axis is no order the product makes: the kernel permutes its result.
  Var prod2 = b.add_equation("dot_general", {Atom::of(ct), Atom::of(a)}, dims({1}, {1}, {0}, {0}), kLoc)[0];
  Var moved = b.add_equation("transpose", {Atom::of(prod2)}, with("permutation", {1, 0, 2}), kLoc)[0];
  b.set_outputs({Atom::of(gb), Atom::of(moved)});
  ProgramRef p = b.finish();

  const ExecutionPlan& plan = p->plan();
  REQUIRE(plan.steps.size() == 2);  // the products folded into the transposes
  for (std::size_t s = 0; s < 2; ++s) {
    CHECK(plan.steps[s].first_equation == static_cast<int>(2 * s + 1));
    REQUIRE(plan.steps[s].rewritten != nullptr);
    CHECK(plan.steps[s].rewritten->primitive->name == "dot_general");
    CHECK(plan.steps[s].rewritten->inputs[0].var == ct);
  }
  CHECK(plan.steps[0].rewritten->outputs == std::vector<Var>{gb});
  CHECK(plan.steps[0].rewritten->params.get<std::vector<std::int64_t>>("out_permutation", "t") ==
        std::vector<std::int64_t>{0, 2, 1});
  CHECK(plan.steps[1].rewritten->outputs == std::vector<Var>{moved});
  check_runs_as_one_at_a_time(*p, {ramp({2, 5, 4}), ramp({2, 5, 3})});
}

TEST_CASE("program::plan: integer_pow fuses as its multiplications, bit for bit, but y == 0 does not",
          "[program][fusion]") {
  ProgramBuilder b;
  Var x = b.add_input({{4, 5}, DType::kFloat32, false});
  auto power = [&](Var v, std::int64_t y) {
    Params p;
    p.set("y", y);
    return b.add_equation("integer_pow", {Atom::of(v)}, p, kLoc)[0];
  };
  Var cube = power(x, 3);
  Var inv = power(cube, -2);
  Var sum = b.add_equation("add", {Atom::of(inv), Atom::of(x)}, {}, kLoc)[0];
  Var ones = power(sum, 0);
  Var seven = power(ones, 7);
  b.set_outputs({Atom::of(sum), Atom::of(seven)});
  ProgramRef p = b.finish();

  const ExecutionPlan& plan = p->plan();
  REQUIRE(plan.steps.size() == 3);  // x**3, **-2, add fused; **0 alone; **7 alone (one equation)
  CHECK(plan.steps[0].equation_count == 3);
  CHECK(plan.steps[0].fused != nullptr);
  CHECK(plan.steps[1].equation_count == 1);
  CHECK(plan.steps[2].equation_count == 1);
  check_runs_as_one_at_a_time(*p, {ramp({4, 5})});
  // ones
  CHECK(execute(*p, std::vector<Array>{ramp({4, 5})})[1].identical(full({4, 5}, 1.0, DType::kFloat32)));
}
