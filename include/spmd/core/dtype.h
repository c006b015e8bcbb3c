#pragma once
/// \file
/// Element types of an Array, with JAX's names and promotion rules.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace spmd {

enum class DType : std::uint8_t { kBool, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64 };

inline constexpr int kNumDTypes = 7;

/// "bool", "int32", "int64", "float16", "bfloat16", "float32", "float64".
std::string_view dtype_name(DType t);
/// JAX's abstract-value spelling: "bool", "i32", "i64", "f16", "bf16", "f32", "f64".
std::string_view dtype_short_name(DType t);
/// Accepts both spellings above, plus "float"/"int" (float32 / int32) and "bfloat16".
std::optional<DType> parse_dtype(std::string_view name);

std::size_t dtype_size(DType t);
bool is_floating(DType t);   ///< float16, bfloat16, float32, float64
bool is_integer(DType t);    ///< int32, int64 (not bool)

/// jnp.promote_types for two strongly-typed dtypes:
/// bool < int32 < int64 < float16/bfloat16 < float32 < float64, with
/// float16 + bfloat16 -> float32 and any int + any float -> that float.
DType promote_types(DType a, DType b);

/// Promotion where either side may be weakly typed (a Python scalar):
/// a weak operand adopts the other side's type when its kind fits
/// (weak int + float16 -> float16), and lifts it to the default of its own
/// kind otherwise (weak float + int32 -> float32). Returns the dtype and
/// whether the result is weak.
struct PromotedType {
  DType dtype;
  bool weak;
};
PromotedType promote_weak(DType a, bool a_weak, DType b, bool b_weak);

inline constexpr DType kDefaultInt = DType::kInt32;
inline constexpr DType kDefaultFloat = DType::kFloat32;

}  // namespace spmd
