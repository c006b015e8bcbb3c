#pragma once
/// \file
/// numpy-compatible text for arrays, as `print(x)` and `jax.debug.print` show it.

#include <string>

#include "spmd/core/array.h"

namespace spmd {

/// str(x): "[ 6  8 10]", "[[0. 1.]\n [2. 3.]]", "5.0", "True". Follows numpy's
/// rules: shortest round-trip digits per element, common width, scientific
/// notation when the magnitudes span too far, summarised with "..." beyond
/// 1000 elements. float16 uses the shortest digits that round-trip in
/// float16. bfloat16 prints as ml_dtypes does (C++ ostream, 6 significant
/// digits, no padding): "[1 2.5 0.100098]".
std::string to_string(const Array& x);

/// repr(x) as JAX prints it: "Array([ 6,  8, 10], dtype=int32)",
/// "Array(5., dtype=float32)", with ", weak_type=True" for weak scalars.
std::string repr(const Array& x);

/// One element formatted as Python would print the scalar (e.g. "0.1", "3", "True").
std::string format_scalar(const Array& x, std::int64_t flat);

}  // namespace spmd
