// lane_sum's lanes vectorize only at -O3 (GCC's -O2 cost model leaves them
// scalar); reduce_rules.h fixes the order, so the bits do not depend on it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include "spmd/core/reduction.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/column_sum.h"
#include "core/device_ops.h"
#include "core/element_access.h"
#include "core/parallel.h"
#include "core/reduce_rules.h"
#include "core/scalar_rules.h"
#include "core/strided_copy.h"
#include "spmd/error.h"

namespace spmd {

namespace {

using detail::narrow;
using detail::widen;
using namespace detail::reduce_rules;

// Reduces every row of an (outer, r) row-major matrix: leaf(row, begin, end)
// over each block, partials combined pairwise; store(row, acc) writes it.
template <class Acc, class Leaf, class Combine, class Store>
void reduce_rows(std::int64_t outer, std::int64_t r, Acc identity, Leaf leaf, Combine combine, Store store) {
  const std::int64_t nblocks = (r + kBlock - 1) / kBlock;
  auto block_end = [&](std::int64_t b) { return std::min(r, (b + 1) * kBlock); };
  auto row_serial = [&](std::int64_t row) -> Acc {
    if (nblocks == 0) return identity;
    if (nblocks == 1) return leaf(row, std::int64_t{0}, r);
    std::vector<Acc> partial(static_cast<std::size_t>(nblocks));
    for (std::int64_t b = 0; b < nblocks; ++b) partial[static_cast<std::size_t>(b)] = leaf(row, b * kBlock, block_end(b));
    return combine_pairwise(partial, combine);
  };
  const std::int64_t total = outer * r;
  if (total <= detail::kParallelThreshold || outer >= 16 || nblocks <= 1) {
    std::int64_t grain = std::max<std::int64_t>(1, detail::kParallelThreshold / std::max<std::int64_t>(r, 1) / 4);
    detail::parallel_ranges(outer, total, grain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t row = b; row < e; ++row) store(row, row_serial(row));
    });
    return;
  }
  for (std::int64_t row = 0; row < outer; ++row) {
    std::vector<Acc> partial(static_cast<std::size_t>(nblocks));
    detail::parallel_ranges(nblocks, total, 1, [&](std::int64_t b0, std::int64_t e0) {
      for (std::int64_t b = b0; b < e0; ++b) partial[static_cast<std::size_t>(b)] = leaf(row, b * kBlock, block_end(b));
    });
    store(row, combine_pairwise(partial, combine));
  }
}

// Rows of an (outer, r) matrix reduced by `rule` (SumRule, ExtremeRule).
template <class T, class O, class Rule>
void reduce_rows_by(const Rule& rule, const T* p, O* out, std::int64_t outer, std::int64_t r) {
  using Acc = typename Rule::Acc;
  reduce_rows<Acc>(
      outer, r, Rule::identity(), [&](std::int64_t row, std::int64_t b, std::int64_t e) { return rule.leaf(p + row * r, b, e); },
      [&](Acc a, Acc b) { return rule.combine(a, b); }, [&](std::int64_t row, Acc v) { out[row] = narrow<O>(v); });
}

// sum / prod: double accumulator for floats, wrapping int64 for ints and bools.
template <class T, class O>
void sum_or_prod(bool prod, const T* p, O* out, std::int64_t outer, std::int64_t r) {
  using Acc = std::conditional_t<kFloatT<T>, double, std::int64_t>;
  if (!prod) {
    reduce_rows_by(SumRule<T>{}, p, out, outer, r);
  } else {
    auto store = [&](std::int64_t row, Acc v) { out[row] = narrow<O>(v); };
    auto leaf = [&](std::int64_t row, std::int64_t b, std::int64_t e) {
      const T* q = p + row * r;
      Acc s = 1;
      for (std::int64_t i = b; i < e; ++i) {
        if constexpr (kFloatT<T>) s *= static_cast<double>(widen(q[i]));
        else s = wrap_mul64(s, static_cast<std::int64_t>(q[i]));
      }
      return s;
    };
    auto combine = [](Acc a, Acc b) {
      if constexpr (kFloatT<T>) return a * b;
      else return wrap_mul64(a, b);
    };
    reduce_rows<Acc>(outer, r, Acc{1}, leaf, combine, store);
  }
}

template <class T>
void max_or_min(bool is_max, const T* p, T* out, std::int64_t outer, std::int64_t r) {
  reduce_rows_by(ExtremeRule<T>{is_max}, p, out, outer, r);
}

// mean / var / std in double, stored rounded to the float output type.
template <class T, class O>
void moments(ReduceOp op, const T* p, O* out, std::int64_t outer, std::int64_t r) {
  std::vector<double> means(static_cast<std::size_t>(outer));
  auto sum_leaf = [&](std::int64_t row, std::int64_t b, std::int64_t e) {
    const T* q = p + row * r;
    return lane_sum(b, e, [q](std::int64_t i) { return static_cast<double>(widen(q[i])); });
  };
  auto add = [](double a, double b) { return a + b; };
  const double count = static_cast<double>(r);
  reduce_rows<double>(outer, r, 0.0, sum_leaf, add,
                      [&](std::int64_t row, double s) { means[static_cast<std::size_t>(row)] = s / count; });
  if (op == ReduceOp::kMean) {
    for (std::int64_t row = 0; row < outer; ++row) out[row] = narrow<O>(means[static_cast<std::size_t>(row)]);
    return;
  }
  auto sq_leaf = [&](std::int64_t row, std::int64_t b, std::int64_t e) {
    const T* q = p + row * r;
    const double m = means[static_cast<std::size_t>(row)];
    return lane_sum(b, e, [q, m](std::int64_t i) {
      double d = static_cast<double>(widen(q[i])) - m;
      return d * d;
    });
  };
  reduce_rows<double>(outer, r, 0.0, sq_leaf, add, [&](std::int64_t row, double s) {
    double var = s / count;
    out[row] = narrow<O>(op == ReduceOp::kStd ? std::sqrt(var) : var);
  });
}

template <class T>
void any_or_all(bool any, const T* p, bool* out, std::int64_t outer, std::int64_t r) {
  auto leaf = [&](std::int64_t row, std::int64_t b, std::int64_t e) {
    const T* q = p + row * r;
    for (std::int64_t i = b; i < e; ++i) {
      bool nz = widen(q[i]) != ReduceCompute<T>{};
      if (nz == any) return static_cast<int>(any);
    }
    return static_cast<int>(!any);
  };
  auto combine = [any](int a, int b) { return any ? (a | b) : (a & b); };
  reduce_rows<int>(outer, r, any ? 0 : 1, leaf, combine, [&](std::int64_t row, int v) { out[row] = v != 0; });
}

// First occurrence; a NaN counts as the extreme (jnp.argmax / argmin).
template <class T>
void arg_extreme(bool is_max, const T* p, std::int32_t* out, std::int64_t outer, std::int64_t r) {
  using C = ReduceCompute<T>;
  detail::parallel_ranges(outer, outer * r, std::max<std::int64_t>(1, detail::kParallelThreshold / std::max<std::int64_t>(r, 1)),
                          [&](std::int64_t b, std::int64_t e) {
                            for (std::int64_t row = b; row < e; ++row) {
                              const T* q = p + row * r;
                              auto load = [q](std::int64_t i) { return widen(q[i]); };
                              out[row] = static_cast<std::int32_t>(rules::arg_extreme<C>(load, r, is_max));
                            }
                          });
}

std::string axes_to_string(const std::vector<int>& axes) {
  Shape s(axes.begin(), axes.end());
  return shape_to_string(s);
}


// Moves the scanned axis last (when it is not already), runs scan on each
// line and restores the layout.
template <class Scan>
Array scan_axis(const Array& x, std::optional<int> axis, std::string_view name, DType out_dtype, bool prod, Scan scan) {
  Array in = x;
  int ax = 0;
  if (!axis) {
    in = x.reshaped_view({x.size()});
  } else {
    ax = normalize_axis(*axis, x.ndim(), name);
  }
  const Shape& shape = in.shape();
  std::int64_t outer = 1, inner = 1, n = shape.empty() ? 1 : shape[static_cast<std::size_t>(ax)];
  for (int i = 0; i < ax; ++i) outer *= shape[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(ax) + 1; i < shape.size(); ++i) inner *= shape[i];
  Array out = Array::uninitialized(shape, out_dtype, name);
  if (out.size() == 0) return out.with_weak_type(x.weak_type());
  if (detail::DeviceOps* ops = detail::placement_ops(name)) {
    Array din = detail::in_placement_memory(in, name);
    ops->scan(detail::placement_device(), prod, detail::operand(din), detail::output(out), outer, n, inner);
    return out.with_weak_type(x.weak_type());
  }
  detail::visit_dtype(in.dtype(), [&](auto in_tag) {
    using T = decltype(in_tag);
    detail::visit_dtype(out_dtype, [&](auto out_tag) {
      using O = decltype(out_tag);
      if constexpr (std::is_same_v<T, O> || std::is_same_v<T, bool>) {
        scan(in.data<T>(), out.mutable_data<O>(), outer, n, inner);
      }
    });
  });
  return out.with_weak_type(x.weak_type());
}

template <class T, class O>
void scan_lines(bool prod, const T* p, O* out, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  using Acc = std::conditional_t<kFloatT<T>, double, std::int64_t>;
  detail::parallel_ranges(outer, outer * n * inner, 1, [&](std::int64_t b, std::int64_t e) {
    std::vector<Acc> acc(static_cast<std::size_t>(inner));
    for (std::int64_t o = b; o < e; ++o) {
      std::fill(acc.begin(), acc.end(), prod ? Acc{1} : Acc{0});
      for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t base = (o * n + k) * inner;
        for (std::int64_t i = 0; i < inner; ++i) {
          Acc& a = acc[static_cast<std::size_t>(i)];
          if constexpr (kFloatT<T>) {
            double v = static_cast<double>(widen(p[base + i]));
            a = prod ? a * v : a + v;
          } else {
            auto v = static_cast<std::int64_t>(p[base + i]);
            a = prod ? wrap_mul64(a, v) : wrap_add64(a, v);
          }
          out[base + i] = narrow<O>(a);
        }
      }
    }
  });
}

Array cumulative(bool prod, const Array& x, std::optional<int> axis) {
  std::string_view name = prod ? "cumprod" : "cumsum";
  check_placement(x, name);
  DType out_dtype = reduction_dtype(ReduceOp::kSum, x.dtype());
  return scan_axis(x, axis, name, out_dtype, prod, [&](const auto* p, auto* out, std::int64_t outer, std::int64_t n,
                                                  std::int64_t inner) { scan_lines(prod, p, out, outer, n, inner); });
}

}  // namespace

std::string_view op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kMean: return "mean";
    case ReduceOp::kAny: return "any";
    case ReduceOp::kAll: return "all";
    case ReduceOp::kArgMax: return "argmax";
    case ReduceOp::kArgMin: return "argmin";
    case ReduceOp::kVar: return "var";
    case ReduceOp::kStd: return "std";
  }
  return "reduce";
}

DType reduction_dtype(ReduceOp op, DType x) {
  switch (op) {
    case ReduceOp::kSum: case ReduceOp::kProd: return x == DType::kBool ? kDefaultInt : x;
    case ReduceOp::kMean: case ReduceOp::kVar: case ReduceOp::kStd: return is_floating(x) ? x : kDefaultFloat;
    case ReduceOp::kAny: case ReduceOp::kAll: return DType::kBool;
    case ReduceOp::kArgMax: case ReduceOp::kArgMin: return DType::kInt32;
    case ReduceOp::kMax: case ReduceOp::kMin: return x;
  }
  return x;
}

Array reduce(ReduceOp op, const Array& x, std::optional<std::vector<int>> axes, bool keepdims) {
  const std::string name(op_name(op));
  check_placement(x, name);
  const int rank = x.ndim();
  const bool is_arg = op == ReduceOp::kArgMax || op == ReduceOp::kArgMin;
  std::vector<bool> reduced(static_cast<std::size_t>(rank), !axes.has_value());
  if (axes) {
    if (is_arg && axes->size() != 1) {
      throw_invalid_argument("InvalidArgument",
                             name + ": expects a single axis or none, got axes " + axes_to_string(*axes),
                             "pass one axis, or no axis to search the flattened array");
    }
    for (int a : *axes) {
      int n = normalize_axis(a, rank, name);
      if (reduced[static_cast<std::size_t>(n)]) {
        throw_invalid_argument("ValueError",
                               name + ": duplicate value in 'axis': " + axes_to_string(*axes) + " for an array of shape " +
                                   shape_to_string(x.shape()),
                               "list each axis once (negative axes count from the end: -1 is axis " +
                                   std::to_string(rank - 1) + ")");
      }
      reduced[static_cast<std::size_t>(n)] = true;
    }
  }
  std::vector<int> perm;
  Shape out_shape;
  std::int64_t outer = 1, r = 1;
  for (int i = 0; i < rank; ++i) {
    const std::int64_t d = x.shape()[static_cast<std::size_t>(i)];
    if (!reduced[static_cast<std::size_t>(i)]) {
      perm.push_back(i);
      out_shape.push_back(d);
      outer *= d;
    } else if (keepdims) {
      out_shape.push_back(1);
    }
  }
  bool trailing = true;
  bool leading = true;  // the reduced axes come first: a sum can run down the columns
  for (int i = 0; i < rank; ++i) {
    if (i > 0 && !reduced[static_cast<std::size_t>(i - 1)] && reduced[static_cast<std::size_t>(i)]) leading = false;
    if (reduced[static_cast<std::size_t>(i)]) {
      perm.push_back(i);
      r *= x.shape()[static_cast<std::size_t>(i)];
    }
    if (i > 0 && reduced[static_cast<std::size_t>(i - 1)] && !reduced[static_cast<std::size_t>(i)]) trailing = false;
  }
  if (r == 0 && (op == ReduceOp::kMax || op == ReduceOp::kMin || is_arg)) {
    throw_invalid_argument("ValueError",
                           name + ": zero-size array to reduction operation " + name +
                               " which has no identity (shape " + shape_to_string(x.shape()) + ")",
                           "reduce over a non-empty axis, or use a masked reduction with an explicit initial value");
  }

  const DType in_dtype = x.dtype();
  const DType out_dtype = reduction_dtype(op, in_dtype);
  const bool weak = x.weak_type() && op != ReduceOp::kAny && op != ReduceOp::kAll && !is_arg;

  detail::DeviceOps* ops = detail::placement_ops(name);
  const bool by_columns = !trailing && leading && op == ReduceOp::kSum && ops == nullptr;
  Array data = trailing || by_columns ? x : detail::permuted_copy(x, perm, name);
  Array out = Array::uninitialized(out_shape, out_dtype, name);
  if (outer == 0) return out.with_weak_type(weak);
  if (ops != nullptr) {
    Array dd = detail::in_placement_memory(data, name);
    ops->reduce(detail::placement_device(), op, detail::operand(dd), detail::output(out), outer, r);
    return out.with_weak_type(weak);
  }

  if (by_columns) {
    // Read row by row, so no transposed copy is made; the bits are those of
    // the sum over the transposed rows (ColumnSum).
    detail::ColumnSum columns(in_dtype, r, outer);
    const auto esize = static_cast<std::int64_t>(dtype_size(in_dtype));
    const auto* base = static_cast<const std::byte*>(data.raw_data());
    const std::int64_t grain = std::max<std::int64_t>(1, detail::kParallelThreshold / std::max<std::int64_t>(r, 1));
    detail::parallel_ranges(outer, outer * r, grain, [&](std::int64_t c0, std::int64_t c1) {
      columns.add_rows(0, r, c0, c1 - c0, base + c0 * esize, outer);
    });
    columns.finish(out);
    return out.with_weak_type(weak);
  }
  detail::visit_dtype(in_dtype, [&](auto in_tag) {
    using T = decltype(in_tag);
    const T* p = data.data<T>();
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kProd:
        if constexpr (std::is_same_v<T, bool>) {
          sum_or_prod(op == ReduceOp::kProd, p, out.mutable_data<std::int32_t>(), outer, r);
        } else {
          sum_or_prod(op == ReduceOp::kProd, p, out.mutable_data<T>(), outer, r);
        }
        break;
      case ReduceOp::kMax:
      case ReduceOp::kMin:
        max_or_min(op == ReduceOp::kMax, p, out.mutable_data<T>(), outer, r);
        break;
      case ReduceOp::kMean:
      case ReduceOp::kVar:
      case ReduceOp::kStd:
        if constexpr (kFloatT<T>) {
          moments(op, p, out.mutable_data<T>(), outer, r);
        } else {
          moments(op, p, out.mutable_data<float>(), outer, r);
        }
        break;
      case ReduceOp::kAny:
      case ReduceOp::kAll:
        any_or_all(op == ReduceOp::kAny, p, out.mutable_data<bool>(), outer, r);
        break;
      case ReduceOp::kArgMax:
      case ReduceOp::kArgMin:
        arg_extreme(op == ReduceOp::kArgMax, p, out.mutable_data<std::int32_t>(), outer, r);
        break;
    }
  });
  return out.with_weak_type(weak);
}

Array cumsum(const Array& x, std::optional<int> axis) { return cumulative(false, x, axis); }
Array cumprod(const Array& x, std::optional<int> axis) { return cumulative(true, x, axis); }

bool slices_equal(const Array& x, int axis) {
  const int rank = static_cast<int>(x.shape().size());
  axis = normalize_axis(axis, rank, "slices_equal");
  Array h = x.to_host();
  const auto size = static_cast<std::int64_t>(dtype_size(h.dtype()));
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= h.shape()[static_cast<std::size_t>(d)];
  for (int d = axis + 1; d < rank; ++d) inner *= h.shape()[static_cast<std::size_t>(d)];
  const std::int64_t n = h.shape()[static_cast<std::size_t>(axis)];
  const auto* base = static_cast<const std::byte*>(h.raw_data());
  auto same = [&](const std::byte* a, const std::byte* b) {
    if (std::memcmp(a, b, static_cast<std::size_t>(inner * size)) == 0) return true;
    // Bytes differ: equal values still may (signed zeros, nan payloads).
    return detail::visit_dtype(h.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* pa = reinterpret_cast<const T*>(a);
      const T* pb = reinterpret_cast<const T*>(b);
      for (std::int64_t i = 0; i < inner; ++i) {
        auto va = widen(pa[i]);
        auto vb = widen(pb[i]);
        if (va == vb) continue;
        if constexpr (std::is_floating_point_v<decltype(va)>) {
          if (std::isnan(va) && std::isnan(vb)) continue;
        }
        return false;
      }
      return true;
    });
  };
  for (std::int64_t o = 0; o < outer; ++o) {
    const std::byte* first = base + o * n * inner * size;
    for (std::int64_t k = 1; k < n; ++k) {
      if (!same(first, first + k * inner * size)) return false;
    }
  }
  return true;
}

}  // namespace spmd
