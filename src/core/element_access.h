#pragma once
// Typed element access by runtime dtype: the one switch over storage types
// that the rest of the core builds on.

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "spmd/core/array.h"

namespace spmd::detail {

/// Calls f(T{}) with T the storage type of `dtype` (bool, int32_t, int64_t,
/// float16, bfloat16, float, double).
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBool: return std::forward<F>(f)(bool{});
    case DType::kInt32: return std::forward<F>(f)(std::int32_t{});
    case DType::kInt64: return std::forward<F>(f)(std::int64_t{});
    case DType::kFloat16: return std::forward<F>(f)(float16{});
    case DType::kBFloat16: return std::forward<F>(f)(bfloat16{});
    case DType::kFloat32: return std::forward<F>(f)(float{});
    case DType::kFloat64: return std::forward<F>(f)(double{});
  }
  return std::forward<F>(f)(float{});
}

/// Value of a storage element as its computation type (half types widen to float).
inline float widen(float16 h) { return static_cast<float>(h); }
inline float widen(bfloat16 h) { return static_cast<float>(h); }
template <class T>
inline T widen(T v) { return v; }

/// Storage element from a computation value, rounding for half types and
/// truncating toward zero for float -> int (as astype does).
template <class T, class V>
inline T narrow(V v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V{};
  } else if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
    // Saturating, NaN -> 0, as XLA converts; a plain cast would be undefined.
    if (v != v) return T{0};
    if (v <= static_cast<V>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<V>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

inline double load_double(const Array& a, std::int64_t i) {
  return visit_dtype(a.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(widen(a.data<T>()[i]));
  });
}

inline std::int64_t load_int64(const Array& a, std::int64_t i) {
  return visit_dtype(a.dtype(), [&](auto tag) -> std::int64_t {
    using T = decltype(tag);
    return static_cast<std::int64_t>(widen(a.data<T>()[i]));
  });
}

inline void store_double(Array& a, std::int64_t i, double v) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    a.mutable_data<T>()[i] = narrow<T>(v);
  });
}

inline void store_int64(Array& a, std::int64_t i, std::int64_t v) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    a.mutable_data<T>()[i] = narrow<T>(v);
  });
}

}  // namespace spmd::detail
