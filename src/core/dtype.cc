#include "spmd/core/dtype.h"

#include <array>

namespace spmd {

namespace {
struct DTypeInfo {
  std::string_view name;
  std::string_view short_name;
  std::size_t size;
};
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"bool", "bool", 1},
    {"int32", "i32", 4},
    {"int64", "i64", 8},
    {"float16", "f16", 2},
    {"bfloat16", "bf16", 2},
    {"float32", "f32", 4},
    {"float64", "f64", 8},
}};
const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }

// Position on JAX's promotion lattice for the simple chain; float16/bfloat16
// share a rank and meet at float32.
int rank(DType t) {
  switch (t) {
    case DType::kBool: return 0;
    case DType::kInt32: return 1;
    case DType::kInt64: return 2;
    case DType::kFloat16:
    case DType::kBFloat16: return 3;
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 5;
  }
  return 0;
}

enum class Kind { kBool, kInt, kFloat };
Kind kind_of(DType t) {
  if (t == DType::kBool) return Kind::kBool;
  return is_integer(t) ? Kind::kInt : Kind::kFloat;
}
}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_short_name(DType t) { return info(t).short_name; }
std::size_t dtype_size(DType t) { return info(t).size; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kInfo[i].name == name || kInfo[i].short_name == name) return static_cast<DType>(i);
  }
  if (name == "float" || name == "float_") return DType::kFloat32;
  if (name == "int" || name == "int_") return DType::kInt32;
  if (name == "bool_") return DType::kBool;
  return std::nullopt;
}

bool is_floating(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 || t == DType::kFloat64;
}
bool is_integer(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::kFloat16 && b == DType::kBFloat16) || (a == DType::kBFloat16 && b == DType::kFloat16)) {
    return DType::kFloat32;
  }
  return rank(a) >= rank(b) ? a : b;
}

PromotedType promote_weak(DType a, bool a_weak, DType b, bool b_weak) {
  if (a_weak == b_weak) return {promote_types(a, b), a_weak};
  DType weak = a_weak ? a : b;
  DType strong = a_weak ? b : a;
  // A weak operand of a kind no higher than the strong one adopts its dtype.
  if (kind_of(weak) <= kind_of(strong)) return {strong, false};
  // Otherwise the result takes the default dtype of the weak operand's kind,
  // and stays weak (JAX's lattice: int32 * 1.5 is a weak float32).
  return {kind_of(weak) == Kind::kFloat ? kDefaultFloat : kDefaultInt, true};
}

}  // namespace spmd
