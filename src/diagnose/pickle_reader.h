#pragma once
// A reader for the plain-data subset of Python's pickle format (protocols 0
// to 5): dicts, lists, tuples, strings, bytes, ints, floats, bools and None,
// with the memo. That is everything a PyTorch flight-recorder dump holds.
// Anything that would call into Python (GLOBAL, REDUCE, BUILD, persistent
// ids, ...) is refused, so a hostile file cannot run code; it is read as
// data or rejected, never executed.

#include <string>
#include <string_view>

#include "spmd/util/json.h"

namespace spmd::detail {

/// The value `bytes` pickles, as JSON (tuples become arrays; dict keys that
/// are not strings are written as their JSON text). Throws SyntaxError
/// naming `source` and the byte offset for a truncated or malformed pickle,
/// an opcode outside the subset, or a value that expands past a bound.
Json read_pickle(std::string_view bytes, const std::string& source);

}  // namespace spmd::detail
