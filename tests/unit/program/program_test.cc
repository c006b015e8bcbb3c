// Traced programs: building (abstract evaluation and its errors), executing
// on the host and on every device of a pmap, and the jaxpr text.

#include <catch2/catch.hpp>

#include "spmd/error.h"
#include "spmd/program/executor.h"
#include "spmd/program/primitive.h"
#include "spmd/runtime/runtime.h"
#include "support/spawn.h"

using namespace spmd;
using namespace spmd::program;
using namespace spmd::testing;

namespace {

const SourceLoc kLoc{"prog.py", 7, 12};

Atom lit(double v) { return Atom::of_literal(Array::scalar(v, DType::kFloat32, true)); }

Params axes_param(std::vector<std::string> names) {
  Params p;
  p.set("axes", std::move(names));
  return p;
}

// f(x) = psum(x * 2, 'i') traced for a pmap over 'i' of size n.
ProgramRef doubled_psum(int n) {
  ProgramBuilder b({{"i", n}});
  Var x = b.add_input({{3}, DType::kFloat32, false});
  Var y = b.add_equation("mul", {Atom::of(x), lit(2)}, {}, kLoc)[0];
  Var z = b.add_equation("psum", {Atom::of(y)}, axes_param({"i"}), SourceLoc{"prog.py", 8, 5})[0];
  b.set_outputs({Atom::of(z)});
  return b.finish();
}

}  // namespace

TEST_CASE("program::build: abstract evaluation gives JAX's shapes and dtypes", "[program]") {
  ProgramBuilder b;
  Var x = b.add_input({{4, 1}, DType::kInt32, false});
  Var y = b.add_input({{3}, DType::kFloat32, false});
  Var s = b.add_equation("add", {Atom::of(x), Atom::of(y)}, {}, kLoc)[0];
  REQUIRE(b.aval(s) == Aval{{4, 3}, DType::kFloat32, false});
  Var w = b.add_equation("mul", {Atom::of(x), lit(0.5)}, {}, kLoc)[0];  // int32 * weak float -> weak float32, as JAX
  REQUIRE(b.aval(w) == Aval{{4, 1}, DType::kFloat32, true});
  Params r;
  r.set("axes", std::vector<std::int64_t>{0});
  Var m = b.add_equation("reduce_max", {Atom::of(s)}, r, kLoc)[0];
  REQUIRE(b.aval(m) == Aval{{3}, DType::kFloat32, false});
  Params t;
  t.set("permutation", std::vector<std::int64_t>{1, 0});
  REQUIRE(b.aval(b.add_equation("transpose", {Atom::of(s)}, t, kLoc)[0]).shape == Shape{3, 4});
  Params idx;  // s[1:, ::2]
  idx.set("items", std::vector<std::int64_t>{1, 1, 0, 0, 1, 1, 0, 0, 2, 4});
  REQUIRE(b.aval(b.add_equation("index", {Atom::of(s)}, idx, kLoc)[0]).shape == Shape{3, 2});
  Params sq;
  sq.set("dimensions", std::vector<std::int64_t>{1});
  REQUIRE(b.aval(b.add_equation("squeeze", {Atom::of(x)}, sq, kLoc)[0]) == Aval{{4}, DType::kInt32, false});
  try {
    b.add_equation("squeeze", {Atom::of(s)}, sq, kLoc);
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    CHECK(e.report().message == "squeeze: cannot select an axis to squeeze out which has size not equal to one, got "
                                "shape=(4, 3) and dimensions=(1,)");
  }
}

TEST_CASE("program::build: a bad equation fails where it was traced, with the op's error", "[program]") {
  ProgramBuilder b({{"devices", 4}});
  Var x = b.add_input({{4}, DType::kFloat32, false});
  Var y = b.add_input({{3}, DType::kFloat32, false});
  try {
    b.add_equation("add", {Atom::of(x), Atom::of(y)}, {}, kLoc);
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    REQUIRE(e.report().where == kLoc);
    REQUIRE(e.report().message.find("(4,)") != std::string::npos);
  }
  try {
    b.add_equation("psum", {Atom::of(x)}, axes_param({"device"}), kLoc);
    FAIL("expected an AxisNameError");
  } catch (const AxisNameError& e) {
    REQUIRE(e.report().kind == "AxisNameError");
    REQUIRE(e.report().where == kLoc);
    REQUIRE(e.report().hint.find("did you mean 'devices'?") == 0);
  }
  REQUIRE_THROWS_AS(b.add_equation("no_such_primitive", {}, {}, kLoc), ProgramError);
}

TEST_CASE("program::execute: on the host, equations run in order over concrete arrays", "[program]") {
  ProgramBuilder b;
  Var x = b.add_input({{3}, DType::kFloat32, false});
  Var y = b.add_equation("mul", {Atom::of(x), Atom::of(x)}, {}, kLoc)[0];
  Params r;
  r.set("axes", std::vector<std::int64_t>{0});
  Var s = b.add_equation("reduce_sum", {Atom::of(y)}, r, kLoc)[0];
  b.set_outputs({Atom::of(s), Atom::of(y)});
  ProgramRef p = b.finish();
  auto out = execute(*p, std::vector<Array>{f32({1, 2, 3}, {3})});
  REQUIRE(out[0].to_doubles() == std::vector<double>{14});
  REQUIRE(out[1].to_doubles() == std::vector<double>{1, 4, 9});
  REQUIRE_THROWS_AS(execute(*p, std::vector<Array>{f32({1, 2}, {2})}), InvalidArgument);
}

TEST_CASE("program::execute: dynamic windows clamp their starts so the window fits, as XLA does", "[program]") {
  ProgramBuilder b;
  Var x = b.add_input({{5}, DType::kFloat32, false});
  Var i = b.add_input({{}, DType::kInt32, false});
  Params sizes;
  sizes.set("slice_sizes", std::vector<std::int64_t>{2});
  Var window = b.add_equation("dynamic_slice", {Atom::of(x), Atom::of(i)}, sizes, kLoc)[0];
  Var written = b.add_equation("dynamic_update_slice", {Atom::of(x), Atom::of(window), Atom::of(i)}, {}, kLoc)[0];
  REQUIRE(b.aval(window) == Aval{{2}, DType::kFloat32, false});
  b.set_outputs({Atom::of(window), Atom::of(written)});
  ProgramRef p = b.finish();
  const Array xs = f32({0, 1, 2, 3, 4}, {5});
  for (auto [start, first] : {std::pair{1, 1.0}, std::pair{4, 3.0}, std::pair{-3, 0.0}}) {
    INFO("start " << start);
    auto out = execute(*p, std::vector<Array>{xs, Array::scalar_int(start, DType::kInt32)});
    CHECK(out[0].to_doubles() == std::vector<double>{first, first + 1});
    CHECK(out[1].to_doubles() == std::vector<double>{0, 1, 2, 3, 4});  // the window written back where it was read
  }
  ProgramBuilder bad;
  Var y = bad.add_input({{5}, DType::kFloat32, false});
  Var j = bad.add_input({{}, DType::kInt32, false});
  REQUIRE_THROWS_AS(bad.add_equation("dynamic_slice", {Atom::of(y)}, sizes, kLoc), InvalidArgument);  // no start
  Params too_big;
  too_big.set("slice_sizes", std::vector<std::int64_t>{6});
  REQUIRE_THROWS_AS(bad.add_equation("dynamic_slice", {Atom::of(y), Atom::of(j)}, too_big, kLoc), InvalidArgument);
}

TEST_CASE("program::pmap: every device runs the program, collectives meet at the rendezvous", "[program]") {
  Runtime rt({.devices = 4});
  set_default_runtime(&rt);
  PmapOptions o;
  o.axis_name = "i";
  std::vector<double> v;
  for (int k = 0; k < 12; ++k) v.push_back(k);
  auto out = pmap_program(doubled_psum(4), std::vector<Array>{f32(v, {4, 3})}, o);
  set_default_runtime(nullptr);
  REQUIRE(out[0].shape() == Shape{4, 3});
  // sum over devices of 2 * x[d] = 2 * (0+3+6+9, 1+4+7+10, 2+5+8+11)
  REQUIRE(row(out[0], 2) == std::vector<double>{36, 44, 52});
}

TEST_CASE("program::cond: a branch with a collective taken by some devices only is a deadlock", "[program]") {
  // f(x) = cond(axis_index('i') == 2, skip, psum)(x)
  ProgramBuilder reduce_b({{"i", 4}});
  Var a = reduce_b.add_input({{}, DType::kFloat32, false});
  reduce_b.set_outputs({Atom::of(reduce_b.add_equation("psum", {Atom::of(a)}, axes_param({"i"}), SourceLoc{"prog.py", 3, 16})[0])});
  ProgramBuilder skip_b({{"i", 4}});
  skip_b.set_outputs({Atom::of(skip_b.add_input({{}, DType::kFloat32, false}))});

  ProgramBuilder b({{"i", 4}});
  Var x = b.add_input({{}, DType::kFloat32, false});
  Var i = b.add_equation("axis_index", {}, axes_param({"i"}), kLoc)[0];
  Var is2 = b.add_equation("eq", {Atom::of(i), Atom::of_literal(Array::scalar_int(2, DType::kInt32, true))}, {}, kLoc)[0];
  Params cp;
  cp.set("new_dtype", std::string("int32"));
  Var index = b.add_equation("convert_element_type", {Atom::of(is2)}, cp, kLoc)[0];
  Params branches;
  branches.set("branches", std::vector<ProgramRef>{reduce_b.finish(), skip_b.finish()});
  const SourceLoc cond_loc{"prog.py", 9, 9};
  Var z = b.add_equation("cond", {Atom::of(index), Atom::of(x)}, branches, cond_loc)[0];
  b.set_outputs({Atom::of(z)});
  ProgramRef p = b.finish();

  Runtime rt({.devices = 4});
  set_default_runtime(&rt);
  PmapOptions o;
  o.axis_name = "i";
  try {
    pmap_program(p, std::vector<Array>{f32({0, 1, 2, 3}, {4})}, o);
    set_default_runtime(nullptr);
    FAIL("expected a deadlock");
  } catch (const DeadlockError& e) {
    set_default_runtime(nullptr);
    const Report& r = e.report();
    REQUIRE(r.where == SourceLoc{"prog.py", 3, 16});
    REQUIRE(r.divergence.decision_loc == cond_loc);
    REQUIRE(r.devices.size() == 4);
    REQUIRE(r.devices[2].state == "finished");
    REQUIRE(r.devices[0].state == "waiting");
  }
}

TEST_CASE("program::jaxpr: printed in JAX's text form", "[program]") {
  REQUIRE(to_jaxpr_text(*doubled_psum(4)) ==
          "{ lambda ; a:f32[3]. let\n"
          "    b:f32[3] = mul a 2.0:f32[]\n"
          "    c:f32[3] = psum[axes=('i',)] b\n"
          "  in (c,) }");
  ProgramBuilder b;
  Var x = b.add_input({{}, DType::kInt32, false});
  b.set_outputs({Atom::of(b.add_equation("neg", {Atom::of(x)}, {}, kLoc)[0])});
  REQUIRE(to_jaxpr_text(*b.finish()) == "{ lambda ; a:i32[]. let b:i32[] = neg a in (b,) }");
  // JAX's parameters spmdsim leaves unset print as None, in their sorted place.
  ProgramBuilder r;
  Var y = r.add_input({{2, 3}, DType::kFloat32, false});
  Params sizes;
  sizes.set("new_sizes", std::vector<std::int64_t>{6});
  r.set_outputs({Atom::of(r.add_equation("reshape", {Atom::of(y)}, sizes, kLoc)[0])});
  REQUIRE(to_jaxpr_text(*r.finish()) ==
          "{ lambda ; a:f32[2,3]. let\n"
          "    b:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a\n"
          "  in (b,) }");
}

TEST_CASE("program::build: collectives over axis_index_groups take the group's size", "[program]") {
  ProgramBuilder b({{"i", 4}});
  Var x = b.add_input({{2, 3}, DType::kFloat32, false});
  Params p = axes_param({"i"});
  p.set("axis_index_groups", std::vector<std::int64_t>{0, 1, 2, 3});
  p.set("group_size", std::int64_t{2});
  p.set("scatter_dimension", std::int64_t{0});
  REQUIRE(b.aval(b.add_equation("psum_scatter", {Atom::of(x)}, p, kLoc)[0]).shape == Shape{3});
  p.set("axis", std::int64_t{0});
  REQUIRE(b.aval(b.add_equation("all_gather", {Atom::of(x)}, p, kLoc)[0]).shape == Shape{2, 2, 3});
}
