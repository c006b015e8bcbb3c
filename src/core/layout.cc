#include "spmd/core/layout.h"

#include <algorithm>
#include <cstring>

#include "core/device_ops.h"
#include "core/strided_copy.h"
#include "core/strided_walk.h"
#include "spmd/core/elementwise.h"
#include "spmd/error.h"

namespace spmd {

namespace {

std::string ints_to_string(const std::vector<int>& v) {
  Shape s(v.begin(), v.end());
  return shape_to_string(s);
}

// Arrays are immutable, so a same-device result may share x's storage.
Array view_or_copy(const Array& x, const Shape& shape, std::string_view what) {
  if (detail::on_current_device(x)) return x.reshaped_view(shape);
  return detail::strided_copy(x, 0, shape, row_major_strides(shape), what);
}

std::int64_t floor_mod(std::int64_t a, std::int64_t n) {
  std::int64_t m = a % n;
  return m < 0 ? m + n : m;
}

}  // namespace

Array reshape(const Array& x, Shape shape) {
  check_placement(x, "reshape");
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) {
        throw_shape_error("reshape", "can only specify one unknown dimension, got " + shape_to_string(shape),
                          "use -1 for at most one dimension");
      }
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw_shape_error("reshape", "negative dimension in new shape " + shape_to_string(shape),
                        "dimensions must be >= 0, or -1 for one inferred dimension");
    } else {
      known *= shape[i];
    }
  }
  const std::int64_t size = x.size();
  if (infer >= 0) {
    if (known == 0 || size % known != 0) {
      throw_shape_error("reshape",
                        "cannot reshape array of shape " + shape_to_string(x.shape()) + " (size " +
                            std::to_string(size) + ") into shape " + shape_to_string(shape),
                        "the product of the known dimensions must divide the array size");
    }
    shape[static_cast<std::size_t>(infer)] = size / known;
  } else if (known != size) {
    throw_shape_error("reshape",
                      "cannot reshape array of shape " + shape_to_string(x.shape()) + " (size " +
                          std::to_string(size) + ") into shape " + shape_to_string(shape) + " (size " +
                          std::to_string(known) + ")",
                      "the new shape must have the same number of elements; use -1 to infer one dimension");
  }
  return view_or_copy(x, shape, "reshape");
}

Array transpose(const Array& x, std::vector<int> perm) {
  check_placement(x, "transpose");
  const int rank = x.ndim();
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<int> norm;
  std::vector<bool> seen(static_cast<std::size_t>(rank), false);
  bool ok = static_cast<int>(perm.size()) == rank;
  if (ok) {
    for (int p : perm) {
      if (p < -rank || p >= rank) {
        ok = false;
        break;
      }
      int n = p < 0 ? p + rank : p;
      if (seen[static_cast<std::size_t>(n)]) {
        ok = false;
        break;
      }
      seen[static_cast<std::size_t>(n)] = true;
      norm.push_back(n);
    }
  }
  if (!ok) {
    throw_invalid_argument("AxisError",
                           "transpose: axes " + ints_to_string(perm) + " are not a permutation of the " +
                               std::to_string(rank) + " axes of an array of shape " + shape_to_string(x.shape()),
                           "give each axis 0.." + std::to_string(std::max(rank - 1, 0)) + " exactly once");
  }
  return detail::permuted_copy(x, norm, "transpose");
}

Array swapaxes(const Array& x, int a, int b) {
  check_placement(x, "swapaxes");
  const int rank = x.ndim();
  int na = normalize_axis(a, rank, "swapaxes", "axis1");
  int nb = normalize_axis(b, rank, "swapaxes", "axis2");
  std::vector<int> perm(static_cast<std::size_t>(rank));
  for (int i = 0; i < rank; ++i) perm[static_cast<std::size_t>(i)] = i;
  std::swap(perm[static_cast<std::size_t>(na)], perm[static_cast<std::size_t>(nb)]);
  return detail::permuted_copy(x, perm, "swapaxes");
}

Array moveaxis(const Array& x, int source, int destination) {
  check_placement(x, "moveaxis");
  const int rank = x.ndim();
  int s = normalize_axis(source, rank, "moveaxis", "source");
  int d = normalize_axis(destination, rank, "moveaxis", "destination");
  std::vector<int> perm;
  for (int i = 0; i < rank; ++i) {
    if (i != s) perm.push_back(i);
  }
  perm.insert(perm.begin() + d, s);
  return detail::permuted_copy(x, perm, "moveaxis");
}

Array expand_dims(const Array& x, int axis) {
  check_placement(x, "expand_dims");
  int a = normalize_axis(axis, x.ndim() + 1, "expand_dims");
  Shape shape = x.shape();
  shape.insert(shape.begin() + a, 1);
  return view_or_copy(x, shape, "expand_dims");
}

Array squeeze(const Array& x, std::vector<int> axes) {
  check_placement(x, "squeeze");
  const int rank = x.ndim();
  std::vector<bool> drop(static_cast<std::size_t>(rank), false);
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) drop[static_cast<std::size_t>(i)] = x.shape()[static_cast<std::size_t>(i)] == 1;
  }
  for (int a : axes) {
    int n = normalize_axis(a, rank, "squeeze");
    if (x.shape()[static_cast<std::size_t>(n)] != 1) {
      throw_shape_error("squeeze",
                        "cannot select an axis to squeeze out which has size not equal to one: axis " +
                            std::to_string(a) + " of shape " + shape_to_string(x.shape()) + " has size " +
                            std::to_string(x.shape()[static_cast<std::size_t>(n)]),
                        "only size-1 axes can be squeezed; use reshape or index to drop other axes");
    }
    drop[static_cast<std::size_t>(n)] = true;
  }
  Shape shape;
  for (int i = 0; i < rank; ++i) {
    if (!drop[static_cast<std::size_t>(i)]) shape.push_back(x.shape()[static_cast<std::size_t>(i)]);
  }
  return view_or_copy(x, shape, "squeeze");
}

Array ravel(const Array& x) {
  check_placement(x, "ravel");
  return view_or_copy(x, {x.size()}, "ravel");
}

Array broadcast_to(const Array& x, const Shape& shape) {
  check_placement(x, "broadcast_to");
  const Shape& in = x.shape();
  bool ok = in.size() <= shape.size();
  for (std::size_t i = 0; ok && i < in.size(); ++i) {
    std::int64_t target = shape[shape.size() - in.size() + i];
    if (in[i] != target && in[i] != 1) ok = false;
  }
  for (auto d : shape) {
    if (d < 0) ok = false;
  }
  if (!ok) {
    throw_shape_error("broadcast_to",
                      "cannot broadcast array of shape " + shape_to_string(in) + " to shape " + shape_to_string(shape),
                      "each trailing dimension must equal the target's or be 1, and the target rank must be at "
                      "least the array's");
  }
  return detail::strided_copy(x, 0, shape, detail::broadcast_strides(in, shape), "broadcast_to");
}

Array concatenate(const std::vector<Array>& xs, int axis) {
  if (xs.empty()) {
    throw_invalid_argument("ValueError", "concatenate: need at least one array to concatenate",
                           "pass a non-empty list of arrays");
  }
  for (const Array& x : xs) check_placement(x, "concatenate");
  const Shape& first = xs[0].shape();
  if (first.empty()) {
    throw_invalid_argument("ValueError", "concatenate: zero-dimensional arrays cannot be concatenated",
                           "use stack to join scalars into a new axis");
  }
  const int rank = static_cast<int>(first.size());
  const int ax = normalize_axis(axis, rank, "concatenate");
  PromotedType p{xs[0].dtype(), xs[0].weak_type()};
  std::int64_t total = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const Shape& s = xs[k].shape();
    bool ok = s.size() == first.size();
    for (int i = 0; ok && i < rank; ++i) {
      if (i != ax && s[static_cast<std::size_t>(i)] != first[static_cast<std::size_t>(i)]) ok = false;
    }
    if (!ok) {
      throw_shape_error(
          "concatenate",
          "input " + std::to_string(k) + " has shape " + shape_to_string(s) + " but input 0 has shape " +
              shape_to_string(first) + " (axis " + std::to_string(ax) + ")",
          s.size() != first.size()
              ? "all inputs must have the same number of dimensions"
              : "all dimensions except the concatenation axis must match; reshape or transpose the odd input");
    }
    total += s[static_cast<std::size_t>(ax)];
    if (k > 0) p = promote_weak(p.dtype, p.weak, xs[k].dtype(), xs[k].weak_type());
  }
  Shape shape = first;
  shape[static_cast<std::size_t>(ax)] = total;
  Array out = Array::uninitialized(shape, p.dtype, "concatenate");
  if (out.size() == 0) return out.with_weak_type(p.weak);
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < ax; ++i) outer *= first[static_cast<std::size_t>(i)];
  for (int i = ax + 1; i < rank; ++i) inner *= first[static_cast<std::size_t>(i)];
  const std::size_t es = dtype_size(p.dtype);
  auto* dst = static_cast<char*>(out.mutable_raw_data());
  std::int64_t col = 0;
  for (const Array& x : xs) {
    Array c = detail::converted(x, p.dtype, "concatenate");
    const std::int64_t chunk = x.shape()[static_cast<std::size_t>(ax)] * inner;
    if (chunk > 0) {
      detail::copy_rows_between(dst + static_cast<std::size_t>(col) * es, out.memory_kind(), out.device(),
                                static_cast<std::size_t>(total * inner) * es, c.raw_data(), c.memory_kind(),
                                c.device(), static_cast<std::size_t>(chunk) * es, static_cast<std::size_t>(chunk) * es,
                                static_cast<std::size_t>(outer), "concatenate");
    }
    col += chunk;
  }
  return out.with_weak_type(p.weak);
}

Array stack(const std::vector<Array>& xs, int axis) {
  if (xs.empty()) {
    throw_invalid_argument("ValueError", "stack: need at least one array to stack", "pass a non-empty list of arrays");
  }
  for (const Array& x : xs) check_placement(x, "stack");
  const Shape& first = xs[0].shape();
  const int ax = normalize_axis(axis, static_cast<int>(first.size()) + 1, "stack");
  std::vector<Array> expanded;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (xs[k].shape() != first) {
      throw_shape_error("stack",
                        "all input arrays must have the same shape: input " + std::to_string(k) + " has shape " +
                            shape_to_string(xs[k].shape()) + " but input 0 has shape " + shape_to_string(first),
                        "reshape or pad the odd input, or use concatenate to join along an existing axis");
    }
    Shape s = first;
    s.insert(s.begin() + ax, 1);
    expanded.push_back(xs[k].reshaped_view(s));
  }
  return concatenate(expanded, ax);
}

Array chunk(const Array& x, std::int64_t parts, std::int64_t index, int axis) {
  check_placement(x, "chunk");
  const int ax = normalize_axis(axis, x.ndim(), "chunk");
  const std::int64_t n = x.shape()[static_cast<std::size_t>(ax)];
  if (parts <= 0 || n % parts != 0) {
    throw_shape_error("chunk",
                      "array split does not result in an equal division: axis " + std::to_string(ax) + " of shape " +
                          shape_to_string(x.shape()) + " has size " + std::to_string(n) + ", not divisible into " +
                          std::to_string(parts) + " parts",
                      "choose a number of parts that divides the axis size, or pad the array");
  }
  if (index < 0 || index >= parts) {
    throw_invalid_argument("IndexError",
                           "chunk: index " + std::to_string(index) + " is out of bounds for " + std::to_string(parts) +
                               " parts",
                           "valid indices are 0.." + std::to_string(parts - 1));
  }
  const std::int64_t len = n / parts;
  Shape shape = x.shape();
  shape[static_cast<std::size_t>(ax)] = len;
  auto strides = row_major_strides(x.shape());
  return detail::strided_copy(x, index * len * strides[static_cast<std::size_t>(ax)], shape, strides, "chunk");
}

std::vector<Array> split(const Array& x, std::int64_t sections, int axis) {
  check_placement(x, "split");
  const int ax = normalize_axis(axis, x.ndim(), "split");
  const std::int64_t n = x.shape()[static_cast<std::size_t>(ax)];
  if (sections <= 0 || n % sections != 0) {
    throw_shape_error("split",
                      "array split does not result in an equal division: axis " + std::to_string(ax) + " of shape " +
                          shape_to_string(x.shape()) + " has size " + std::to_string(n) + ", not divisible into " +
                          std::to_string(sections) + " sections",
                      "choose a number of sections that divides the axis size, or pad the array");
  }
  std::vector<Array> out;
  for (std::int64_t i = 0; i < sections; ++i) out.push_back(chunk(x, sections, i, ax));
  return out;
}

Array flip(const Array& x, std::optional<int> axis) {
  check_placement(x, "flip");
  const int rank = x.ndim();
  auto strides = row_major_strides(x.shape());
  std::vector<bool> flipped(static_cast<std::size_t>(rank), !axis.has_value());
  if (axis) flipped[static_cast<std::size_t>(normalize_axis(*axis, rank, "flip"))] = true;
  std::int64_t offset = 0;
  for (int i = 0; i < rank; ++i) {
    auto u = static_cast<std::size_t>(i);
    if (flipped[u] && x.shape()[u] > 0) {
      offset += (x.shape()[u] - 1) * strides[u];
      strides[u] = -strides[u];
    }
  }
  return detail::strided_copy(x, offset, x.shape(), strides, "flip");
}

Array tile(const Array& x, const std::vector<std::int64_t>& reps) {
  check_placement(x, "tile");
  for (auto r : reps) {
    if (r < 0) {
      throw_invalid_argument("ValueError", "tile: negative repetition count in reps " + shape_to_string(reps),
                             "every repetition count must be >= 0");
    }
  }
  const std::size_t rank = std::max(reps.size(), x.shape().size());
  Shape xs(rank, 1), rs(rank, 1);
  std::copy(x.shape().begin(), x.shape().end(), xs.begin() + static_cast<std::ptrdiff_t>(rank - x.shape().size()));
  std::copy(reps.begin(), reps.end(), rs.begin() + static_cast<std::ptrdiff_t>(rank - reps.size()));
  auto xstr = row_major_strides(xs);
  // (r0, d0, r1, d1, ...) with zero strides on the repetition axes.
  Shape view_shape, out_shape;
  std::vector<std::int64_t> strides;
  for (std::size_t i = 0; i < rank; ++i) {
    view_shape.push_back(rs[i]);
    strides.push_back(0);
    view_shape.push_back(xs[i]);
    strides.push_back(xstr[i]);
    out_shape.push_back(rs[i] * xs[i]);
  }
  Array v = detail::strided_copy(x, 0, view_shape, strides, "tile");
  return v.reshaped_view(out_shape);
}

Array repeat(const Array& x, std::int64_t repeats, std::optional<int> axis) {
  check_placement(x, "repeat");
  if (repeats < 0) {
    throw_invalid_argument("ValueError", "repeat: repeats must be >= 0, got " + std::to_string(repeats),
                           "pass a non-negative repetition count");
  }
  Shape shape = axis ? x.shape() : Shape{x.size()};
  const int ax = axis ? normalize_axis(*axis, x.ndim(), "repeat") : 0;
  auto in_strides = row_major_strides(shape);
  Shape view_shape = shape;
  std::vector<std::int64_t> strides = in_strides;
  view_shape.insert(view_shape.begin() + ax + 1, repeats);
  strides.insert(strides.begin() + ax + 1, 0);
  Shape out_shape = shape;
  out_shape[static_cast<std::size_t>(ax)] *= repeats;
  Array v = detail::strided_copy(x, 0, view_shape, strides, "repeat");
  return v.reshaped_view(out_shape);
}

Array roll(const Array& x, std::int64_t shift, std::optional<int> axis) {
  check_placement(x, "roll");
  Shape shape = axis ? x.shape() : Shape{x.size()};
  const int ax = axis ? normalize_axis(*axis, x.ndim(), "roll") : 0;
  Array out = Array::uninitialized(x.shape(), x.dtype(), "roll").with_weak_type(x.weak_type());
  if (out.size() == 0) return out;
  const std::int64_t n = shape[static_cast<std::size_t>(ax)];
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < ax; ++i) outer *= shape[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(ax) + 1; i < shape.size(); ++i) inner *= shape[i];
  const std::int64_t s = floor_mod(shift, n);
  const std::size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const char*>(x.raw_data());
  auto* dst = static_cast<char*>(out.mutable_raw_data());
  const auto pitch = static_cast<std::size_t>(n * inner) * es;
  // Per row of `outer`: out[s:] = in[:n-s], out[:s] = in[n-s:].
  detail::copy_rows_between(dst + static_cast<std::size_t>(s * inner) * es, out.memory_kind(), out.device(), pitch, src,
                            x.memory_kind(), x.device(), pitch, static_cast<std::size_t>((n - s) * inner) * es,
                            static_cast<std::size_t>(outer), "roll");
  detail::copy_rows_between(dst, out.memory_kind(), out.device(), pitch,
                            src + static_cast<std::size_t>((n - s) * inner) * es, x.memory_kind(), x.device(), pitch,
                            static_cast<std::size_t>(s * inner) * es, static_cast<std::size_t>(outer), "roll");
  return out;
}

}  // namespace spmd
