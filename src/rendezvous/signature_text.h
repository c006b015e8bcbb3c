#pragma once
// A collective signature's text read back: the inverse of
// CollectiveSignature::operand_types() and params(), for signatures that
// travel as text (traces, another process's store files).

#include <string>

#include "rendezvous/collective_signature.h"

namespace spmd::detail {

/// "f32[4,8]" -> {float32, (4, 8)}; false when malformed.
bool parse_operand_type(const std::string& text, OperandType& out);
/// Inverse of CollectiveSignature::params(); false when malformed.
bool parse_params(const std::string& text, CollectiveSignature& sig);

}  // namespace spmd::detail
