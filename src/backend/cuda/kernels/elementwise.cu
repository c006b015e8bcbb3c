// fill, unary, binary, where, astype: elementwise.cc's semantics on the GPU.

#include "backend/cuda/kernels/dispatch.cuh"
#include "spmd/core/elementwise.h"

namespace spmd::cuda::kernels {

namespace {

using namespace spmd::cuda::dev;

template <int N>
__device__ __forceinline__ void offsets(const StridedDims& d, std::int64_t flat, std::int64_t (&off)[N]) {
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int i = d.ndim - 1; i >= 0; --i) {
    std::int64_t idx = flat % d.shape[i];
    flat /= d.shape[i];
    for (int k = 0; k < N; ++k) off[k] += idx * d.strides[k + 1][i];
  }
}

// ---- unary (elementwise.cc unary_fn) ---------------------------------------

template <class C>
__device__ __forceinline__ bool unary_pred(int op, C x) {
  switch (static_cast<UnaryOp>(op)) {
    case UnaryOp::kLogicalNot: return x == C{};
    case UnaryOp::kIsNan:
      if constexpr (kIsFloat<C>) return m_isnan(x);
      return false;
    case UnaryOp::kIsInf:
      if constexpr (kIsFloat<C>) return m_isinf(x);
      return false;
    case UnaryOp::kIsFinite:
      if constexpr (kIsFloat<C>) return m_isfinite(x);
      return true;
    default: return false;
  }
}

template <class C>
__device__ __forceinline__ C unary_val(int op, C x) {
  switch (static_cast<UnaryOp>(op)) {
    case UnaryOp::kNegative:
      if constexpr (kIsInt<C>) return wrap_sub(C{0}, x);
      if constexpr (kIsFloat<C>) return static_cast<C>(-x);
      return x;
    case UnaryOp::kPositive: return x;
    case UnaryOp::kAbs:
      if constexpr (kIsInt<C>) return x < 0 ? wrap_sub(C{0}, x) : x;
      if constexpr (kIsFloat<C>) return m_fabs(x);
      return x;
    case UnaryOp::kSign:
      if constexpr (kIsInt<C>) return static_cast<C>((x > 0) - (x < 0));
      if constexpr (kIsFloat<C>) return x > 0 ? C{1} : x < 0 ? C{-1} : x;
      return x;
    case UnaryOp::kSquare:
      if constexpr (kIsInt<C>) return wrap_mul(x, x);
      if constexpr (kIsFloat<C>) return static_cast<C>(x * x);
      return x;
    case UnaryOp::kFloor:
      if constexpr (kIsFloat<C>) return m_floor(x);
      return x;
    case UnaryOp::kCeil:
      if constexpr (kIsFloat<C>) return m_ceil(x);
      return x;
    case UnaryOp::kRound:
      if constexpr (kIsFloat<C>) return m_rint(x);
      return x;
    case UnaryOp::kRoundAwayFromZero:
      if constexpr (kIsFloat<C>) return m_round(x);
      return x;
    case UnaryOp::kBitwiseNot:
      if constexpr (std::is_same_v<C, bool>) return !x;
      if constexpr (kIsInt<C>) return static_cast<C>(~x);
      return x;
    default: break;
  }
  if constexpr (kIsFloat<C>) {
    switch (static_cast<UnaryOp>(op)) {
      case UnaryOp::kExp: return m_exp(x);
      case UnaryOp::kLog: return m_log(x);
      case UnaryOp::kLog1p: return m_log1p(x);
      case UnaryOp::kExpm1: return m_expm1(x);
      case UnaryOp::kSqrt: return m_sqrt(x);
      case UnaryOp::kRsqrt: return C{1} / m_sqrt(x);
      case UnaryOp::kSin: return m_sin(x);
      case UnaryOp::kCos: return m_cos(x);
      case UnaryOp::kTan: return m_tan(x);
      case UnaryOp::kTanh: return m_tanh(x);
      case UnaryOp::kSinh: return m_sinh(x);
      case UnaryOp::kCosh: return m_cosh(x);
      case UnaryOp::kArcsin: return m_asin(x);
      case UnaryOp::kArccos: return m_acos(x);
      case UnaryOp::kArctan: return m_atan(x);
      case UnaryOp::kLogistic: return m_logistic(x);
      case UnaryOp::kReciprocal: return C{1} / x;
      default: break;
    }
  }
  return x;
}

template <class T>
__global__ void unary_kernel(int op, const T* x, T* out, std::int64_t n) {
  SPMD_GRID_LOOP(i, n) { out[i] = narrow<T>(unary_val<Compute<T>>(op, widen(x[i]))); }
}

template <class T>
__global__ void unary_pred_kernel(int op, const T* x, bool* out, std::int64_t n) {
  SPMD_GRID_LOOP(i, n) { out[i] = unary_pred<Compute<T>>(op, widen(x[i])); }
}

// ---- binary (elementwise.cc binary_fn) ---------------------------------------

template <class C>
__device__ __forceinline__ bool binary_cmp(int op, C a, C b) {
  switch (static_cast<BinaryOp>(op)) {
    case BinaryOp::kEqual: return a == b;
    case BinaryOp::kNotEqual: return a != b;
    case BinaryOp::kLess: return a < b;
    case BinaryOp::kLessEqual: return a <= b;
    case BinaryOp::kGreater: return a > b;
    case BinaryOp::kGreaterEqual: return a >= b;
    default: return false;
  }
}

template <class C>
__device__ __forceinline__ C binary_val(int op, C a, C b) {
  switch (static_cast<BinaryOp>(op)) {
    case BinaryOp::kAdd:
      if constexpr (std::is_same_v<C, bool>) return a || b;
      else if constexpr (kIsInt<C>) return wrap_add(a, b);
      else return static_cast<C>(a + b);
    case BinaryOp::kSubtract:
      if constexpr (kIsInt<C>) return wrap_sub(a, b);
      else if constexpr (kIsFloat<C>) return static_cast<C>(a - b);
      else return a;
    case BinaryOp::kMultiply:
      if constexpr (std::is_same_v<C, bool>) return a && b;
      else if constexpr (kIsInt<C>) return wrap_mul(a, b);
      else return static_cast<C>(a * b);
    case BinaryOp::kDivide:
      if constexpr (kIsFloat<C>) return a / b;
      else return a;
    case BinaryOp::kFloorDivide:
      if constexpr (kIsInt<C>) return int_floor_divide(a, b);
      else if constexpr (kIsFloat<C>) return float_floor_divide(a, b);
      else return a;
    case BinaryOp::kRemainder:
      if constexpr (kIsInt<C>) return int_remainder(a, b);
      else if constexpr (kIsFloat<C>) return float_remainder(a, b);
      else return a;
    case BinaryOp::kPower:
      if constexpr (kIsInt<C>) return int_power(a, b);
      else if constexpr (kIsFloat<C>) return m_pow(a, b);
      else return a;
    case BinaryOp::kMaximum:
      if constexpr (kIsFloat<C>) {
        if (m_isnan(a)) return a;
        if (m_isnan(b)) return b;
      }
      return a < b ? b : a;
    case BinaryOp::kMinimum:
      if constexpr (kIsFloat<C>) {
        if (m_isnan(a)) return a;
        if (m_isnan(b)) return b;
      }
      return b < a ? b : a;
    case BinaryOp::kLogicalAnd:
      if constexpr (std::is_same_v<C, bool>) return a && b;
      else return a;
    case BinaryOp::kLogicalOr:
      if constexpr (std::is_same_v<C, bool>) return a || b;
      else return a;
    case BinaryOp::kLogicalXor:
      if constexpr (std::is_same_v<C, bool>) return a != b;
      else return a;
    case BinaryOp::kBitwiseAnd:
      if constexpr (std::is_same_v<C, bool>) return a && b;
      else if constexpr (kIsInt<C>) return static_cast<C>(a & b);
      else return a;
    case BinaryOp::kBitwiseOr:
      if constexpr (std::is_same_v<C, bool>) return a || b;
      else if constexpr (kIsInt<C>) return static_cast<C>(a | b);
      else return a;
    case BinaryOp::kBitwiseXor:
      if constexpr (std::is_same_v<C, bool>) return a != b;
      else if constexpr (kIsInt<C>) return static_cast<C>(a ^ b);
      else return a;
    case BinaryOp::kArctan2:
      if constexpr (kIsFloat<C>) return m_atan2(a, b);
      else return a;
    default: return a;
  }
}

template <class T>
__global__ void binary_kernel(int op, const T* a, const T* b, T* out, StridedDims d, std::int64_t n) {
  SPMD_GRID_LOOP(i, n) {
    std::int64_t off[2];
    offsets<2>(d, i, off);
    out[i] = narrow<T>(binary_val<Compute<T>>(op, widen(a[off[0]]), widen(b[off[1]])));
  }
}

template <class T>
__global__ void compare_kernel(int op, const T* a, const T* b, bool* out, StridedDims d, std::int64_t n) {
  SPMD_GRID_LOOP(i, n) {
    std::int64_t off[2];
    offsets<2>(d, i, off);
    out[i] = binary_cmp<Compute<T>>(op, widen(a[off[0]]), widen(b[off[1]]));
  }
}

template <class U>
__global__ void where_kernel(const bool* c, const U* x, const U* y, U* out, StridedDims d, std::int64_t n) {
  SPMD_GRID_LOOP(i, n) {
    std::int64_t off[3];
    offsets<3>(d, i, off);
    out[i] = c[off[0]] ? x[off[1]] : y[off[2]];
  }
}

template <class S, class D>
__global__ void astype_kernel(const S* x, D* out, std::int64_t n) {
  SPMD_GRID_LOOP(i, n) { out[i] = narrow<D>(widen(x[i])); }
}

template <class U>
__global__ void fill_kernel(U* out, U v, std::int64_t n) {
  SPMD_GRID_LOOP(i, n) { out[i] = v; }
}

bool is_compare(int op) {
  auto o = static_cast<BinaryOp>(op);
  return o == BinaryOp::kEqual || o == BinaryOp::kNotEqual || o == BinaryOp::kLess || o == BinaryOp::kLessEqual ||
         o == BinaryOp::kGreater || o == BinaryOp::kGreaterEqual;
}

}  // namespace

void fill(cudaStream_t s, std::size_t elem_size, void* out, std::int64_t n, std::uint64_t bits) {
  SPMD_DISPATCH_SIZE(elem_size, U,
                     fill_kernel<U><<<grid_for(n), kThreads, 0, s>>>(static_cast<U*>(out), static_cast<U>(bits), n));
}

void unary(cudaStream_t s, int op, DType dtype, const void* x, void* out, bool out_bool, std::int64_t n) {
  SPMD_DISPATCH_DTYPE(dtype, T, {
    if (out_bool) {
      unary_pred_kernel<T><<<grid_for(n), kThreads, 0, s>>>(op, static_cast<const T*>(x), static_cast<bool*>(out), n);
    } else {
      unary_kernel<T><<<grid_for(n), kThreads, 0, s>>>(op, static_cast<const T*>(x), static_cast<T*>(out), n);
    }
  });
}

void binary(cudaStream_t s, int op, DType dtype, const void* a, const void* b, void* out, bool out_bool,
            const StridedDims& d, std::int64_t n) {
  SPMD_DISPATCH_DTYPE(dtype, T, {
    if (out_bool && is_compare(op)) {
      compare_kernel<T><<<grid_for(n), kThreads, 0, s>>>(op, static_cast<const T*>(a), static_cast<const T*>(b),
                                                          static_cast<bool*>(out), d, n);
    } else {
      binary_kernel<T><<<grid_for(n), kThreads, 0, s>>>(op, static_cast<const T*>(a), static_cast<const T*>(b),
                                                         static_cast<T*>(out), d, n);
    }
  });
}

void where(cudaStream_t s, DType dtype, const void* c, const void* x, const void* y, void* out, const StridedDims& d,
           std::int64_t n) {
  SPMD_DISPATCH_SIZE(dtype_size(dtype), U,
                     where_kernel<U><<<grid_for(n), kThreads, 0, s>>>(static_cast<const bool*>(c),
                                                                       static_cast<const U*>(x),
                                                                       static_cast<const U*>(y), static_cast<U*>(out), d,
                                                                       n));
}

void astype(cudaStream_t s, DType from, const void* x, DType to, void* out, std::int64_t n) {
  SPMD_DISPATCH_DTYPE(from, S, {
    SPMD_DISPATCH_DTYPE(to, D, {
      astype_kernel<S, D><<<grid_for(n), kThreads, 0, s>>>(static_cast<const S*>(x), static_cast<D*>(out), n);
    });
  });
}

}  // namespace spmd::cuda::kernels
