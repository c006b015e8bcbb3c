#include "spmd/core/creation.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/device_ops.h"
#include "core/element_access.h"
#include "core/parallel.h"
#include "spmd/error.h"

namespace spmd {

namespace {

Array filled(const Shape& shape, double value, DType dtype, std::string_view what) {
  Array out = Array::uninitialized(shape, dtype, what);
  if (detail::DeviceOps* ops = detail::placement_ops(what)) {
    if (out.size() > 0) ops->fill(detail::placement_device(), detail::output(out), out.size(), value);
    return out;
  }
  detail::visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T v = detail::narrow<T>(value);
    T* p = out.mutable_data<T>();
    detail::parallel_elements(out.size(), [&](std::int64_t b, std::int64_t e) { std::fill(p + b, p + e, v); });
  });
  return out;
}

void require_finite(double v, std::string_view op, std::string_view what) {
  if (!std::isfinite(v)) {
    throw_invalid_argument("ValueError",
                           std::string(op) + ": " + std::string(what) + " must be finite, got " + std::to_string(v),
                           "pass finite numbers");
  }
}

}  // namespace

Array zeros(const Shape& shape, DType dtype) { return filled(shape, 0.0, dtype, "zeros"); }
Array ones(const Shape& shape, DType dtype) { return filled(shape, 1.0, dtype, "ones"); }
Array full(const Shape& shape, double value, DType dtype) { return filled(shape, value, dtype, "full"); }

Array zeros_like(const Array& x) {
  check_placement(x, "zeros_like");
  return filled(x.shape(), 0.0, x.dtype(), "zeros_like").with_weak_type(x.weak_type());
}
Array ones_like(const Array& x) {
  check_placement(x, "ones_like");
  return filled(x.shape(), 1.0, x.dtype(), "ones_like").with_weak_type(x.weak_type());
}
Array full_like(const Array& x, double value) {
  check_placement(x, "full_like");
  return filled(x.shape(), value, x.dtype(), "full_like").with_weak_type(x.weak_type());
}

Array arange(double start, double stop, double step, std::optional<DType> dtype) {
  require_finite(start, "arange", "start");
  require_finite(stop, "arange", "stop");
  require_finite(step, "arange", "step");
  if (step == 0) {
    throw_invalid_argument("ValueError", "arange: step must not be zero (start=" + std::to_string(start) +
                                             ", stop=" + std::to_string(stop) + ")",
                           "use a positive step to count up or a negative one to count down");
  }
  auto integral = [](double v) { return std::floor(v) == v; };
  DType dt = dtype.value_or(integral(start) && integral(stop) && integral(step) ? kDefaultInt : kDefaultFloat);
  double n = std::ceil((stop - start) / step);
  std::int64_t count = n > 0 ? static_cast<std::int64_t>(n) : 0;
  return detail::built_on_host([&] {
  Array out = Array::uninitialized({count}, dt, "arange");
  detail::visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T* p = out.mutable_data<T>();
    bool int_steps = integral(start) && integral(step);
    for (std::int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_integral_v<T>) {
        if (int_steps) {
          p[i] = detail::narrow<T>(static_cast<std::int64_t>(start) + i * static_cast<std::int64_t>(step));
          continue;
        }
      }
      p[i] = detail::narrow<T>(start + static_cast<double>(i) * step);
    }
  });
  return out;
  }, "arange");
}

Array iota(const Shape& shape, int dimension, DType dtype) {
  if (dimension < 0 || dimension >= static_cast<int>(shape.size())) {
    throw_invalid_argument("ValueError",
                           "iota dimension must be between 0 and len(shape), got dimension=" +
                               std::to_string(dimension) + " for shape=" + shape_to_string(shape),
                           "count along one of the shape's axes");
  }
  if (dtype == DType::kBool) {
    throw_invalid_argument("TypeError",
                           "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
                           "complexfloating.",
                           "make the iota in an integer dtype and compare it to get booleans");
  }
  return detail::built_on_host([&] {
    Array out = Array::uninitialized(shape, dtype, "iota");
    // Row-major: the index along `dimension` is (flat / inner) % extent.
    std::int64_t inner = 1;
    for (std::size_t d = static_cast<std::size_t>(dimension) + 1; d < shape.size(); ++d) inner *= shape[d];
    const std::int64_t extent = shape[static_cast<std::size_t>(dimension)];
    detail::visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      T* p = out.mutable_data<T>();
      detail::parallel_elements(out.size(), [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) p[i] = detail::narrow<T>(static_cast<double>((i / inner) % extent));
      });
    });
    return out;
  }, "iota");
}

Array linspace(double start, double stop, std::int64_t num, bool endpoint, DType dtype) {
  if (num < 0) {
    throw_invalid_argument("ValueError", "linspace: num must be non-negative, got " + std::to_string(num),
                           "num is the number of samples to generate");
  }
  return detail::built_on_host([&] {
  Array out = Array::uninitialized({num}, dtype, "linspace");
  detail::visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    // JAX's formula: start * (1 - i/div) + stop * (i/div), endpoint appended
    // exactly; computed in float64 for float64 results, float32 otherwise.
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    T* p = out.mutable_data<T>();
    std::int64_t div = endpoint ? num - 1 : num;
    auto store = [&](std::int64_t i, C v) {
      if constexpr (std::is_integral_v<T>) v = std::floor(v);
      p[i] = detail::narrow<T>(v);
    };
    if (num == 1) {
      store(0, static_cast<C>(start));
      return;
    }
    for (std::int64_t i = 0; i < div; ++i) {
      C s = static_cast<C>(i) / static_cast<C>(div);
      store(i, static_cast<C>(start) * (C{1} - s) + static_cast<C>(stop) * s);
    }
    if (endpoint && num > 1) store(num - 1, static_cast<C>(stop));
  });
  return out;
  }, "linspace");
}

Array eye(std::int64_t n, std::int64_t m, DType dtype) {
  if (m == -1) m = n;
  if (n < 0 || m < 0) {
    throw_invalid_argument("ValueError",
                           "eye: negative dimensions are not allowed (N=" + std::to_string(n) +
                               ", M=" + std::to_string(m) + ")",
                           "pass N >= 0 and M >= 0 (M = -1 means M = N)");
  }
  return detail::built_on_host([&] {
    Array out = filled({n, m}, 0.0, dtype, "eye");
    detail::visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      T* p = out.mutable_data<T>();
      for (std::int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = detail::narrow<T>(1.0);
    });
    return out;
  }, "eye");
}

Array copy(const Array& x) {
  check_placement(x, "copy");
  Array out = Array::uninitialized(x.shape(), x.dtype(), "copy");
  detail::copy_bytes(out.mutable_raw_data(), out.memory_kind(), out.device(), x.raw_data(), x.memory_kind(), x.device(),
                     x.nbytes(), "copy");
  return out.with_weak_type(x.weak_type());
}

}  // namespace spmd
