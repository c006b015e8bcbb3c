#pragma once
// Helpers for native (C++) functions: argument binding with Python's error
// messages, and conversions between Values and core types that apply JAX's
// rules (traced arrays cannot become Python values inside pmap).

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/interpreter.h"
#include "scenario/objects.h"
#include "scenario/value.h"
#include "spmd/collectives/axis_set.h"
#include "spmd/core/array.h"
#include "spmd/core/layout.h"

namespace spmd::scenario {

/// Binds call arguments to named parameters, like a Python signature.
///   Args a(c, args, {"x", "axis_name", "axis_index_groups"}, 2);
/// Parameters after `max_positional` are keyword-only. Missing optional
/// parameters are undefined Values (`has(i)` is false).
class Args {
 public:
  Args(NativeCall& c, CallArgs& args, std::initializer_list<const char*> names, std::size_t required,
       std::size_t max_positional = static_cast<std::size_t>(-1));
  const Value& operator[](std::size_t i) const { return values_[i]; }
  /// Given and not None.
  bool has(std::size_t i) const { return !values_[i].is_undefined() && !values_[i].is_none(); }
  bool given(std::size_t i) const { return !values_[i].is_undefined(); }

 private:
  std::vector<Value> values_;
};

/// Raises TypeError if any positional or keyword arguments were given (for
/// natives taking none).
void no_args(NativeCall& c, const CallArgs& args);

// --- tracer checks ------------------------------------------------------------

/// True when `a` is abstract here (a device array inside a traced pmap).
bool is_traced(const ExecState& st, const Array& a);
/// "float32[4,10]" (JAX's aval spelling in error messages).
std::string aval_string(const Array& a);
/// "Traced<float32[10]>with<DynamicJaxprTrace>".
std::string traced_repr(const Array& a);
[[noreturn]] void raise_concretization(const ExecState& st, const Array& a, std::string_view problem);
[[noreturn]] void raise_tracer_bool(const ExecState& st, const Array& a);

// --- conversions --------------------------------------------------------------

/// Python int from an int/bool, or a concrete integer array of size 1.
std::int64_t to_int(const ExecState& st, const Value& v, std::string_view what);
/// Python float from a number or a concrete size-1 array.
double to_float(const ExecState& st, const Value& v, std::string_view what);
std::string to_str(const Value& v, std::string_view what);
/// An Array from an array, a Python scalar (weakly typed, JAX's rule), or
/// nested lists/tuples of those. `dtype` overrides the inferred type.
Array to_array(ExecState& st, const Value& v, std::optional<DType> dtype = std::nullopt);
/// Like to_array but the result is always an Array value (arrays pass through).
Value array_value(Array a);
/// A shape from an int or a tuple/list of ints (static values only).
Shape to_shape(const ExecState& st, const Value& v, std::string_view what);
/// Axes from None (all), an int, or a tuple of ints.
std::optional<std::vector<int>> to_axes(const ExecState& st, const Value& v, std::string_view what);
std::optional<int> to_optional_axis(const ExecState& st, const Value& v, std::string_view what);
/// A dtype from jnp.float32, float, int, bool, or a name such as 'float32'.
DType to_dtype(const Value& v);
std::optional<DType> to_optional_dtype(const Value& v);
/// An axis name from 'i' or ('i', 'j').
AxisSet to_axis_set(const Value& v, std::string_view what);
AxisIndexGroups to_groups(const ExecState& st, const Value& v);
/// A Python value from a size-1 array (bool, int or float by dtype).
Value array_to_scalar(const Array& a);
/// numpy index items from a Python index (int, slice, None, Ellipsis, tuples).
/// Sets `take_index` / `take_axis` when the index contains one integer array
/// (gathered with jnp.take).
std::vector<IndexItem> to_index(ExecState& st, const Array& x, const Value& index, Array* take_index, int* take_axis);
/// Tuple of Python ints.
Value shape_value(const Shape& s);

/// Python's truthiness of a non-array value (numbers, containers, None...).
bool python_truthy(const Value& v);

}  // namespace spmd::scenario
