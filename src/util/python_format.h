#pragma once
// Python's text conversions that both front ends need where no Python runs
// (a device executing a traced jax.debug.print): float repr and format specs.
// A bad spec throws InvalidArgument of kind "ValueError" with CPython's text.

#include <cstdint>
#include <string>
#include <string_view>

namespace spmd {

/// The largest width or precision a format spec may give (CPython accepts
/// up to 2^63 and then runs out of memory). jax.debug.print checks the same
/// bound on the host.
inline constexpr int kMaxFormatWidth = 1'000'000;

/// repr(float): shortest round-trip digits, "5.0", "0.1", "1e-05", "inf".
std::string float_repr(double d);
/// format(v, spec) for a Python int, float or str.
std::string format_int_spec(std::int64_t v, std::string_view spec);
std::string format_float_spec(double v, std::string_view spec);
std::string format_str_spec(const std::string& s, std::string_view spec);
/// The presentation type of `spec` ('f', 'd', 's', ...; 0 when none), or
/// the error formatting would throw for an invalid spec.
char format_spec_type(std::string_view spec);

}  // namespace spmd
