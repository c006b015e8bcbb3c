#pragma once
// Python's built-in types as values (`int`, `list`, exception classes) and
// helpers the other native modules share.

#include <string>

#include "scenario/value.h"

namespace spmd::scenario {

/// The canonical type object of values of kind `k` (type(x) returns these).
Value builtin_type(Kind k);
/// The exception class `name` (ValueError, ...); undefined if unknown.
Value exception_class(const std::string& name);
/// The type object jnp.ndarray / jax.Array.
Value array_type();
/// isinstance(v, cls) for one class.
bool is_instance(const Value& v, const Value& cls);

}  // namespace spmd::scenario
