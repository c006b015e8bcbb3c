#pragma once
// The scenario lexer: Python's tokenizer (indentation, implicit line joining,
// string and number literals). Errors throw spmd::SyntaxError with the position.

#include <string_view>
#include <vector>

#include "scenario/source_text.h"
#include "scenario/token.h"
#include "util/utf8.h"

namespace spmd::scenario {

/// Brackets may nest this deep before "too many nested parentheses".
inline constexpr int kMaxBracketDepth = 100;
/// Indentation levels allowed before "too many levels of indentation".
inline constexpr int kMaxIndentDepth = 100;

/// Tokenizes a whole file: NEWLINE / INDENT / DEDENT tokens, then kEnd.
std::vector<Token> tokenize(const SourceText& src);

/// Tokenizes an expression embedded in an f-string: `text` starts at `start`
/// in the file; newlines are insignificant; ends with kEnd.
std::vector<Token> tokenize_expression(const SourceText& src, std::string_view text, Pos start);

/// Decodes the backslash escapes of a (non-raw) string body. `pos` is where
/// the body starts, for error positions.
std::string decode_escapes(const SourceText& src, std::string_view body, Pos pos);

using spmd::utf8_length;
using spmd::append_utf8;

}  // namespace spmd::scenario
