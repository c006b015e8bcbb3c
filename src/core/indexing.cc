#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/device_ops.h"
#include "core/element_access.h"
#include "core/parallel.h"
#include "core/strided_copy.h"
#include "core/strided_walk.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/error.h"

namespace spmd {

namespace {

// The strided region of x selected by a basic index.
struct View {
  std::int64_t offset = 0;
  Shape shape;
  std::vector<std::int64_t> strides;
};

std::string rank_word(int rank) { return std::to_string(rank) + "-dimensional"; }

View basic_view(const Array& x, const std::vector<IndexItem>& items, std::string_view op) {
  const int rank = x.ndim();
  int consuming = 0, ellipses = 0;
  for (const auto& it : items) {
    if (it.kind == IndexItem::Kind::kInt || it.kind == IndexItem::Kind::kSlice) ++consuming;
    if (it.kind == IndexItem::Kind::kEllipsis) ++ellipses;
  }
  if (ellipses > 1) {
    throw_invalid_argument("IndexError", std::string(op) + ": an index can only have a single ellipsis ('...')",
                           "remove the extra '...'");
  }
  if (consuming > rank) {
    throw_invalid_argument("IndexError",
                           std::string(op) + ": too many indices for array: array of shape " +
                               shape_to_string(x.shape()) + " is " + rank_word(rank) + ", but " +
                               std::to_string(consuming) + " were indexed",
                           "use at most one integer or slice per axis");
  }
  const auto xstr = row_major_strides(x.shape());
  View v;
  int axis = 0;
  auto take_full = [&](int n_axes) {
    for (int k = 0; k < n_axes; ++k, ++axis) {
      v.shape.push_back(x.shape()[static_cast<std::size_t>(axis)]);
      v.strides.push_back(xstr[static_cast<std::size_t>(axis)]);
    }
  };
  for (const auto& it : items) {
    switch (it.kind) {
      case IndexItem::Kind::kEllipsis:
        take_full(rank - consuming);
        break;
      case IndexItem::Kind::kNewAxis:
        v.shape.push_back(1);
        v.strides.push_back(0);
        break;
      case IndexItem::Kind::kInt: {
        const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
        std::int64_t i = it.index < 0 ? it.index + n : it.index;
        if (i < 0 || i >= n) {
          throw_invalid_argument("IndexError",
                                 std::string(op) + ": index " + std::to_string(it.index) +
                                     " is out of bounds for axis " + std::to_string(axis) + " with size " +
                                     std::to_string(n),
                                 n == 0 ? "the axis is empty" : "valid indices are -" + std::to_string(n) + ".." +
                                                                    std::to_string(n - 1));
        }
        v.offset += i * xstr[static_cast<std::size_t>(axis)];
        ++axis;
        break;
      }
      case IndexItem::Kind::kSlice: {
        const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
        const std::int64_t step = it.step.value_or(1);
        if (step == 0) {
          throw_invalid_argument("ValueError", std::string(op) + ": slice step cannot be zero",
                                 "use a positive step, or a negative one to walk backwards");
        }
        // CPython's PySlice_AdjustIndices.
        auto adjust = [&](std::optional<std::int64_t> value, bool is_start) {
          if (!value) return step < 0 ? (is_start ? n - 1 : std::int64_t{-1}) : (is_start ? std::int64_t{0} : n);
          std::int64_t p = *value;
          if (p < 0) {
            p += n;
            if (p < 0) p = step < 0 ? -1 : 0;
          } else if (p >= n) {
            p = step < 0 ? n - 1 : n;
          }
          return p;
        };
        const std::int64_t start = adjust(it.start, true);
        const std::int64_t stop = adjust(it.stop, false);
        std::int64_t len = 0;
        if (step > 0 && stop > start) len = (stop - start - 1) / step + 1;
        if (step < 0 && start > stop) len = (start - stop - 1) / (-step) + 1;
        if (len > 0) v.offset += start * xstr[static_cast<std::size_t>(axis)];
        v.shape.push_back(len);
        v.strides.push_back(step * xstr[static_cast<std::size_t>(axis)]);
        ++axis;
        break;
      }
    }
  }
  take_full(rank - axis);
  return v;
}

template <class C>
C combine(UpdateMode mode, C old, C v) {
  switch (mode) {
    case UpdateMode::kSet:
      return v;
    case UpdateMode::kAdd:
      if constexpr (std::is_same_v<C, bool>) return old || v;
      else if constexpr (std::is_integral_v<C>) {
        using U = std::make_unsigned_t<C>;
        return static_cast<C>(static_cast<U>(old) + static_cast<U>(v));
      } else return old + v;
    case UpdateMode::kMultiply:
      if constexpr (std::is_same_v<C, bool>) return old && v;
      else if constexpr (std::is_integral_v<C>) {
        using U = std::make_unsigned_t<C>;
        return static_cast<C>(static_cast<U>(old) * static_cast<U>(v));
      } else return old * v;
    case UpdateMode::kMin:
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(old) || std::isnan(v)) return std::isnan(old) ? old : v;
      }
      return v < old ? v : old;
    case UpdateMode::kMax:
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(old) || std::isnan(v)) return std::isnan(old) ? old : v;
      }
      return old < v ? v : old;
  }
  return v;
}

std::string_view mode_name(UpdateMode mode) {
  switch (mode) {
    case UpdateMode::kSet: return "at[].set";
    case UpdateMode::kAdd: return "at[].add";
    case UpdateMode::kMultiply: return "at[].multiply";
    case UpdateMode::kMin: return "at[].min";
    case UpdateMode::kMax: return "at[].max";
  }
  return "at[]";
}

}  // namespace

Array index(const Array& x, const std::vector<IndexItem>& items) {
  check_placement(x, "getitem");
  View v = basic_view(x, items, "getitem");
  return detail::strided_copy(x, v.offset, v.shape, v.strides, "getitem");
}

Array index_update(const Array& x, const std::vector<IndexItem>& items, const Array& value, UpdateMode mode) {
  const std::string name(mode_name(mode));
  check_placement(x, name);
  check_placement(value, name);
  View v = basic_view(x, items, name);
  // numpy assignment: drop the value's extra leading size-1 axes, then broadcast.
  Shape vs = value.shape();
  while (vs.size() > v.shape.size() && vs.front() == 1) vs.erase(vs.begin());
  bool ok = vs.size() <= v.shape.size();
  for (std::size_t i = 0; ok && i < vs.size(); ++i) {
    std::int64_t target = v.shape[v.shape.size() - vs.size() + i];
    if (vs[i] != target && vs[i] != 1) ok = false;
  }
  if (!ok) {
    throw_shape_error(name,
                      "cannot broadcast update of shape " + shape_to_string(value.shape()) +
                          " to the indexed shape " + shape_to_string(v.shape) + " of an array of shape " +
                          shape_to_string(x.shape()),
                      "the update must broadcast to the selected region (trailing dimensions equal or 1)");
  }
  Array out = Array::uninitialized(x.shape(), x.dtype(), name).with_weak_type(x.weak_type());
  detail::copy_bytes(out.mutable_raw_data(), out.memory_kind(), out.device(), x.raw_data(), x.memory_kind(), x.device(),
                     x.nbytes(), name);
  if (num_elements(v.shape) == 0) return out;
  Array val = detail::converted(value, x.dtype(), name).reshaped_view(vs);
  if (detail::DeviceOps* ops = detail::placement_ops(name)) {
    Array dv = detail::in_placement_memory(val, name);
    ops->index_update(detail::placement_device(), detail::output(out), v.offset, v.shape, v.strides,
                      detail::operand(dv), detail::broadcast_strides(vs, v.shape), mode);
    return out;
  }
  auto loop = detail::make_strided_loop<2>(v.shape, {v.strides, detail::broadcast_strides(vs, v.shape)});
  detail::visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.mutable_data<T>();
    const T* in = val.data<T>();
    // Basic indices never select an element twice, so chunks are independent.
    detail::parallel_elements(loop.size, [&](std::int64_t b, std::int64_t e) {
      detail::walk_strided<2>(
          loop, {v.offset, 0}, b, e,
          [&](const std::array<std::int64_t, 2>& off, std::int64_t n, const std::array<std::int64_t, 2>& s) {
            for (std::int64_t i = 0; i < n; ++i) {
              T& dst = o[off[0] + i * s[0]];
              dst = detail::narrow<T>(combine(mode, detail::widen(dst), detail::widen(in[off[1] + i * s[1]])));
            }
          });
    });
  });
  return out;
}

Array take(const Array& x, const Array& indices, std::optional<int> axis) {
  check_placement(x, "take");
  check_placement(indices, "take");
  if (!is_integer(indices.dtype())) {
    throw_invalid_argument("TypeError",
                           "take: indices must be an integer array, got " + std::string(dtype_name(indices.dtype())),
                           "cast the indices with astype(int32)");
  }
  Shape shape = axis ? x.shape() : Shape{x.size()};
  const int ax = axis ? normalize_axis(*axis, x.ndim(), "take") : 0;
  const std::int64_t n = shape[static_cast<std::size_t>(ax)];
  const std::int64_t k = indices.size();
  if (n == 0 && k > 0) {
    throw_invalid_argument("IndexError",
                           "take: cannot take " + std::to_string(k) + " indices from an empty axis " +
                               std::to_string(ax) + " of shape " + shape_to_string(x.shape()),
                           "the axis has no elements to gather");
  }
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < ax; ++i) outer *= shape[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(ax) + 1; i < shape.size(); ++i) inner *= shape[i];
  Shape out_shape(shape.begin(), shape.begin() + ax);
  out_shape.insert(out_shape.end(), indices.shape().begin(), indices.shape().end());
  out_shape.insert(out_shape.end(), shape.begin() + ax + 1, shape.end());
  Array out = Array::uninitialized(out_shape, x.dtype(), "take").with_weak_type(x.weak_type());
  if (out.size() == 0) return out;
  if (detail::DeviceOps* ops = detail::placement_ops("take")) {
    Array dx = detail::in_placement_memory(x, "take");
    Array di = detail::in_placement_memory(indices, "take");
    ops->take(detail::placement_device(), detail::operand(dx), detail::operand(di), k, detail::output(out), outer, n,
              inner);
    return out;
  }
  std::vector<std::int64_t> idx = indices.to_int64s();
  for (auto& i : idx) {
    if (i < 0) i += n;
    i = std::clamp<std::int64_t>(i, 0, n - 1);
  }
  const std::size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const char*>(x.raw_data());
  auto* dst = static_cast<char*>(out.mutable_raw_data());
  const auto row = static_cast<std::size_t>(inner) * es;
  detail::parallel_ranges(outer, outer * k * inner, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t o = b; o < e; ++o) {
      for (std::int64_t j = 0; j < k; ++j) {
        std::memcpy(dst + static_cast<std::size_t>((o * k + j) * inner) * es,
                    src + static_cast<std::size_t>((o * n + idx[static_cast<std::size_t>(j)]) * inner) * es, row);
      }
    }
  });
  return out;
}

}  // namespace spmd
