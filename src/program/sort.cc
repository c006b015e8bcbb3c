// lax.sort: a stable sort along one dimension, carrying further operands
// along (jnp.argsort sorts an iota with the keys).

#include <algorithm>
#include <cmath>
#include <numeric>

#include "program/primitive_rules.h"
#include "spmd/core/creation.h"
#include "spmd/core/layout.h"
#include "spmd/error.h"

namespace spmd::program::rules {

void type_error(const Primitive& p, const std::string& message) {
  throw InvalidArgument(make_report("TypeError", p.name + ": " + message));
}

namespace {

// NaNs sort last, as in numpy and JAX.
bool less_with_nan_last(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

}  // namespace

std::vector<Aval> sort_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  if (in.empty()) type_error(p, "needs at least one operand");
  if (params.get<std::int64_t>("num_keys", p.name) != 1) type_error(p, "spmdsim sorts by one key operand");
  for (const Aval& a : in) {
    if (a.shape != in[0].shape) type_error(p, "operands must have one shape, got " + in[0].str() + " and " + a.str());
  }
  if (in[0].shape.empty()) type_error(p, "cannot sort a scalar");
  normalize_axis(params.get<std::int64_t>("dimension", p.name), static_cast<int>(in[0].shape.size()), p.name,
                 "dimension");
  return std::vector<Aval>(in.begin(), in.end());
}

std::vector<Array> sort_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  const int rank = in[0].ndim();
  const int dim = normalize_axis(params.get<std::int64_t>("dimension", p.name), rank, p.name, "dimension");
  // Each lane along `dim` becomes a row: the permutation is found per row on
  // the keys, then every operand is gathered with it in one take.
  const Array keys = moveaxis(in[0], dim, rank - 1);
  const std::int64_t n = in[0].shape()[static_cast<std::size_t>(dim)];
  const std::int64_t rows = n == 0 ? 0 : in[0].size() / n;
  const std::vector<double> k = keys.to_doubles();
  std::vector<std::int64_t> gather(static_cast<std::size_t>(in[0].size()));
  for (std::int64_t r = 0; r < rows; ++r) {
    auto first = gather.begin() + r * n;
    std::iota(first, first + n, r * n);
    std::stable_sort(first, first + n, [&](std::int64_t a, std::int64_t b) {
      return less_with_nan_last(k[static_cast<std::size_t>(a)], k[static_cast<std::size_t>(b)]);
    });
  }
  const Array index = Array::from_int64s(gather, {in[0].size()}, DType::kInt32);
  std::vector<Array> out;
  for (const Array& x : in) {
    Array moved = moveaxis(x, dim, rank - 1);
    Shape moved_shape = moved.shape();
    Array sorted = take(reshape(moved, {x.size()}), index, 0);
    out.push_back(moveaxis(reshape(sorted, moved_shape), rank - 1, dim));
  }
  return out;
}

}  // namespace spmd::program::rules
