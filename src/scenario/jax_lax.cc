// jax.lax: collectives, axis_index, control flow (cond, switch, fori_loop,
// while_loop, scan, map) and a few primitive ops.
//
// Control flow runs per device with that device's values. Every decision is
// recorded with spmd::record_decision so the runtime's deadlock and mismatch
// reports can name the cond or loop whose outcome differed across devices.

#include <algorithm>

#include "scenario/interpreter.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/python_errors.h"
#include "scenario/pytree.h"
#include "spmd/collectives/all_gather.h"
#include "spmd/collectives/all_to_all.h"
#include "spmd/collectives/axis_index.h"
#include "spmd/collectives/ppermute.h"
#include "spmd/collectives/psum_scatter.h"
#include "spmd/collectives/reduce.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/runtime/device.h"

namespace spmd::scenario {

namespace {

// ============================================================================
// collectives

Value lax_reduction(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "axis_name", "axis_index_groups"}, 2, 2);
  int which = static_cast<int>(c.data.as_int());  // 0 psum, 1 pmean, 2 pmax, 3 pmin
  AxisSet axes = to_axis_set(args[1], c.name);
  AxisIndexGroups groups = to_groups(c.st, args[2]);
  SourceLoc loc = c.loc();
  std::vector<Value> leaves;
  TreeDef t = tree_flatten(c.interp, c.st, args[0], leaves);
  std::vector<Value> out(leaves.size());
  std::vector<Array> arrays;
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const Value& v = leaves[i];
    if (v.is_number() && (which == 0 || which == 1)) {
      // JAX folds collectives of Python constants: psum(1, 'i') is the axis size.
      std::int64_t n = groups.empty() ? axis_size(axes, loc) : static_cast<std::int64_t>(groups[0].size());
      if (which == 1) {
        out[i] = Value::floating(v.as_float());
      } else if (v.is(Kind::kFloat)) {
        out[i] = Value::floating(v.as_float() * static_cast<double>(n));
      } else {
        out[i] = Value::integer(v.as_int() * n);
      }
      continue;
    }
    arrays.push_back(to_array(c.st, v));
    positions.push_back(i);
  }
  if (!arrays.empty()) {
    std::vector<Array> r;
    switch (which) {
      case 0: r = psum(std::span<const Array>(arrays), axes, groups, loc); break;
      case 1: r = pmean(std::span<const Array>(arrays), axes, groups, loc); break;
      case 2: r = pmax(std::span<const Array>(arrays), axes, groups, loc); break;
      default: r = pmin(std::span<const Array>(arrays), axes, groups, loc); break;
    }
    for (std::size_t k = 0; k < positions.size(); ++k) out[positions[k]] = Value::array(r[k]);
  } else if (leaves.empty()) {
    // An empty tree still must meet the others at the rendezvous: nothing to do, as in JAX.
  }
  return tree_unflatten(c.st, t, out);
}

template <class F>
Value per_leaf(NativeCall& c, const Value& tree, F&& f) {
  std::vector<Value> leaves;
  TreeDef t = tree_flatten(c.interp, c.st, tree, leaves);
  std::vector<Value> out;
  for (const auto& v : leaves) out.push_back(Value::array(f(to_array(c.st, v))));
  return tree_unflatten(c.st, t, out);
}

Value lax_all_gather(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "axis_name", "axis_index_groups", "axis", "tiled"}, 2, 2);
  AxisSet axes = to_axis_set(args[1], c.name);
  AxisIndexGroups groups = to_groups(c.st, args[2]);
  int axis = args.has(3) ? static_cast<int>(to_int(c.st, args[3], "axis")) : 0;
  bool tiled = args.given(4) && c.interp.truthy(c.st, args[4]);
  SourceLoc loc = c.loc();
  return per_leaf(c, args[0], [&](const Array& x) { return all_gather(x, axes, axis, tiled, groups, loc); });
}

Value lax_psum_scatter(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "axis_name", "scatter_dimension", "axis_index_groups", "tiled"}, 2, 2);
  AxisSet axes = to_axis_set(args[1], c.name);
  int dim = args.has(2) ? static_cast<int>(to_int(c.st, args[2], "scatter_dimension")) : 0;
  AxisIndexGroups groups = to_groups(c.st, args[3]);
  bool tiled = args.given(4) && c.interp.truthy(c.st, args[4]);
  SourceLoc loc = c.loc();
  return per_leaf(c, args[0], [&](const Array& x) { return psum_scatter(x, axes, dim, tiled, groups, loc); });
}

Value lax_all_to_all(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "axis_name", "split_axis", "concat_axis", "axis_index_groups", "tiled"}, 4, 4);
  AxisSet axes = to_axis_set(args[1], c.name);
  int split_axis = static_cast<int>(to_int(c.st, args[2], "split_axis"));
  int concat_axis = static_cast<int>(to_int(c.st, args[3], "concat_axis"));
  AxisIndexGroups groups = to_groups(c.st, args[4]);
  bool tiled = args.given(5) && c.interp.truthy(c.st, args[5]);
  SourceLoc loc = c.loc();
  return per_leaf(c, args[0],
                  [&](const Array& x) { return all_to_all(x, axes, split_axis, concat_axis, tiled, groups, loc); });
}

Permutation to_permutation(NativeCall& c, const Value& v) {
  Permutation perm;
  for (const auto& pair : c.interp.iterate(c.st, v)) {
    std::vector<Value> p = c.interp.iterate(c.st, pair);
    if (p.size() != 2) raise_value_error("ppermute: perm must be a list of (source, destination) pairs");
    perm.emplace_back(static_cast<int>(to_int(c.st, p[0], "perm")), static_cast<int>(to_int(c.st, p[1], "perm")));
  }
  return perm;
}

Value lax_ppermute(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "axis_name", "perm"}, 3);
  AxisSet axes = to_axis_set(args[1], c.name);
  Permutation perm = to_permutation(c, args[2]);
  SourceLoc loc = c.loc();
  return per_leaf(c, args[0], [&](const Array& x) { return ppermute(x, axes, perm, loc); });
}

Value lax_pshuffle(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "axis_name", "perm"}, 3);
  AxisSet axes = to_axis_set(args[1], c.name);
  Permutation perm;
  int i = 0;
  for (const auto& v : c.interp.iterate(c.st, args[2])) perm.emplace_back(static_cast<int>(to_int(c.st, v, "perm")), i++);
  SourceLoc loc = c.loc();
  return per_leaf(c, args[0], [&](const Array& x) { return ppermute(x, axes, perm, loc); });
}

Value lax_axis_index(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"axis_name"}, 1);
  return Value::array(axis_index(to_axis_set(args[0], c.name), c.loc()));
}

Value lax_axis_size(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"axis_name"}, 1);
  return Value::integer(axis_size(to_axis_set(args[0], c.name), c.loc()));
}

// ============================================================================
// control flow

// A scalar predicate or index (concrete on each device).
std::int64_t scalar_operand(NativeCall& c, const Value& v, const char* what) {
  if (v.is_number()) return v.is(Kind::kFloat) ? (v.as_float() != 0.0) : v.as_int();
  if (!v.is(Kind::kArray)) {
    raise_type_error(std::string(what) + " must be a scalar boolean or number, got " + type_name(v));
  }
  const Array& x = v.as_array();
  if (x.ndim() != 0) {
    raise_type_error(std::string(what) + " must be a scalar, got an array of shape " + shape_to_string(x.shape()),
                     "reduce it first (e.g. jnp.all(x) or x[0]), or use jnp.where for elementwise selection");
  }
  if (is_floating(x.dtype())) return x.element_as_double(0) != 0.0;
  return x.element_as_int64(0);
}

Value call_with(NativeCall& c, const Value& fn, std::vector<Value> args) {
  CallArgs call_args;
  call_args.pos = std::move(args);
  return c.interp.call(c.st, fn, call_args, c.site);
}

// JAX requires a loop carry to keep its structure, shapes and dtypes.
void check_carry(NativeCall& c, const char* what, const Value& before, const Value& after) {
  std::vector<Value> a_leaves, b_leaves;
  TreeDef ta = tree_flatten(c.interp, c.st, before, a_leaves);
  TreeDef tb = tree_flatten(c.interp, c.st, after, b_leaves);
  if (!ta.same_structure(tb)) {
    raise_type_error(std::string(what) + " must have identical types: the carry changed structure from " +
                         ta.to_string(c.interp, c.st) + " to " + tb.to_string(c.interp, c.st),
                     "return the carry with the same tuple/list/dict structure it came in with");
  }
  for (std::size_t i = 0; i < a_leaves.size(); ++i) {
    if (!(a_leaves[i].is(Kind::kArray) || a_leaves[i].is_number()) ||
        !(b_leaves[i].is(Kind::kArray) || b_leaves[i].is_number())) {
      continue;
    }
    Array x = to_array(c.st, a_leaves[i]);
    Array y = to_array(c.st, b_leaves[i]);
    bool dtype_ok = x.dtype() == y.dtype() || x.weak_type() || y.weak_type();
    if (x.shape() != y.shape() || !dtype_ok) {
      raise_type_error(std::string(what) + " must have identical types: carry leaf " + std::to_string(i) +
                           " entered as " + aval_string(x) + " and came out as " + aval_string(y),
                       "keep every carried array's shape and dtype fixed across iterations (cast with .astype)");
    }
  }
}

Value lax_cond(NativeCall& c, CallArgs& a) {
  std::vector<Value> operands;
  for (auto& [k, v] : a.kw) {
    if (k == "operand") operands.push_back(v);
    else raise_type_error("cond() got an unexpected keyword argument '" + k + "'");
  }
  if (a.pos.size() < 3) {
    raise_type_error("cond() missing required arguments: cond(pred, true_fun, false_fun, *operands)");
  }
  std::int64_t p = scalar_operand(c, a.pos[0], "lax.cond: pred");
  int branch = p != 0 ? 1 : 0;
  record_decision("lax.cond", branch, c.loc());
  operands.insert(operands.begin(), a.pos.begin() + 3, a.pos.end());
  return call_with(c, a.pos[branch == 1 ? 1 : 2], operands);
}

Value lax_switch(NativeCall& c, CallArgs& a) {
  if (a.pos.size() < 2) raise_type_error("switch() missing required arguments: switch(index, branches, *operands)");
  std::vector<Value> branches = c.interp.iterate(c.st, a.pos[1]);
  if (branches.empty()) raise_value_error("Empty branch sequence");
  std::int64_t i = scalar_operand(c, a.pos[0], "lax.switch: index");
  i = std::clamp<std::int64_t>(i, 0, static_cast<std::int64_t>(branches.size()) - 1);
  record_decision("lax.switch", i, c.loc());
  std::vector<Value> operands(a.pos.begin() + 2, a.pos.end());
  for (auto& [k, v] : a.kw) {
    if (k == "operand") operands.push_back(v);
  }
  return call_with(c, branches[static_cast<std::size_t>(i)], operands);
}

Value lax_fori_loop(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"lower", "upper", "body_fun", "init_val", "unroll"}, 4, 4);
  std::int64_t lower = scalar_operand(c, args[0], "lax.fori_loop: lower");
  std::int64_t upper = scalar_operand(c, args[1], "lax.fori_loop: upper");
  DType t = kDefaultInt;
  if (args[0].is(Kind::kArray)) t = args[0].as_array().dtype();
  else if (args[1].is(Kind::kArray)) t = args[1].as_array().dtype();
  if (!is_integer(t)) raise_type_error("lax.fori_loop: lower and upper must be integers");
  SourceLoc loc = c.loc();
  record_decision("lax.fori_loop", std::max<std::int64_t>(0, upper - lower), loc);
  Value val = args[3];
  for (std::int64_t i = lower; i < upper; ++i) {
    count_steps();
    Value next = call_with(c, args[2], {Value::array(Array::scalar_int(i, t)), val});
    check_carry(c, "lax.fori_loop: body_fun input and output", val, next);
    val = std::move(next);
  }
  return val;
}

Value lax_while_loop(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"cond_fun", "body_fun", "init_val"}, 3);
  SourceLoc loc = c.loc();
  Value val = args[2];
  while (true) {
    count_steps();
    Value test = call_with(c, args[0], {val});
    bool ok_type = test.is(Kind::kBool) ||
                   (test.is(Kind::kArray) && test.as_array().ndim() == 0 && test.as_array().dtype() == DType::kBool);
    if (!ok_type) {
      std::string got = test.is(Kind::kArray) ? aval_string(test.as_array()) : type_name(test);
      raise_type_error("lax.while_loop: cond_fun must return a boolean scalar, but got output type " + got,
                       "return a scalar comparison such as `i < n`, reduced with jnp.all/jnp.any if needed");
    }
    bool go = test.is(Kind::kBool) ? test.as_bool() : test.as_array().element_as_bool(0);
    record_decision("lax.while_loop", go ? 1 : 0, loc);
    if (!go) break;
    Value next = call_with(c, args[1], {val});
    check_carry(c, "lax.while_loop: body_fun input and output", val, next);
    val = std::move(next);
  }
  return val;
}

Value slice_leading(const Value& leaf, std::int64_t i) {
  return Value::array(index(leaf.as_array(), {IndexItem::at(i)}));
}

Value lax_scan(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"f", "init", "xs", "length", "reverse", "unroll"}, 2);
  bool reverse = args.given(4) && c.interp.truthy(c.st, args[4]);
  std::vector<Value> x_leaves;
  Value xs = args.given(2) ? args[2] : Value::none();
  TreeDef xt = tree_flatten(c.interp, c.st, xs, x_leaves);
  std::optional<std::int64_t> n;
  if (args.has(3)) n = to_int(c.st, args[3], "scan length");
  for (auto& leaf : x_leaves) {
    leaf = Value::array(to_array(c.st, leaf));
    const Array& x = leaf.as_array();
    if (x.ndim() == 0) raise_value_error("scan got value with no leading axis to scan over: " + aval_string(x));
    if (n && *n != x.shape()[0]) {
      raise_value_error("scan got values with different leading axis sizes: " + std::to_string(*n) + " and " +
                        std::to_string(x.shape()[0]));
    }
    n = x.shape()[0];
  }
  if (!n) raise_value_error("scan got no values to scan over and `length` not provided.");
  SourceLoc loc = c.loc();
  record_decision("lax.scan", *n, loc);
  Value carry = args[1];
  std::vector<std::vector<Value>> ys(static_cast<std::size_t>(*n));
  std::optional<TreeDef> yt;
  for (std::int64_t step = 0; step < *n; ++step) {
    count_steps();
    std::int64_t i = reverse ? *n - 1 - step : step;
    std::vector<Value> mine;
    for (const auto& leaf : x_leaves) mine.push_back(slice_leading(leaf, i));
    Value x = tree_unflatten(c.st, xt, mine);
    Value r = call_with(c, args[0], {carry, x});
    std::vector<Value> pair;
    if (r.is(Kind::kTuple) || r.is(Kind::kList)) pair = c.interp.iterate(c.st, r);
    if (pair.size() != 2) {
      raise_type_error("scan body output must be a pair (carry, y), got " + c.interp.repr(c.st, r),
                       "return `carry, y` from the scanned function (y may be None)");
    }
    check_carry(c, "lax.scan: body function carry input and carry output", carry, pair[0]);
    carry = pair[0];
    std::vector<Value> y_leaves;
    TreeDef t = tree_flatten(c.interp, c.st, pair[1], y_leaves);
    if (!yt) yt = t;
    ys[static_cast<std::size_t>(i)] = std::move(y_leaves);
  }
  Value stacked = Value::none();
  if (yt) {
    std::vector<Value> out;
    for (std::size_t j = 0; j < yt->num_leaves; ++j) {
      std::vector<Array> parts;
      for (auto& step : ys) parts.push_back(to_array(c.st, step.at(j)));
      out.push_back(Value::array(stack(parts, 0)));
    }
    stacked = tree_unflatten(c.st, *yt, out);
  }
  return Value::tuple({carry, stacked});
}

Value lax_map(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"f", "xs", "batch_size"}, 2);
  std::vector<Value> leaves;
  TreeDef xt = tree_flatten(c.interp, c.st, args[1], leaves);
  if (leaves.empty()) raise_value_error("lax.map got no values to map over");
  for (auto& l : leaves) l = Value::array(to_array(c.st, l));
  std::int64_t n = leaves[0].as_array().ndim() == 0 ? 0 : leaves[0].as_array().shape()[0];
  std::vector<std::vector<Value>> ys;
  std::optional<TreeDef> yt;
  for (std::int64_t i = 0; i < n; ++i) {
    count_steps();
    std::vector<Value> mine;
    for (const auto& l : leaves) mine.push_back(slice_leading(l, i));
    Value r = call_with(c, args[0], {tree_unflatten(c.st, xt, mine)});
    std::vector<Value> y;
    TreeDef t = tree_flatten(c.interp, c.st, r, y);
    if (!yt) yt = t;
    ys.push_back(std::move(y));
  }
  if (!yt) return Value::none();
  std::vector<Value> out;
  for (std::size_t j = 0; j < yt->num_leaves; ++j) {
    std::vector<Array> parts;
    for (auto& y : ys) parts.push_back(to_array(c.st, y.at(j)));
    out.push_back(Value::array(stack(parts, 0)));
  }
  return tree_unflatten(c.st, *yt, out);
}

// ============================================================================
// primitives

Value lax_unary(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  return Value::array(unary(static_cast<UnaryOp>(c.data.as_int()), to_array(c.st, args[0])));
}

Value lax_binary(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "y"}, 2);
  return Value::array(binary(static_cast<BinaryOp>(c.data.as_int()), to_array(c.st, args[0]), to_array(c.st, args[1])));
}

Value lax_identity(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x"}, 1);
  return args[0];
}

Value lax_select(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"pred", "on_true", "on_false"}, 3);
  return Value::array(where(to_array(c.st, args[0]), to_array(c.st, args[1]), to_array(c.st, args[2])));
}

Value lax_integer_pow(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "y"}, 2);
  Array x = to_array(c.st, args[0]);
  return Value::array(binary(BinaryOp::kPower, x, astype(Array::scalar_int(to_int(c.st, args[1], "y"), kDefaultInt), x.dtype())));
}

Value lax_convert(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"operand", "new_dtype"}, 2);
  return Value::array(astype(to_array(c.st, args[0]), to_dtype(args[1])));
}

Value lax_iota(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"dtype", "size"}, 2);
  return Value::array(arange(0, static_cast<double>(to_int(c.st, args[1], "size")), 1, to_dtype(args[0])));
}

std::vector<std::int64_t> starts_of(NativeCall& c, const Value& v) {
  std::vector<std::int64_t> out;
  std::vector<Value> items = v.is(Kind::kArray) ? c.interp.iterate(c.st, v) : c.interp.iterate(c.st, v);
  for (const auto& s : items) {
    if (s.is(Kind::kArray)) {
      // Traced start indices are allowed (they are concrete on each device).
      out.push_back(s.as_array().element_as_int64(0));
    } else {
      out.push_back(to_int(c.st, s, "start index"));
    }
  }
  return out;
}

std::vector<IndexItem> window(const Array& x, const std::vector<std::int64_t>& starts, const Shape& sizes) {
  if (static_cast<int>(starts.size()) != x.ndim() || static_cast<int>(sizes.size()) != x.ndim()) {
    raise_type_error("dynamic_slice: start_indices and slice_sizes need one entry per dimension of the operand (" +
                     std::to_string(x.ndim()) + ")");
  }
  std::vector<IndexItem> items;
  for (int d = 0; d < x.ndim(); ++d) {
    std::int64_t dim = x.shape()[static_cast<std::size_t>(d)];
    std::int64_t size = sizes[static_cast<std::size_t>(d)];
    if (size > dim) raise_type_error("dynamic_slice: slice size " + std::to_string(size) + " exceeds dimension " + std::to_string(dim));
    // JAX clamps the start so that the window fits.
    std::int64_t s = std::clamp<std::int64_t>(starts[static_cast<std::size_t>(d)], 0, dim - size);
    items.push_back(IndexItem::slice(s, s + size));
  }
  return items;
}

Value lax_dynamic_slice(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"operand", "start_indices", "slice_sizes"}, 3);
  Array x = to_array(c.st, args[0]);
  return Value::array(index(x, window(x, starts_of(c, args[1]), to_shape(c.st, args[2], "dynamic_slice"))));
}

Value lax_dynamic_update_slice(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"operand", "update", "start_indices"}, 3);
  Array x = to_array(c.st, args[0]);
  Array u = to_array(c.st, args[1]);
  if (u.dtype() != x.dtype()) u = astype(u, x.dtype());
  return Value::array(index_update(x, window(x, starts_of(c, args[2]), u.shape()), u, UpdateMode::kSet));
}

Value lax_dynamic_slice_in_dim(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"operand", "start_index", "slice_size", "axis"}, 3);
  Array x = to_array(c.st, args[0]);
  int axis = normalize_axis(args.has(3) ? to_int(c.st, args[3], "axis") : 0, x.ndim(), "dynamic_slice_in_dim");
  std::vector<std::int64_t> starts(static_cast<std::size_t>(x.ndim()), 0);
  starts[static_cast<std::size_t>(axis)] = starts_of(c, Value::tuple({args[1]}))[0];
  Shape sizes = x.shape();
  sizes[static_cast<std::size_t>(axis)] = to_int(c.st, args[2], "slice_size");
  return Value::array(index(x, window(x, starts, sizes)));
}

Value lax_dynamic_index_in_dim(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"operand", "index", "axis", "keepdims"}, 2);
  Array x = to_array(c.st, args[0]);
  int axis = normalize_axis(args.has(2) ? to_int(c.st, args[2], "axis") : 0, x.ndim(), "dynamic_index_in_dim");
  std::vector<std::int64_t> starts(static_cast<std::size_t>(x.ndim()), 0);
  starts[static_cast<std::size_t>(axis)] = starts_of(c, Value::tuple({args[1]}))[0];
  Shape sizes = x.shape();
  sizes[static_cast<std::size_t>(axis)] = 1;
  Array r = index(x, window(x, starts, sizes));
  bool keepdims = !args.given(3) || c.interp.truthy(c.st, args[3]);
  return Value::array(keepdims ? r : squeeze(r, {axis}));
}

}  // namespace

Value build_lax_module(Interpreter& interp) {
  auto m = std::make_shared<ModuleObject>("jax.lax");
  auto fn = [&](const std::string& n, NativeFn f, Value data = {}) {
    m->set(n, make_native("jax.lax." + n, f, Value(), std::move(data)));
  };
  fn("psum", lax_reduction, Value::integer(0));
  fn("pmean", lax_reduction, Value::integer(1));
  fn("pmax", lax_reduction, Value::integer(2));
  fn("pmin", lax_reduction, Value::integer(3));
  fn("all_gather", lax_all_gather);
  fn("psum_scatter", lax_psum_scatter);
  fn("all_to_all", lax_all_to_all);
  fn("ppermute", lax_ppermute);
  fn("pshuffle", lax_pshuffle);
  fn("axis_index", lax_axis_index);
  fn("axis_size", lax_axis_size);
  fn("cond", lax_cond);
  fn("switch", lax_switch);
  fn("fori_loop", lax_fori_loop);
  fn("while_loop", lax_while_loop);
  fn("scan", lax_scan);
  fn("map", lax_map);
  fn("select", lax_select);
  fn("stop_gradient", lax_identity);
  fn("integer_pow", lax_integer_pow);
  fn("convert_element_type", lax_convert);
  fn("iota", lax_iota);
  fn("dynamic_slice", lax_dynamic_slice);
  fn("dynamic_update_slice", lax_dynamic_update_slice);
  fn("dynamic_slice_in_dim", lax_dynamic_slice_in_dim);
  fn("dynamic_index_in_dim", lax_dynamic_index_in_dim);
  static const std::pair<const char*, UnaryOp> kUnary[] = {
      {"neg", UnaryOp::kNegative}, {"abs", UnaryOp::kAbs},     {"sign", UnaryOp::kSign},   {"exp", UnaryOp::kExp},
      {"log", UnaryOp::kLog},      {"log1p", UnaryOp::kLog1p}, {"expm1", UnaryOp::kExpm1}, {"sqrt", UnaryOp::kSqrt},
      {"rsqrt", UnaryOp::kRsqrt},  {"square", UnaryOp::kSquare}, {"sin", UnaryOp::kSin},   {"cos", UnaryOp::kCos},
      {"tan", UnaryOp::kTan},      {"tanh", UnaryOp::kTanh},   {"logistic", UnaryOp::kLogistic},
      {"floor", UnaryOp::kFloor},  {"ceil", UnaryOp::kCeil},   {"round", UnaryOp::kRound}, {"not", UnaryOp::kBitwiseNot},
      {"reciprocal", UnaryOp::kReciprocal}, {"is_finite", UnaryOp::kIsFinite},
  };
  for (const auto& [n, op] : kUnary) fn(n, lax_unary, Value::integer(static_cast<std::int64_t>(op)));
  static const std::pair<const char*, BinaryOp> kBinary[] = {
      {"add", BinaryOp::kAdd},  {"sub", BinaryOp::kSubtract}, {"mul", BinaryOp::kMultiply}, {"div", BinaryOp::kDivide},
      {"rem", BinaryOp::kRemainder}, {"pow", BinaryOp::kPower}, {"max", BinaryOp::kMaximum}, {"min", BinaryOp::kMinimum},
      {"eq", BinaryOp::kEqual}, {"ne", BinaryOp::kNotEqual}, {"lt", BinaryOp::kLess}, {"le", BinaryOp::kLessEqual},
      {"gt", BinaryOp::kGreater}, {"ge", BinaryOp::kGreaterEqual}, {"bitwise_and", BinaryOp::kBitwiseAnd},
      {"bitwise_or", BinaryOp::kBitwiseOr}, {"bitwise_xor", BinaryOp::kBitwiseXor}, {"atan2", BinaryOp::kArctan2},
  };
  for (const auto& [n, op] : kBinary) fn(n, lax_binary, Value::integer(static_cast<std::int64_t>(op)));
  return Value::object(Kind::kModule, m);
}

}  // namespace spmd::scenario
