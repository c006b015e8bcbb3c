// jax.random: a deterministic counter-based generator.
//
// A key is an int32[2] array (PRNGKey(s) is [s >> 32, s & 0xffffffff], as in
// JAX). Every number is a splitmix64 hash of (key, stream, counter), so the
// same key gives the same numbers on every run and every device. The values
// differ from JAX's threefry stream; the statistics do not.

#include <cmath>
#include <numeric>

#include "scenario/interpreter.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/python_errors.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/core/reduction.h"

namespace spmd::scenario {

namespace {

constexpr std::uint64_t kSplit = 1, kFold = 2, kUniform = 3, kNormalA = 4, kNormalB = 5, kInt = 6, kPerm = 7;

std::uint64_t splitmix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Key {
  std::uint64_t bits;
  std::uint64_t at(std::uint64_t stream, std::uint64_t counter) const { return splitmix(splitmix(bits ^ splitmix(stream)) + counter); }
};

Key key_of(NativeCall& c, const Value& v, const char* fn) {
  if (!v.is(Kind::kArray)) {
    raise_type_error(std::string("jax.random.") + fn + " expects a PRNG key array, got " + type_name(v),
                     "create keys with jax.random.PRNGKey(seed) and split them with jax.random.split");
  }
  const Array& k = v.as_array();
  if (k.ndim() == 0 || k.shape().back() != 2 || !is_integer(k.dtype())) {
    raise_type_error("JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got shape=" +
                     shape_to_string(k.shape()) + " for dtype=" + std::string(dtype_name(k.dtype())));
  }
  if (k.ndim() != 1) {
    raise_value_error(std::string("jax.random.") + fn + " accepts a single key, but was given a key array of shape " +
                          shape_to_string(Shape(k.shape().begin(), k.shape().end() - 1)) + " != ().",
                      "use jax.vmap for batching, or index one key (keys[i])");
  }
  auto hi = static_cast<std::uint32_t>(k.element_as_int64(0));
  auto lo = static_cast<std::uint32_t>(k.element_as_int64(1));
  return Key{(static_cast<std::uint64_t>(hi) << 32) | lo};
}

Array make_key(std::uint64_t bits) {
  std::vector<std::int64_t> v = {static_cast<std::int32_t>(static_cast<std::uint32_t>(bits >> 32)),
                                 static_cast<std::int32_t>(static_cast<std::uint32_t>(bits))};
  return Array::from_int64s(v, {2}, DType::kInt32);
}

Shape shape_arg(NativeCall& c, const Value& v) {
  if (v.is_undefined() || v.is_none()) return {};
  return to_shape(c.st, v, c.name);
}

double unit(std::uint64_t b) { return static_cast<double>(b >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)

Value rnd_prng_key(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"seed", "impl"}, 1);
  std::int64_t seed = to_int(c.st, args[0], "PRNGKey seed");
  return Value::array(make_key(static_cast<std::uint64_t>(seed)));
}

Value rnd_split(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "num"}, 1);
  Key k = key_of(c, args[0], "split");
  Shape s = args.given(1) ? shape_arg(c, args[1]) : Shape{2};
  std::int64_t n = num_elements(s);
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t b = k.at(kSplit, static_cast<std::uint64_t>(i));
    out.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(b >> 32)));
    out.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(b)));
  }
  s.push_back(2);
  return Value::array(Array::from_int64s(out, s, DType::kInt32));
}

Value rnd_fold_in(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "data"}, 2);
  Key k = key_of(c, args[0], "fold_in");
  std::int64_t d = args[1].is(Kind::kArray) ? args[1].as_array().element_as_int64(0) : to_int(c.st, args[1], "fold_in data");
  return Value::array(make_key(k.at(kFold, static_cast<std::uint64_t>(d))));
}

Value rnd_uniform(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "shape", "dtype", "minval", "maxval"}, 1);
  Key k = key_of(c, args[0], "uniform");
  Shape s = shape_arg(c, args[1]);
  DType t = to_optional_dtype(args[2]).value_or(kDefaultFloat);
  if (!is_floating(t)) raise_type_error("dtype argument to `uniform` must be a float dtype, got " + std::string(dtype_name(t)));
  std::vector<double> v(static_cast<std::size_t>(num_elements(s)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = unit(k.at(kUniform, i));
  Array u = Array::from_doubles(v, s, t);
  if (!args.has(3) && !args.has(4)) return Value::array(u);
  Array lo = args.has(3) ? to_array(c.st, args[3], t) : Array::scalar(0.0, t);
  Array hi = args.has(4) ? to_array(c.st, args[4], t) : Array::scalar(1.0, t);
  return Value::array(binary(BinaryOp::kAdd, lo, binary(BinaryOp::kMultiply, u, binary(BinaryOp::kSubtract, hi, lo))));
}

std::vector<double> normals(const Key& k, std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    double u1 = 1.0 - unit(k.at(kNormalA, i));  // (0, 1]
    double u2 = unit(k.at(kNormalB, i));
    v[i] = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  return v;
}

Value rnd_normal(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "shape", "dtype"}, 1);
  Key k = key_of(c, args[0], "normal");
  Shape s = shape_arg(c, args[1]);
  DType t = to_optional_dtype(args[2]).value_or(kDefaultFloat);
  if (!is_floating(t)) raise_type_error("dtype argument to `normal` must be a float dtype, got " + std::string(dtype_name(t)));
  return Value::array(Array::from_doubles(normals(k, static_cast<std::size_t>(num_elements(s))), s, t));
}

Value rnd_randint(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "shape", "minval", "maxval", "dtype"}, 4);
  Key k = key_of(c, args[0], "randint");
  Shape s = shape_arg(c, args[1]);
  DType t = to_optional_dtype(args[4]).value_or(kDefaultInt);
  if (!is_integer(t)) raise_type_error("dtype argument to `randint` must be an int dtype");
  std::int64_t lo = to_int(c.st, args[2], "randint minval");
  std::int64_t hi = to_int(c.st, args[3], "randint maxval");
  std::vector<std::int64_t> v(static_cast<std::size_t>(num_elements(s)));
  std::uint64_t span = hi > lo ? static_cast<std::uint64_t>(hi - lo) : 1;
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = hi > lo ? lo + static_cast<std::int64_t>(k.at(kInt, i) % span) : lo;
  return Value::array(Array::from_int64s(v, s, t));
}

Value rnd_bernoulli(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "p", "shape"}, 1);
  Key k = key_of(c, args[0], "bernoulli");
  Array p = args.has(1) ? to_array(c.st, args[1]) : Array::scalar(0.5, kDefaultFloat);
  Shape s = args.has(2) ? shape_arg(c, args[2]) : p.shape();
  std::vector<double> v(static_cast<std::size_t>(num_elements(s)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = unit(k.at(kUniform, i));
  return Value::array(binary(BinaryOp::kLess, Array::from_doubles(v, s, kDefaultFloat), p));
}

std::vector<std::int64_t> shuffled(const Key& k, std::int64_t n) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  for (std::int64_t i = n - 1; i > 0; --i) {
    auto j = static_cast<std::int64_t>(k.at(kPerm, static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(i + 1));
    std::swap(idx[static_cast<std::size_t>(i)], idx[static_cast<std::size_t>(j)]);
  }
  return idx;
}

Value rnd_permutation(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "x", "axis", "independent"}, 2);
  Key k = key_of(c, args[0], "permutation");
  if (args[1].is_int_like()) {
    std::int64_t n = args[1].as_int();
    return Value::array(Array::from_int64s(shuffled(k, n), {n}, kDefaultInt));
  }
  Array x = to_array(c.st, args[1]);
  int axis = args.has(2) ? static_cast<int>(to_int(c.st, args[2], "axis")) : 0;
  axis = normalize_axis(axis, x.ndim(), "permutation");
  std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  return Value::array(take(x, Array::from_int64s(shuffled(k, n), {n}, kDefaultInt), axis));
}

Value rnd_choice(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "a", "shape", "replace", "p", "axis"}, 2);
  Key k = key_of(c, args[0], "choice");
  if (args.has(4)) raise_not_implemented("jax.random.choice(p=...)", "sample with jax.random.categorical(key, jnp.log(p))");
  Array pool = args[1].is_int_like() ? arange(args[1].as_int()) : to_array(c.st, args[1]);
  std::int64_t n = pool.shape().empty() ? 0 : pool.shape()[0];
  Shape s = shape_arg(c, args[2]);
  std::int64_t m = num_elements(s);
  bool replace = !args.given(3) || c.interp.truthy(c.st, args[3]);
  std::vector<std::int64_t> idx;
  if (replace) {
    for (std::int64_t i = 0; i < m; ++i) idx.push_back(static_cast<std::int64_t>(k.at(kInt, static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1))));
  } else {
    if (m > n) raise_value_error("Cannot take a larger sample than population when replace=False");
    idx = shuffled(k, n);
    idx.resize(static_cast<std::size_t>(m));
  }
  Array picked = take(pool, Array::from_int64s(idx, {m}, kDefaultInt), 0);
  Shape out = s;
  out.insert(out.end(), pool.shape().begin() + 1, pool.shape().end());
  return Value::array(reshape(picked, out));
}

Array gumbel_array(const Key& k, const Shape& s) {
  std::vector<double> v(static_cast<std::size_t>(num_elements(s)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    double u = std::max(unit(k.at(kUniform, i)), 1e-300);
    v[i] = -std::log(-std::log(u));
  }
  return Array::from_doubles(v, s, kDefaultFloat);
}

Value rnd_gumbel(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "shape", "dtype"}, 1);
  Key k = key_of(c, args[0], "gumbel");
  Array g = gumbel_array(k, shape_arg(c, args[1]));
  if (auto t = to_optional_dtype(args[2])) g = astype(g, *t);
  return Value::array(g);
}

Value rnd_categorical(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "logits", "axis", "shape"}, 2);
  Key k = key_of(c, args[0], "categorical");
  Array logits = to_array(c.st, args[1]);
  int axis = args.has(2) ? static_cast<int>(to_int(c.st, args[2], "axis")) : -1;
  Array noisy = binary(BinaryOp::kAdd, logits, gumbel_array(k, logits.shape()));
  return Value::array(reduce(ReduceOp::kArgMax, noisy, std::vector<int>{axis}));
}

Value rnd_key_data(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"keys"}, 1);
  return args[0];
}

}  // namespace

Value build_random_module(Interpreter& interp) {
  auto m = std::make_shared<ModuleObject>("jax.random");
  auto fn = [&](const std::string& n, NativeFn f) { m->set(n, make_native("jax.random." + n, f)); };
  fn("PRNGKey", rnd_prng_key);
  fn("key", rnd_prng_key);
  fn("split", rnd_split);
  fn("fold_in", rnd_fold_in);
  fn("uniform", rnd_uniform);
  fn("normal", rnd_normal);
  fn("randint", rnd_randint);
  fn("bernoulli", rnd_bernoulli);
  fn("permutation", rnd_permutation);
  fn("choice", rnd_choice);
  fn("gumbel", rnd_gumbel);
  fn("categorical", rnd_categorical);
  fn("key_data", rnd_key_data);
  return Value::object(Kind::kModule, m);
}

}  // namespace spmd::scenario
