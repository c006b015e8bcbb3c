#include "spmd/core/linalg.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "core/device_ops.h"
#include "core/element_access.h"
#include "core/gemm.h"
#include "core/strided_copy.h"
#include "core/strided_walk.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/error.h"

namespace spmd {

namespace {

// The operand's elements in the compute type C (float for the 32- and
// 16-bit floats, double, int64 for ints and bools): the array's own memory
// when it has that type already, else a converted copy in `scratch`.
template <class C>
const C* as_compute(const Array& x, std::vector<C>& scratch) {
  const C* own = nullptr;
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    if constexpr (std::is_same_v<T, C>) {
      own = p;
    } else {
      scratch.resize(static_cast<std::size_t>(x.size()));
      for (std::size_t i = 0; i < scratch.size(); ++i) scratch[i] = static_cast<C>(detail::widen(p[i]));
    }
  });
  return own != nullptr ? own : scratch.data();
}

std::string pair(const Array& a, const Array& b, std::string_view sep) {
  return shape_to_string(a.shape()) + " " + std::string(sep) + " " + shape_to_string(b.shape());
}

// Matmul of a (..., m, k) and b (..., k, n) with batch shapes already checked
// to broadcast to `batch`.
Array matmul_core(const Array& a, const Array& b, const Shape& batch, std::int64_t m, std::int64_t k, std::int64_t n,
                  const Shape& out_shape, PromotedType p, std::string_view name, bool transpose_a = false,
                  bool transpose_b = false) {
  Array out = Array::uninitialized(out_shape, p.dtype, name).with_weak_type(p.weak);
  const std::int64_t nb = num_elements(batch);
  if (out.size() == 0) return out;
  Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  auto as = detail::broadcast_strides(a_batch, batch);
  auto bs = detail::broadcast_strides(b_batch, batch);
  std::vector<std::int64_t> a_off(static_cast<std::size_t>(nb)), b_off(static_cast<std::size_t>(nb));
  auto bstr = row_major_strides(batch);
  for (std::int64_t i = 0; i < nb; ++i) {
    std::int64_t rem = i, oa = 0, ob = 0;
    for (std::size_t d = 0; d < batch.size(); ++d) {
      std::int64_t idx = rem / bstr[d];
      rem %= bstr[d];
      oa += idx * as[d];
      ob += idx * bs[d];
    }
    a_off[static_cast<std::size_t>(i)] = oa * m * k;
    b_off[static_cast<std::size_t>(i)] = ob * k * n;
  }
  if (detail::DeviceOps* ops = detail::placement_ops(name)) {
    Array da = detail::in_placement_memory(a, name);
    Array db = detail::in_placement_memory(b, name);
    ops->matmul(detail::placement_device(), detail::operand(da), detail::operand(db), detail::output(out), a_off, b_off,
                m, k, n);
    return out;
  }
  // float32 in float32 and float64 in float64, on BLAS (as XLA on CPU
  // computes them); float16/bfloat16 through float32; integers in int64.
  auto run = [&](auto compute_tag) {
    using C = decltype(compute_tag);
    std::vector<C> sa, sb, sc;
    const C* pa = as_compute<C>(a, sa);
    const C* pb = as_compute<C>(b, sb);
    C* pc = nullptr;
    detail::visit_dtype(p.dtype, [&](auto tag) {
      if constexpr (std::is_same_v<decltype(tag), C>) pc = out.mutable_data<C>();
    });
    if (pc == nullptr) {
      sc.resize(static_cast<std::size_t>(out.size()));
      pc = sc.data();
    }
    detail::gemm_batches(pa, pb, pc, a_off, b_off, m, k, n, transpose_a, transpose_b);
    if (!sc.empty()) {
      detail::visit_dtype(p.dtype, [&](auto tag) {
        using T = decltype(tag);
        T* o = out.mutable_data<T>();
        for (std::size_t i = 0; i < sc.size(); ++i) o[i] = detail::narrow<T>(sc[i]);
      });
    }
  };
  if (p.dtype == DType::kFloat64) {
    run(double{});
  } else if (is_floating(p.dtype)) {
    run(float{});
  } else {
    run(std::int64_t{});
  }
  return out;
}

}  // namespace

Array matmul(const Array& a, const Array& b) { return matmul(a, b, false, false); }

Array matmul(const Array& a, const Array& b, bool transpose_a, bool transpose_b) {
  check_placement(a, "matmul");
  check_placement(b, "matmul");
  if (a.ndim() == 0 || b.ndim() == 0) {
    throw_shape_error("matmul",
                      "operands must be at least 1-dimensional, got " + pair(a, b, "@"),
                      "use multiply (*) for scalars");
  }
  if ((transpose_a && a.ndim() < 2) || (transpose_b && b.ndim() < 2)) {
    throw_shape_error("matmul", "an operand to transpose needs two dimensions, got " + pair(a, b, "@"),
                      "a 1-D operand is a row or a column already; transpose only matrices and their batches");
  }
  if ((transpose_a || transpose_b) && detail::placement_ops("matmul") != nullptr) {
    // Device kernels read their operands as stored: swap on the device first.
    return matmul(transpose_a ? swapaxes(a, -1, -2) : a, transpose_b ? swapaxes(b, -1, -2) : b);
  }
  PromotedType p = promote_weak(a.dtype(), a.weak_type(), b.dtype(), b.weak_type());
  Shape as = a.shape(), bs = b.shape();
  if (transpose_a) std::swap(as[as.size() - 1], as[as.size() - 2]);
  if (transpose_b) std::swap(bs[bs.size() - 1], bs[bs.size() - 2]);
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const std::int64_t m = as[as.size() - 2], k = as.back(), kb = bs[bs.size() - 2], n = bs.back();
  if (k != kb) {
    throw_shape_error("matmul",
                      "contracting dimensions differ: " + pair(a, b, "@") + ": " + std::to_string(k) +
                          " != " + std::to_string(kb),
                      "the last axis of the first operand must match the " +
                          std::string(b_vec ? "only" : "second-to-last") +
                          " axis of the second; transpose an operand (swapaxes(b, -1, -2)) or check the shapes");
  }
  Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(a_batch, b_batch, "matmul");
  } catch (const ShapeError&) {
    throw_shape_error("matmul",
                      "batch dimensions do not broadcast: " + pair(a, b, "@") + ": " + shape_to_string(a_batch) +
                          " vs " + shape_to_string(b_batch),
                      "leading (batch) dimensions must be equal or 1");
  }
  Shape out_shape = batch;
  if (!a_vec) out_shape.push_back(m);
  if (!b_vec) out_shape.push_back(n);
  // A transposed operand keeps its stored shape (the swap is BLAS's to read);
  // a vector becomes a row or a column.
  return matmul_core(transpose_a ? a : a.reshaped_view(as), transpose_b ? b : b.reshaped_view(bs), batch, m, k, n,
                     out_shape, p, "matmul", transpose_a, transpose_b);
}

Array dot(const Array& a, const Array& b) {
  check_placement(a, "dot");
  check_placement(b, "dot");
  if (a.ndim() == 0 || b.ndim() == 0) return binary(BinaryOp::kMultiply, a, b);
  const std::int64_t k = a.shape().back();
  const std::size_t b_axis = b.ndim() == 1 ? 0 : static_cast<std::size_t>(b.ndim() - 2);
  const std::int64_t kb = b.shape()[b_axis];
  if (k != kb) {
    throw_shape_error("dot",
                      "shapes " + pair(a, b, "and") + " not aligned: " + std::to_string(k) + " (dim " +
                          std::to_string(a.ndim() - 1) + ") != " + std::to_string(kb) + " (dim " +
                          std::to_string(b_axis) + ")",
                      "dot contracts the last axis of the first operand with the " +
                          std::string(b.ndim() == 1 ? "only" : "second-to-last") +
                          " axis of the second; transpose an operand or check the shapes");
  }
  if (b.ndim() <= 2) return matmul(a, b);
  // N-D x M-D: a as (P, k) times b moved to (k, Q*n); the result is
  // a.shape[:-1] + b.shape[:-2] + (n,).
  PromotedType p = promote_weak(a.dtype(), a.weak_type(), b.dtype(), b.weak_type());
  const std::int64_t rows = num_elements(Shape(a.shape().begin(), a.shape().end() - 1));
  const std::int64_t cols = num_elements(Shape(b.shape().begin(), b.shape().end() - 2)) * b.shape().back();
  std::vector<int> perm{static_cast<int>(b_axis)};
  for (int i = 0; i < b.ndim(); ++i) {
    if (i != static_cast<int>(b_axis)) perm.push_back(i);
  }
  Array a2 = a.reshaped_view({rows, k});
  Array b2 = detail::permuted_copy(b, perm, "dot").reshaped_view({k, cols});
  Shape out_shape(a.shape().begin(), a.shape().end() - 1);
  out_shape.insert(out_shape.end(), b.shape().begin(), b.shape().end() - 2);
  out_shape.push_back(b.shape().back());
  return matmul_core(a2, b2, {}, rows, k, cols, out_shape, p, "dot");
}

namespace {

// Python's tuple text, as JAX's messages print dimension numbers and shapes.
template <class T>
std::string py_tuple(const std::vector<T>& xs) {
  std::string s = "(";
  for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
  return s + (xs.size() == 1 ? ",)" : ")");
}

[[noreturn]] void dot_type_error(const std::string& message, std::string hint) {
  throw InvalidArgument(make_report("TypeError", message, std::move(hint)));
}

bool distinct(const std::vector<int>& xs) {
  std::vector<int> sorted = xs;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

bool overlap(const std::vector<int>& a, const std::vector<int>& b) {
  return std::any_of(a.begin(), a.end(), [&](int x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

// The axes of an operand of rank n in neither list, ascending.
std::vector<int> free_axes(int n, const std::vector<int>& contracting, const std::vector<int>& batch) {
  std::vector<int> out;
  for (int d = 0; d < n; ++d) {
    if (std::find(contracting.begin(), contracting.end(), d) == contracting.end() &&
        std::find(batch.begin(), batch.end(), d) == batch.end()) {
      out.push_back(d);
    }
  }
  return out;
}

std::vector<std::int64_t> sizes_at(const Shape& s, const std::vector<int>& axes) {
  std::vector<std::int64_t> out;
  for (int d : axes) out.push_back(s[static_cast<std::size_t>(d)]);
  return out;
}

std::vector<int> joined(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> out;
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

bool is_identity(const std::vector<int>& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int>(i)) return false;
  }
  return true;
}

// One operand as the 3-d (batch, rows, cols) the product reads: `first` and
// `second` are its two groups of non-batch axes in the order the product
// wants them. Laid out as batch+first+second it is read as it is; as
// batch+second+first it is read transposed (`transposed` set); otherwise it is
// copied into the first order.
Array as_product_operand(const Array& x, const std::vector<int>& batch, const std::vector<int>& first,
                         const std::vector<int>& second, std::int64_t nb, std::int64_t n_first, std::int64_t n_second,
                         bool& transposed) {
  transposed = false;
  const std::vector<int> wanted = joined({&batch, &first, &second});
  if (is_identity(wanted)) return x.reshaped_view({nb, n_first, n_second});
  if (is_identity(joined({&batch, &second, &first}))) {
    transposed = true;
    return x.reshaped_view({nb, n_second, n_first});
  }
  return detail::permuted_copy(x, wanted, "dot_general").reshaped_view({nb, n_first, n_second});
}

}  // namespace

Shape dot_general_shape(const Shape& lhs, const Shape& rhs, const DotDimensions& dims) {
  const auto& [lc, rc, lb, rb] = dims;
  const std::string hint =
      "dimension_numbers is ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)): axes of each operand, "
      "the i-th on the left paired with the i-th on the right";
  auto in_range = [](const std::vector<int>& axes, std::size_t rank) {
    return std::all_of(axes.begin(), axes.end(), [&](int d) { return d >= 0 && static_cast<std::size_t>(d) < rank; });
  };
  if (!in_range(lc, lhs.size()) || !in_range(lb, lhs.size())) {
    dot_type_error("dot_general requires lhs dimension numbers to be nonnegative and less than the number of axes of "
                   "the lhs value, got lhs_batch of " + py_tuple(lb) + " and lhs_contracting of " + py_tuple(lc) +
                       " for lhs of rank " + std::to_string(lhs.size()),
                   hint);
  }
  if (!in_range(rc, rhs.size()) || !in_range(rb, rhs.size())) {
    dot_type_error("dot_general requires rhs dimension numbers to be nonnegative and less than the number of axes of "
                   "the rhs value, got rhs_batch of " + py_tuple(rb) + " and rhs_contracting of " + py_tuple(rc) +
                       " for rhs of rank " + std::to_string(rhs.size()),
                   hint);
  }
  if (lb.size() != rb.size()) {
    dot_type_error("dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch " +
                       py_tuple(lb) + " and rhs_batch " + py_tuple(rb) + ".",
                   hint);
  }
  for (auto [axes, what] : {std::pair{&lb, "lhs batch"}, std::pair{&rb, "rhs batch"}, std::pair{&lc, "lhs contracting"},
                            std::pair{&rc, "rhs contracting"}}) {
    if (!distinct(*axes)) {
      const std::string name = std::string(what).substr(0, 3) + "_" + std::string(what).substr(4);
      dot_type_error("dot_general requires " + std::string(what) + " dimensions to be distinct, got " + name + " " +
                         py_tuple(*axes) + ".",
                     hint);
    }
  }
  if (overlap(lb, lc)) {
    dot_type_error("dot_general requires lhs batch dimensions to be disjoint from contracting dimensions, got "
                   "lhs_batch " + py_tuple(lb) + " and lhs_contracting " + py_tuple(lc) + ".",
                   hint);
  }
  if (overlap(rb, rc)) {
    dot_type_error("dot_general requires rhs batch dimensions to be disjoint from contracting dimensions, got "
                   "rhs_batch " + py_tuple(rb) + " and rhs_contracting " + py_tuple(rc) + ".",
                   hint);
  }
  if (sizes_at(lhs, lb) != sizes_at(rhs, rb)) {
    dot_type_error("dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, got " +
                       py_tuple(sizes_at(lhs, lb)) + " and " + py_tuple(sizes_at(rhs, rb)) + ".",
                   hint);
  }
  if (sizes_at(lhs, lc) != sizes_at(rhs, rc)) {
    dot_type_error("dot_general requires contracting dimensions to have the same shape, got " +
                       py_tuple(sizes_at(lhs, lc)) + " and " + py_tuple(sizes_at(rhs, rc)) + ".",
                   "lhs " + shape_to_string(lhs) + " and rhs " + shape_to_string(rhs) +
                       ": contract axes of equal size, or transpose an operand");
  }
  Shape out;
  for (int d : lb) out.push_back(lhs[static_cast<std::size_t>(d)]);
  for (int d : free_axes(static_cast<int>(lhs.size()), lc, lb)) out.push_back(lhs[static_cast<std::size_t>(d)]);
  for (int d : free_axes(static_cast<int>(rhs.size()), rc, rb)) out.push_back(rhs[static_cast<std::size_t>(d)]);
  return out;
}

namespace {

// dot_general in its own result order (batch, lhs free, rhs free), or with
// rhs's leading free axes first when `rhs_leading` (see dot_general): those
// axes are an outer batch the lhs is broadcast over.
Array product(const Array& lhs, const Array& rhs, const DotDimensions& dims, const Shape& out_shape,
              std::size_t rhs_leading) {
  const auto& [lc, rc, lb, rb] = dims;
  const std::vector<int> lf = free_axes(lhs.ndim(), lc, lb), rf = free_axes(rhs.ndim(), rc, rb);
  auto size = [](const Shape& s, const std::vector<int>& axes) {
    std::int64_t n = 1;
    for (int d : axes) n *= s[static_cast<std::size_t>(d)];
    return n;
  };
  const std::int64_t nb = size(lhs.shape(), lb), m = size(lhs.shape(), lf), k = size(lhs.shape(), lc);
  bool ta = false, tb = false;
  const Array a = as_product_operand(lhs, lb, lf, lc, nb, m, k, ta);
  Array b;
  std::int64_t outer = 1, n = 0;
  if (rhs_leading == 0) {
    n = size(rhs.shape(), rf);
    b = as_product_operand(rhs, rb, rc, rf, nb, k, n, tb);
  } else {
    // rhs as `outer` blocks: its r leading axes become one axis 0, a batch
    // axis before its own; its other axes follow, each r - 1 places earlier.
    const int r = static_cast<int>(rhs_leading);
    const std::vector<int> lead(rf.begin(), rf.begin() + r), rest(rf.begin() + r, rf.end());
    outer = size(rhs.shape(), lead);
    n = size(rhs.shape(), rest);
    auto in_block = [&](std::vector<int> axes) {
      for (int& d : axes) d = d - r + 1;
      return axes;
    };
    std::vector<int> block_batch = in_block(rb);
    block_batch.insert(block_batch.begin(), 0);
    Shape block{outer};
    block.insert(block.end(), rhs.shape().begin() + r, rhs.shape().end());
    b = as_product_operand(rhs.reshaped_view(block), block_batch, in_block(rc), in_block(rest), outer * nb, k, n, tb)
            .reshaped_view({outer, nb, tb ? n : k, tb ? k : n});
  }
  PromotedType p = promote_weak(lhs.dtype(), lhs.weak_type(), rhs.dtype(), rhs.weak_type());
  if ((ta || tb) && detail::placement_ops("dot_general") != nullptr) {
    // Device kernels read their operands as stored: swap on the device first.
    return matmul(ta ? swapaxes(a, -1, -2) : a, tb ? swapaxes(b, -1, -2) : b).reshaped_view(out_shape);
  }
  if (rhs_leading == 0) return matmul_core(a, b, {nb}, m, k, n, out_shape, p, "dot_general", ta, tb);
  return matmul_core(a.reshaped_view({1, nb, ta ? k : m, ta ? m : k}), b, {outer, nb}, m, k, n, out_shape, p,
                     "dot_general", ta, tb);
}

// How many of rhs's free axes lead its layout (axes 0, 1, ... in order) and
// come first in `out_permutation`, followed by the batch axes, lhs's free axes
// and rhs's other free axes: the order the product makes with them as an
// outer batch. 0 when the permutation is not that order.
std::size_t leading_rhs_axes(const Array& lhs, const Array& rhs, const DotDimensions& dims,
                             const std::vector<int>& out_permutation) {
  const auto& [lc, rc, lb, rb] = dims;
  const std::vector<int> lf = free_axes(lhs.ndim(), lc, lb), rf = free_axes(rhs.ndim(), rc, rb);
  const int nb = static_cast<int>(lb.size()), nl = static_cast<int>(lf.size());
  std::size_t r = 0;
  while (r < rf.size() && rf[r] == static_cast<int>(r)) ++r;
  for (; r > 0; --r) {
    std::vector<int> order;
    for (std::size_t i = 0; i < r; ++i) order.push_back(nb + nl + static_cast<int>(i));
    for (int d = 0; d < nb + nl; ++d) order.push_back(d);
    for (std::size_t i = r; i < rf.size(); ++i) order.push_back(nb + nl + static_cast<int>(i));
    if (order == out_permutation) return r;
  }
  return 0;
}

}  // namespace

Array dot_general(const Array& lhs, const Array& rhs, const DotDimensions& dims,
                  const std::vector<int>& out_permutation) {
  check_placement(lhs, "dot_general");
  check_placement(rhs, "dot_general");
  const Shape shape = dot_general_shape(lhs.shape(), rhs.shape(), dims);
  if (out_permutation.empty() || is_identity(out_permutation)) return product(lhs, rhs, dims, shape, 0);
  if (out_permutation.size() != shape.size()) {
    throw std::invalid_argument("dot_general: an output permutation of " + std::to_string(out_permutation.size()) +
                                " axes for a result of " + std::to_string(shape.size()));
  }
  Shape permuted;
  for (int d : out_permutation) permuted.push_back(shape[static_cast<std::size_t>(d)]);
  const auto& [lc, rc, lb, rb] = dims;
  const int nb = static_cast<int>(lb.size());
  const int nl = static_cast<int>(free_axes(lhs.ndim(), lc, lb).size());
  const int nr = static_cast<int>(shape.size()) - nb - nl;
  // The free blocks swapped: the product made the other way round.
  std::vector<int> swapped;
  for (int d = 0; d < nb; ++d) swapped.push_back(d);
  for (int d = 0; d < nr; ++d) swapped.push_back(nb + nl + d);
  for (int d = 0; d < nl; ++d) swapped.push_back(nb + d);
  if (swapped == out_permutation) return product(rhs, lhs, DotDimensions{rc, lc, rb, lb}, permuted, 0);
  if (std::size_t r = leading_rhs_axes(lhs, rhs, dims, out_permutation); r > 0) {
    return product(lhs, rhs, dims, permuted, r);
  }
  return transpose(product(lhs, rhs, dims, shape, 0), out_permutation);
}

Array outer(const Array& a, const Array& b) {
  check_placement(a, "outer");
  check_placement(b, "outer");
  Array ca = a.reshaped_view({a.size(), 1});
  Array cb = b.reshaped_view({b.size()});
  Array out = binary(BinaryOp::kMultiply, ca, cb);
  return out;
}

}  // namespace spmd
