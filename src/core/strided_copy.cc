#include "core/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "core/device_ops.h"
#include "core/element_access.h"
#include "core/parallel.h"
#include "core/placement.h"
#include "core/strided_walk.h"
#include "spmd/core/elementwise.h"

namespace spmd::detail {

namespace {
template <class U>
void copy_elements(const U* in, U* out, const StridedLoop<2>& loop, std::int64_t offset) {
  parallel_elements(loop.size, [&](std::int64_t begin, std::int64_t end) {
    walk_strided<2>(loop, {0, offset}, begin, end,
                    [&](const std::array<std::int64_t, 2>& off, std::int64_t n, const std::array<std::int64_t, 2>& s) {
                      U* o = out + off[0];
                      const U* i = in + off[1];
                      if (s[1] == 1) {
                        std::memcpy(o, i, static_cast<std::size_t>(n) * sizeof(U));
                      } else if (s[1] == 0) {
                        std::fill(o, o + n, *i);
                      } else {
                        for (std::int64_t j = 0; j < n; ++j) o[j] = i[j * s[1]];
                      }
                    });
  });
}
}  // namespace

Array strided_copy(const Array& x, std::int64_t offset, const Shape& shape, const std::vector<std::int64_t>& strides,
                   std::string_view what) {
  Array out = Array::uninitialized(shape, x.dtype(), what).with_weak_type(x.weak_type());
  if (out.size() == 0) return out;
  if (DeviceOps* ops = placement_ops(what)) {
    Array dx = in_placement_memory(x, what);
    ops->strided_copy(placement_device(), operand(dx), offset, strides, output(out), shape);
    return out;
  }
  auto loop = make_strided_loop<2>(shape, {row_major_strides(shape), strides});
  switch (dtype_size(x.dtype())) {
    case 1:
      copy_elements(x.data<std::uint8_t>(), out.mutable_data<std::uint8_t>(), loop, offset);
      break;
    case 2:
      copy_elements(x.data<std::uint16_t>(), out.mutable_data<std::uint16_t>(), loop, offset);
      break;
    case 4:
      copy_elements(x.data<std::uint32_t>(), out.mutable_data<std::uint32_t>(), loop, offset);
      break;
    default:
      copy_elements(x.data<std::uint64_t>(), out.mutable_data<std::uint64_t>(), loop, offset);
      break;
  }
  return out;
}

Array permuted_copy(const Array& x, const std::vector<int>& perm, std::string_view what) {
  auto xs = row_major_strides(x.shape());
  Shape shape(perm.size());
  std::vector<std::int64_t> strides(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    shape[i] = x.shape()[static_cast<std::size_t>(perm[i])];
    strides[i] = xs[static_cast<std::size_t>(perm[i])];
  }
  return strided_copy(x, 0, shape, strides, what);
}

Array converted(const Array& x, DType dtype, std::string_view what) {
  if (x.dtype() == dtype) return x;
  return astype(x, dtype).with_weak_type(x.weak_type());
}

bool on_current_device(const Array& x) { return x.device() == current_placement()->device; }

}  // namespace spmd::detail
