#pragma once
/// \file
/// Elementwise ops with numpy broadcasting and JAX type promotion.
///
/// Each op checks that its operands are placed on the calling device (or the
/// host) and throws ShapeError naming the op and both shapes when they do not
/// broadcast. Integer division by zero never traps: x // 0 == 0 and
/// x % 0 == 0 for integers (numpy's result, without its warning; raw XLA
/// division would give -1). INT_MIN // -1 wraps to INT_MIN. Float
/// floor_divide / remainder follow jnp (Python signs; x // 0.0 and
/// x % 0.0 are nan). Integer arithmetic wraps (two's complement), as XLA.
///
/// Bool operands: add/maximum act as `or`, multiply/minimum as `and`;
/// floor_divide/remainder/power/square compute in int32; subtract, negative
/// and sign of bools throw InvalidArgument (kind "TypeError"), as numpy does.
/// float16/bfloat16 are computed in float32 and rounded once on store.

#include <string_view>

#include "spmd/core/array.h"

namespace spmd {

enum class UnaryOp {
  kNegative, kPositive, kAbs, kSign, kExp, kLog, kLog1p, kExpm1, kSqrt, kRsqrt, kSquare,
  kSin, kCos, kTan, kTanh, kSinh, kCosh, kArcsin, kArccos, kArctan, kLogistic,
  kFloor, kCeil, kRound, kLogicalNot, kBitwiseNot, kIsNan, kIsInf, kIsFinite, kReciprocal,
  kRoundAwayFromZero,  ///< halves away from zero (lax.round's default); kRound takes them to even (np.round)
};

enum class BinaryOp {
  kAdd, kSubtract, kMultiply, kDivide, kFloorDivide, kRemainder, kPower, kMaximum, kMinimum,
  kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual,
  kLogicalAnd, kLogicalOr, kLogicalXor, kBitwiseAnd, kBitwiseOr, kBitwiseXor, kArctan2,
};

/// jnp spelling: "negative", "add", "true_divide" is "divide", ...
std::string_view op_name(UnaryOp op);
std::string_view op_name(BinaryOp op);

/// Result dtype rules (JAX): comparisons and logical ops give bool;
/// divide, and float-only unary ops (exp, sqrt, ...) on ints give float32;
/// logical_not on non-bool compares with zero; bitwise ops need bool/int
/// (floats throw InvalidArgument, kind "TypeError"). Weak operands: the
/// result is weak only when both are (comparisons and logical ops never).
/// Integer power with a negative exponent is 0, except for bases 1 and -1.
Array unary(UnaryOp op, const Array& x);
Array binary(BinaryOp op, const Array& a, const Array& b);

/// jnp.where(cond, x, y) with three-way broadcasting; cond is converted to bool.
Array where(const Array& cond, const Array& x, const Array& y);
/// jnp.clip(x, lo, hi); either bound may be a null Array (no bound).
Array clip(const Array& x, const Array& lo, const Array& hi);
/// x.astype(dtype): float->int truncates toward zero; ->bool is x != 0.
Array astype(const Array& x, DType dtype);

inline Array operator+(const Array& a, const Array& b) { return binary(BinaryOp::kAdd, a, b); }
inline Array operator-(const Array& a, const Array& b) { return binary(BinaryOp::kSubtract, a, b); }
inline Array operator*(const Array& a, const Array& b) { return binary(BinaryOp::kMultiply, a, b); }
inline Array operator/(const Array& a, const Array& b) { return binary(BinaryOp::kDivide, a, b); }
inline Array operator-(const Array& a) { return unary(UnaryOp::kNegative, a); }

}  // namespace spmd
