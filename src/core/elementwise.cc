// The elementwise loops are this file's work. GCC's -O2 cost model declines
// to vectorize loops that need an epilogue (see data_plane.cc), and with FP
// traps assumed possible it will not turn the selects of float_math.h into
// blends; no contraction into FMA keeps every clone's bits the same.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-trapping-math", "no-math-errno", "fp-contract=off")
#endif

#include "spmd/core/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "core/device_ops.h"
#include "core/elementwise_kernels.h"
#include "core/float_math.h"
#include "core/element_access.h"
#include "core/scalar_rules.h"
#include "core/parallel.h"
#include "core/strided_copy.h"
#include "core/strided_walk.h"
#include "spmd/error.h"

namespace spmd {

namespace {

using detail::narrow;
using detail::widen;
using detail::BinaryKernel;
using detail::UnaryKernel;

template <class T>
using Compute = decltype(widen(T{}));

// ---- unary --------------------------------------------------------------

constexpr bool is_float_only(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp: case UnaryOp::kLog: case UnaryOp::kLog1p: case UnaryOp::kExpm1:
    case UnaryOp::kSqrt: case UnaryOp::kRsqrt: case UnaryOp::kSin: case UnaryOp::kCos:
    case UnaryOp::kTan: case UnaryOp::kTanh: case UnaryOp::kSinh: case UnaryOp::kCosh:
    case UnaryOp::kArcsin: case UnaryOp::kArccos: case UnaryOp::kArctan: case UnaryOp::kLogistic:
    case UnaryOp::kReciprocal:
      return true;
    default:
      return false;
  }
}

constexpr bool is_predicate(UnaryOp op) {
  return op == UnaryOp::kLogicalNot || op == UnaryOp::kIsNan || op == UnaryOp::kIsInf || op == UnaryOp::kIsFinite;
}

template <UnaryOp Op, class C>
constexpr bool unary_supported() {
  if constexpr (is_float_only(Op)) return rules::kIsFloat<C>;
  if constexpr (Op == UnaryOp::kBitwiseNot) return !rules::kIsFloat<C>;
  if constexpr (Op == UnaryOp::kNegative || Op == UnaryOp::kSign || Op == UnaryOp::kSquare) {
    return !std::is_same_v<C, bool>;
  }
  return true;
}

// Inlined into the kernels' loops always: only then do they vectorize.
template <UnaryOp Op, class C>
[[gnu::always_inline]] inline auto unary_fn(C x) {
  if constexpr (Op == UnaryOp::kNegative) {
    if constexpr (rules::kIsInt<C>) return rules::wrap_sub(C{0}, x);
    else return static_cast<C>(-x);
  } else if constexpr (Op == UnaryOp::kPositive) {
    return x;
  } else if constexpr (Op == UnaryOp::kAbs) {
    if constexpr (rules::kIsInt<C>) return x < 0 ? rules::wrap_sub(C{0}, x) : x;
    else if constexpr (rules::kIsFloat<C>) return std::fabs(x);
    else return x;
  } else if constexpr (Op == UnaryOp::kSign) {
    if constexpr (rules::kIsInt<C>) return static_cast<C>((x > 0) - (x < 0));
    else return x > 0 ? C{1} : x < 0 ? C{-1} : x;  // keeps nan and signed zeros
  } else if constexpr (Op == UnaryOp::kExp) {
    if constexpr (std::is_same_v<C, float>) return rules::exp_f32(x);
    else return std::exp(x);
  } else if constexpr (Op == UnaryOp::kLog) {
    if constexpr (std::is_same_v<C, float>) return rules::log_f32(x);
    else return std::log(x);
  } else if constexpr (Op == UnaryOp::kLog1p) {
    return std::log1p(x);
  } else if constexpr (Op == UnaryOp::kExpm1) {
    return std::expm1(x);
  } else if constexpr (Op == UnaryOp::kSqrt) {
    return std::sqrt(x);
  } else if constexpr (Op == UnaryOp::kRsqrt) {
    return C{1} / std::sqrt(x);
  } else if constexpr (Op == UnaryOp::kSquare) {
    if constexpr (rules::kIsInt<C>) return rules::wrap_mul(x, x);
    else return static_cast<C>(x * x);
  } else if constexpr (Op == UnaryOp::kSin) {
    return std::sin(x);
  } else if constexpr (Op == UnaryOp::kCos) {
    return std::cos(x);
  } else if constexpr (Op == UnaryOp::kTan) {
    return std::tan(x);
  } else if constexpr (Op == UnaryOp::kTanh) {
    if constexpr (std::is_same_v<C, float>) return rules::tanh_f32(x);
    else return std::tanh(x);
  } else if constexpr (Op == UnaryOp::kSinh) {
    return std::sinh(x);
  } else if constexpr (Op == UnaryOp::kCosh) {
    return std::cosh(x);
  } else if constexpr (Op == UnaryOp::kArcsin) {
    return std::asin(x);
  } else if constexpr (Op == UnaryOp::kArccos) {
    return std::acos(x);
  } else if constexpr (Op == UnaryOp::kArctan) {
    return std::atan(x);
  } else if constexpr (Op == UnaryOp::kLogistic) {
    if constexpr (std::is_same_v<C, float>) return rules::logistic_f32(x);
    else return C{1} / (C{1} + std::exp(-x));
  } else if constexpr (Op == UnaryOp::kFloor) {
    if constexpr (rules::kIsFloat<C>) return std::floor(x);
    else return x;
  } else if constexpr (Op == UnaryOp::kCeil) {
    if constexpr (rules::kIsFloat<C>) return std::ceil(x);
    else return x;
  } else if constexpr (Op == UnaryOp::kRound) {
    if constexpr (rules::kIsFloat<C>) return std::nearbyint(x);  // half to even, as np.round
    else return x;
  } else if constexpr (Op == UnaryOp::kRoundAwayFromZero) {
    if constexpr (rules::kIsFloat<C>) return std::round(x);
    else return x;
  } else if constexpr (Op == UnaryOp::kLogicalNot) {
    return x == C{};
  } else if constexpr (Op == UnaryOp::kBitwiseNot) {
    if constexpr (std::is_same_v<C, bool>) return !x;
    else return static_cast<C>(~x);
  } else if constexpr (Op == UnaryOp::kIsNan) {
    if constexpr (rules::kIsFloat<C>) return std::isnan(x);
    else return false;
  } else if constexpr (Op == UnaryOp::kIsInf) {
    if constexpr (rules::kIsFloat<C>) return std::isinf(x);
    else return false;
  } else if constexpr (Op == UnaryOp::kIsFinite) {
    if constexpr (rules::kIsFloat<C>) return std::isfinite(x);
    else return true;
  } else {
    static_assert(Op == UnaryOp::kReciprocal);
    return C{1} / x;
  }
}

// Each kernel is built for plain x86-64 and for the AVX2 and AVX-512 levels;
// the loader picks the best the CPU has. The clones compute the same bits
// (IEEE operations, no FMA contraction), only more lanes at a time.
// Sanitizer builds keep one version: the loader runs the clones' resolvers
// before the sanitizer's runtime is up, and GCC's TSan crashes there.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
#define SPMD_KERNEL_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define SPMD_KERNEL_CLONES
#endif

template <UnaryOp Op, class T>
SPMD_KERNEL_CLONES void unary_kernel_of(const void* xv, std::int64_t x_stride, void* ov, std::int64_t n) {
  using C = Compute<T>;
  using O = std::conditional_t<is_predicate(Op), bool, T>;
  const T* x = static_cast<const T*>(xv);
  O* out = static_cast<O*>(ov);
  if (x_stride == 0) {
    std::fill_n(out, n, narrow<O>(unary_fn<Op, C>(widen(x[0]))));
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) out[i] = narrow<O>(unary_fn<Op, C>(widen(x[i])));
}

template <UnaryOp Op>
UnaryKernel unary_kernel_for(DType compute) {
  return detail::visit_dtype(compute, [](auto tag) -> UnaryKernel {
    using T = decltype(tag);
    if constexpr (unary_supported<Op, Compute<T>>()) return &unary_kernel_of<Op, T>;
    else return nullptr;
  });
}

template <std::size_t... I>
UnaryKernel unary_kernel_dispatch(UnaryOp op, DType compute, std::index_sequence<I...>) {
  UnaryKernel k = nullptr;
  ((static_cast<UnaryOp>(I) == op ? (k = unary_kernel_for<static_cast<UnaryOp>(I)>(compute), true) : false) || ...);
  return k;
}

// ---- binary -------------------------------------------------------------

enum class BinaryKind { kArith, kFloatOnly, kNumeric, kCompare, kLogical, kBitwise };

constexpr BinaryKind binary_kind(BinaryOp op) {
  switch (op) {
    case BinaryOp::kDivide: case BinaryOp::kArctan2:
      return BinaryKind::kFloatOnly;
    case BinaryOp::kFloorDivide: case BinaryOp::kRemainder: case BinaryOp::kPower:
      return BinaryKind::kNumeric;
    case BinaryOp::kEqual: case BinaryOp::kNotEqual: case BinaryOp::kLess: case BinaryOp::kLessEqual:
    case BinaryOp::kGreater: case BinaryOp::kGreaterEqual:
      return BinaryKind::kCompare;
    case BinaryOp::kLogicalAnd: case BinaryOp::kLogicalOr: case BinaryOp::kLogicalXor:
      return BinaryKind::kLogical;
    case BinaryOp::kBitwiseAnd: case BinaryOp::kBitwiseOr: case BinaryOp::kBitwiseXor:
      return BinaryKind::kBitwise;
    default:
      return BinaryKind::kArith;
  }
}

template <BinaryOp Op, class C>
constexpr bool binary_supported() {
  constexpr BinaryKind k = binary_kind(Op);
  if constexpr (k == BinaryKind::kFloatOnly) return rules::kIsFloat<C>;
  if constexpr (k == BinaryKind::kNumeric || Op == BinaryOp::kSubtract) return !std::is_same_v<C, bool>;
  if constexpr (k == BinaryKind::kLogical) return std::is_same_v<C, bool>;
  if constexpr (k == BinaryKind::kBitwise) return !rules::kIsFloat<C>;
  return true;
}

template <BinaryOp Op, class C>
[[gnu::always_inline]] inline auto binary_fn(C a, C b) {
  if constexpr (Op == BinaryOp::kAdd) {
    if constexpr (std::is_same_v<C, bool>) return a || b;
    else if constexpr (rules::kIsInt<C>) return rules::wrap_add(a, b);
    else return static_cast<C>(a + b);
  } else if constexpr (Op == BinaryOp::kSubtract) {
    if constexpr (rules::kIsInt<C>) return rules::wrap_sub(a, b);
    else return static_cast<C>(a - b);
  } else if constexpr (Op == BinaryOp::kMultiply) {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else if constexpr (rules::kIsInt<C>) return rules::wrap_mul(a, b);
    else return static_cast<C>(a * b);
  } else if constexpr (Op == BinaryOp::kDivide) {
    return a / b;
  } else if constexpr (Op == BinaryOp::kFloorDivide) {
    if constexpr (rules::kIsInt<C>) return rules::int_floor_divide(a, b);
    else return rules::float_floor_divide(a, b);
  } else if constexpr (Op == BinaryOp::kRemainder) {
    if constexpr (rules::kIsInt<C>) return rules::int_remainder(a, b);
    else return rules::float_remainder(a, b);
  } else if constexpr (Op == BinaryOp::kPower) {
    if constexpr (rules::kIsInt<C>) return rules::int_power(a, b);
    else return std::pow(a, b);
  } else if constexpr (Op == BinaryOp::kMaximum) {
    if constexpr (rules::kIsFloat<C>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    return a < b ? b : a;
  } else if constexpr (Op == BinaryOp::kMinimum) {
    if constexpr (rules::kIsFloat<C>) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
    }
    return b < a ? b : a;
  } else if constexpr (Op == BinaryOp::kEqual) {
    return a == b;
  } else if constexpr (Op == BinaryOp::kNotEqual) {
    return a != b;
  } else if constexpr (Op == BinaryOp::kLess) {
    return a < b;
  } else if constexpr (Op == BinaryOp::kLessEqual) {
    return a <= b;
  } else if constexpr (Op == BinaryOp::kGreater) {
    return a > b;
  } else if constexpr (Op == BinaryOp::kGreaterEqual) {
    return a >= b;
  } else if constexpr (Op == BinaryOp::kLogicalAnd) {
    return a && b;
  } else if constexpr (Op == BinaryOp::kLogicalOr) {
    return a || b;
  } else if constexpr (Op == BinaryOp::kLogicalXor) {
    return a != b;
  } else if constexpr (Op == BinaryOp::kBitwiseAnd) {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else return static_cast<C>(a & b);
  } else if constexpr (Op == BinaryOp::kBitwiseOr) {
    if constexpr (std::is_same_v<C, bool>) return a || b;
    else return static_cast<C>(a | b);
  } else if constexpr (Op == BinaryOp::kBitwiseXor) {
    if constexpr (std::is_same_v<C, bool>) return a != b;
    else return static_cast<C>(a ^ b);
  } else {
    static_assert(Op == BinaryOp::kArctan2);
    return std::atan2(a, b);
  }
}

template <BinaryOp Op, class T>
SPMD_KERNEL_CLONES void binary_kernel_of(const void* av, std::int64_t sa, const void* bv, std::int64_t sb, void* ov,
                                         std::int64_t n) {
  using C = Compute<T>;
  using O = std::conditional_t<binary_kind(Op) == BinaryKind::kCompare, bool, T>;
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  O* out = static_cast<O*>(ov);
  auto fn = [](C x, C y) { return narrow<O>(binary_fn<Op, C>(x, y)); };
  // The common stride patterns get loops the compiler can vectorize.
  if (sa == 1 && sb == 1) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = fn(widen(a[i]), widen(b[i]));
  } else if (sa == 0 && sb == 1) {
    const C av0 = widen(a[0]);
    for (std::int64_t i = 0; i < n; ++i) out[i] = fn(av0, widen(b[i]));
  } else if (sa == 1 && sb == 0) {
    const C bv0 = widen(b[0]);
    for (std::int64_t i = 0; i < n; ++i) out[i] = fn(widen(a[i]), bv0);
  } else if (sa == 0 && sb == 0) {
    std::fill_n(out, n, fn(widen(a[0]), widen(b[0])));
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = fn(widen(a[i * sa]), widen(b[i * sb]));
  }
}

template <BinaryOp Op>
BinaryKernel binary_kernel_for(DType compute) {
  return detail::visit_dtype(compute, [](auto tag) -> BinaryKernel {
    using T = decltype(tag);
    if constexpr (binary_supported<Op, Compute<T>>()) return &binary_kernel_of<Op, T>;
    else return nullptr;
  });
}

template <std::size_t... I>
BinaryKernel binary_kernel_dispatch(BinaryOp op, DType compute, std::index_sequence<I...>) {
  BinaryKernel k = nullptr;
  ((static_cast<BinaryOp>(I) == op ? (k = binary_kernel_for<static_cast<BinaryOp>(I)>(compute), true) : false) ||
   ...);
  return k;
}

template <class T>
SPMD_KERNEL_CLONES void select_kernel_of(const bool* c, std::int64_t sc, const void* xv, std::int64_t sx,
                                         const void* yv, std::int64_t sy, void* ov, std::int64_t n) {
  const T* x = static_cast<const T*>(xv);
  const T* y = static_cast<const T*>(yv);
  T* out = static_cast<T*>(ov);
  if (sc == 1 && sx == 1 && sy == 1) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : y[i];
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = c[i * sc] ? x[i * sx] : y[i * sy];
  }
}

template <class S, class D>
SPMD_KERNEL_CLONES void convert_kernel_of(const void* xv, std::int64_t sx, void* ov, std::int64_t n) {
  const S* x = static_cast<const S*>(xv);
  D* out = static_cast<D*>(ov);
  if (sx == 0) {
    std::fill_n(out, n, narrow<D>(widen(x[0])));
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) out[i] = narrow<D>(widen(x[i]));
}

std::string dtypes_of(DType a, DType b) { return std::string(dtype_name(a)) + " and " + std::string(dtype_name(b)); }

constexpr std::size_t kNumUnaryOps = static_cast<std::size_t>(UnaryOp::kRoundAwayFromZero) + 1;
constexpr std::size_t kNumBinaryOps = static_cast<std::size_t>(BinaryOp::kArctan2) + 1;

}  // namespace

std::string_view op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNegative: return "negative";
    case UnaryOp::kPositive: return "positive";
    case UnaryOp::kAbs: return "abs";
    case UnaryOp::kSign: return "sign";
    case UnaryOp::kExp: return "exp";
    case UnaryOp::kLog: return "log";
    case UnaryOp::kLog1p: return "log1p";
    case UnaryOp::kExpm1: return "expm1";
    case UnaryOp::kSqrt: return "sqrt";
    case UnaryOp::kRsqrt: return "rsqrt";
    case UnaryOp::kSquare: return "square";
    case UnaryOp::kSin: return "sin";
    case UnaryOp::kCos: return "cos";
    case UnaryOp::kTan: return "tan";
    case UnaryOp::kTanh: return "tanh";
    case UnaryOp::kSinh: return "sinh";
    case UnaryOp::kCosh: return "cosh";
    case UnaryOp::kArcsin: return "arcsin";
    case UnaryOp::kArccos: return "arccos";
    case UnaryOp::kArctan: return "arctan";
    case UnaryOp::kLogistic: return "logistic";
    case UnaryOp::kFloor: return "floor";
    case UnaryOp::kCeil: return "ceil";
    case UnaryOp::kRound: return "round";
    case UnaryOp::kLogicalNot: return "logical_not";
    case UnaryOp::kBitwiseNot: return "bitwise_not";
    case UnaryOp::kIsNan: return "isnan";
    case UnaryOp::kIsInf: return "isinf";
    case UnaryOp::kIsFinite: return "isfinite";
    case UnaryOp::kReciprocal: return "reciprocal";
    case UnaryOp::kRoundAwayFromZero: return "round";
  }
  return "unary";
}

std::string_view op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "add";
    case BinaryOp::kSubtract: return "subtract";
    case BinaryOp::kMultiply: return "multiply";
    case BinaryOp::kDivide: return "divide";
    case BinaryOp::kFloorDivide: return "floor_divide";
    case BinaryOp::kRemainder: return "remainder";
    case BinaryOp::kPower: return "power";
    case BinaryOp::kMaximum: return "maximum";
    case BinaryOp::kMinimum: return "minimum";
    case BinaryOp::kEqual: return "equal";
    case BinaryOp::kNotEqual: return "not_equal";
    case BinaryOp::kLess: return "less";
    case BinaryOp::kLessEqual: return "less_equal";
    case BinaryOp::kGreater: return "greater";
    case BinaryOp::kGreaterEqual: return "greater_equal";
    case BinaryOp::kLogicalAnd: return "logical_and";
    case BinaryOp::kLogicalOr: return "logical_or";
    case BinaryOp::kLogicalXor: return "logical_xor";
    case BinaryOp::kBitwiseAnd: return "bitwise_and";
    case BinaryOp::kBitwiseOr: return "bitwise_or";
    case BinaryOp::kBitwiseXor: return "bitwise_xor";
    case BinaryOp::kArctan2: return "arctan2";
  }
  return "binary";
}

namespace detail {

ElementwiseTypes unary_types(UnaryOp op, DType dt, bool weak, const Shape& shape) {
  const std::string name(op_name(op));
  if (dt == DType::kBool && (op == UnaryOp::kNegative || op == UnaryOp::kSign)) {
    throw_invalid_argument("TypeError",
                           name + ": not supported for bool operands (got bool" + shape_to_string(shape) + ")",
                           op == UnaryOp::kNegative ? "use logical_not for booleans, or cast with astype(int32) first"
                                                    : "cast with astype(int32) first");
  }
  if (is_floating(dt) && op == UnaryOp::kBitwiseNot) {
    throw_invalid_argument("TypeError",
                           name + ": requires an integer or boolean operand, got " + std::string(dtype_name(dt)),
                           "bitwise ops are defined on bool and integer dtypes; use logical_not for truth values or "
                           "cast with astype(int32)");
  }
  DType compute = dt;
  if (is_float_only(op) && !is_floating(dt)) compute = kDefaultFloat;
  if (op == UnaryOp::kSquare && dt == DType::kBool) compute = kDefaultInt;
  if (is_predicate(op)) return {compute, DType::kBool, false};
  return {compute, compute, weak};
}

ElementwiseTypes binary_types(BinaryOp op, DType a, bool a_weak, DType b, bool b_weak) {
  const std::string name(op_name(op));
  PromotedType p = promote_weak(a, a_weak, b, b_weak);
  ElementwiseTypes t{p.dtype, p.dtype, p.weak};
  switch (binary_kind(op)) {
    case BinaryKind::kArith:
      if (op == BinaryOp::kSubtract && t.compute == DType::kBool) {
        throw_invalid_argument("TypeError", name + ": boolean subtract is not supported (got " + dtypes_of(a, b) + ")",
                               "use logical_xor (or bitwise_xor) for booleans, or cast with astype(int32) first");
      }
      break;
    case BinaryKind::kFloatOnly:
      if (!is_floating(t.compute)) t.compute = t.out = kDefaultFloat;
      break;
    case BinaryKind::kNumeric:
      if (t.compute == DType::kBool) t.compute = t.out = kDefaultInt;
      break;
    case BinaryKind::kCompare:
      t.out = DType::kBool;
      t.weak = false;
      break;
    case BinaryKind::kLogical:
      t.compute = t.out = DType::kBool;
      t.weak = false;
      break;
    case BinaryKind::kBitwise:
      if (is_floating(t.compute)) {
        throw_invalid_argument(
            "TypeError", name + ": requires integer or boolean operands, got " + dtypes_of(a, b),
            "bitwise ops are defined on bool and integer dtypes; cast with astype(int32), or use the logical_* op "
            "for truth values");
      }
      break;
  }
  return t;
}

ElementwiseTypes select_types(DType x, bool x_weak, DType y, bool y_weak) {
  PromotedType p = promote_weak(x, x_weak, y, y_weak);
  return {p.dtype, p.dtype, p.weak};
}

UnaryKernel unary_kernel(UnaryOp op, DType compute) {
  return unary_kernel_dispatch(op, compute, std::make_index_sequence<kNumUnaryOps>{});
}

BinaryKernel binary_kernel(BinaryOp op, DType compute) {
  return binary_kernel_dispatch(op, compute, std::make_index_sequence<kNumBinaryOps>{});
}

SelectKernel select_kernel(DType dtype) {
  return visit_dtype(dtype, [](auto tag) -> SelectKernel { return &select_kernel_of<decltype(tag)>; });
}

ConvertKernel convert_kernel(DType from, DType to) {
  return visit_dtype(from, [to](auto src_tag) {
    return visit_dtype(to, [](auto dst_tag) -> ConvertKernel {
      return &convert_kernel_of<decltype(src_tag), decltype(dst_tag)>;
    });
  });
}

}  // namespace detail

namespace {

// A contiguous kernel over whole arrays, in parallel chunks.
template <class Kernel>
void run_contiguous(std::int64_t n, std::size_t in_size, const void* in, std::size_t out_size, void* out,
                    Kernel kernel) {
  detail::parallel_elements(n, [&](std::int64_t b, std::int64_t e) {
    kernel(static_cast<const std::byte*>(in) + b * static_cast<std::int64_t>(in_size), std::int64_t{1},
           static_cast<std::byte*>(out) + b * static_cast<std::int64_t>(out_size), e - b);
  });
}

}  // namespace

Array unary(UnaryOp op, const Array& x) {
  const std::string name(op_name(op));
  check_placement(x, name);
  const detail::ElementwiseTypes t = detail::unary_types(op, x.dtype(), x.weak_type(), x.shape());
  Array in = detail::converted(x, t.compute, name);
  Array out = Array::uninitialized(x.shape(), t.out, name);
  if (detail::DeviceOps* ops = detail::placement_ops(name)) {
    Array din = detail::in_placement_memory(in, name);
    if (out.size() > 0) {
      ops->unary(detail::placement_device(), op, detail::operand(din), detail::output(out), out.size());
    }
    return out.with_weak_type(t.weak);
  }
  if (out.size() > 0) {
    run_contiguous(out.size(), dtype_size(t.compute), in.raw_data(), dtype_size(t.out), out.mutable_raw_data(),
                   detail::unary_kernel(op, t.compute));
  }
  return out.with_weak_type(t.weak);
}

Array binary(BinaryOp op, const Array& a, const Array& b) {
  const std::string name(op_name(op));
  check_placement(a, name);
  check_placement(b, name);
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  const detail::ElementwiseTypes t = detail::binary_types(op, a.dtype(), a.weak_type(), b.dtype(), b.weak_type());
  Array ca = detail::converted(a, t.compute, name);
  Array cb = detail::converted(b, t.compute, name);
  Array out = Array::uninitialized(shape, t.out, name);
  if (detail::DeviceOps* ops = detail::placement_ops(name)) {
    Array da = detail::in_placement_memory(ca, name);
    Array db = detail::in_placement_memory(cb, name);
    if (out.size() > 0) {
      ops->binary(detail::placement_device(), op, detail::operand(da), detail::broadcast_strides(da.shape(), shape),
                  detail::operand(db), detail::broadcast_strides(db.shape(), shape), detail::output(out), shape);
    }
    return out.with_weak_type(t.weak);
  }
  if (out.size() == 0) return out.with_weak_type(t.weak);
  auto loop = detail::make_strided_loop<3>(
      shape, {row_major_strides(shape), detail::broadcast_strides(ca.shape(), shape),
              detail::broadcast_strides(cb.shape(), shape)});
  const detail::BinaryKernel kernel = detail::binary_kernel(op, t.compute);
  const auto in_size = static_cast<std::int64_t>(dtype_size(t.compute));
  const auto out_size = static_cast<std::int64_t>(dtype_size(t.out));
  const auto* pa = static_cast<const std::byte*>(ca.raw_data());
  const auto* pb = static_cast<const std::byte*>(cb.raw_data());
  auto* po = static_cast<std::byte*>(out.mutable_raw_data());
  detail::parallel_elements(loop.size, [&](std::int64_t begin, std::int64_t end) {
    detail::walk_strided<3>(
        loop, {0, 0, 0}, begin, end,
        [&](const std::array<std::int64_t, 3>& off, std::int64_t n, const std::array<std::int64_t, 3>& s) {
          kernel(pa + off[1] * in_size, s[1], pb + off[2] * in_size, s[2], po + off[0] * out_size, n);
        });
  });
  return out.with_weak_type(t.weak);
}

Array where(const Array& cond, const Array& x, const Array& y) {
  check_placement(cond, "where");
  check_placement(x, "where");
  check_placement(y, "where");
  Shape shape;
  try {
    shape = broadcast_shapes(broadcast_shapes(cond.shape(), x.shape(), "where"), y.shape(), "where");
  } catch (const ShapeError&) {
    throw_shape_error("where", "condition, x and y do not broadcast: " + shape_to_string(cond.shape()) + ", " +
                                   shape_to_string(x.shape()) + ", " + shape_to_string(y.shape()),
                      "each trailing dimension must be equal or 1 across the three operands");
  }
  const detail::ElementwiseTypes t = detail::select_types(x.dtype(), x.weak_type(), y.dtype(), y.weak_type());
  Array c = detail::converted(cond, DType::kBool, "where");
  Array cx = detail::converted(x, t.compute, "where");
  Array cy = detail::converted(y, t.compute, "where");
  Array out = Array::uninitialized(shape, t.out, "where");
  if (out.size() == 0) return out.with_weak_type(t.weak);
  if (detail::DeviceOps* ops = detail::placement_ops("where")) {
    Array dc = detail::in_placement_memory(c, "where");
    Array dx = detail::in_placement_memory(cx, "where");
    Array dy = detail::in_placement_memory(cy, "where");
    ops->where(detail::placement_device(), detail::operand(dc), detail::broadcast_strides(dc.shape(), shape),
               detail::operand(dx), detail::broadcast_strides(dx.shape(), shape), detail::operand(dy),
               detail::broadcast_strides(dy.shape(), shape), detail::output(out), shape);
    return out.with_weak_type(t.weak);
  }
  auto loop = detail::make_strided_loop<4>(
      shape, {row_major_strides(shape), detail::broadcast_strides(c.shape(), shape),
              detail::broadcast_strides(cx.shape(), shape), detail::broadcast_strides(cy.shape(), shape)});
  const detail::SelectKernel kernel = detail::select_kernel(t.compute);
  const auto size = static_cast<std::int64_t>(dtype_size(t.compute));
  const bool* pc = c.data<bool>();
  const auto* px = static_cast<const std::byte*>(cx.raw_data());
  const auto* py = static_cast<const std::byte*>(cy.raw_data());
  auto* po = static_cast<std::byte*>(out.mutable_raw_data());
  detail::parallel_elements(loop.size, [&](std::int64_t begin, std::int64_t end) {
    detail::walk_strided<4>(
        loop, {0, 0, 0, 0}, begin, end,
        [&](const std::array<std::int64_t, 4>& off, std::int64_t n, const std::array<std::int64_t, 4>& s) {
          kernel(pc + off[1], s[1], px + off[2] * size, s[2], py + off[3] * size, s[3], po + off[0] * size, n);
        });
  });
  return out.with_weak_type(t.weak);
}

Array clip(const Array& x, const Array& lo, const Array& hi) {
  check_placement(x, "clip");
  if (lo.valid()) check_placement(lo, "clip");
  if (hi.valid()) check_placement(hi, "clip");
  Array out = x;
  if (lo.valid()) out = binary(BinaryOp::kMaximum, out, lo);
  if (hi.valid()) out = binary(BinaryOp::kMinimum, out, hi);
  if (!lo.valid() && !hi.valid()) out = astype(x, x.dtype()).with_weak_type(x.weak_type());
  return out;
}

Array astype(const Array& x, DType dtype) {
  check_placement(x, "astype");
  Array out = Array::uninitialized(x.shape(), dtype, "astype");
  const std::int64_t n = x.size();
  if (detail::DeviceOps* ops = detail::placement_ops("astype")) {
    Array dx = detail::in_placement_memory(x, "astype");
    if (n > 0) ops->astype(detail::placement_device(), detail::operand(dx), detail::output(out), n);
    return out;
  }
  if (n > 0) {
    run_contiguous(n, dtype_size(x.dtype()), x.raw_data(), dtype_size(dtype), out.mutable_raw_data(),
                   detail::convert_kernel(x.dtype(), dtype));
  }
  return out;
}

}  // namespace spmd
