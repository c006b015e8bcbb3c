#pragma once
// Tokens of the scenario language (Python's lexical structure).

#include <cstdint>
#include <string>

namespace spmd::scenario {

/// A position in a scenario file: 1-based line, 1-based column in code points.
struct Pos {
  std::uint32_t line = 0;
  std::uint32_t col = 0;
};

enum class TokenKind : std::uint8_t {
  kName,     ///< identifier or keyword
  kNumber,   ///< int or float literal
  kString,   ///< one string literal (adjacent literals are joined by the parser)
  kOp,       ///< operator or delimiter
  kNewline,  ///< end of a logical line
  kIndent,
  kDedent,
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  ///< name, operator, decoded string value, or raw f-string body
  Pos pos;           ///< first character
  Pos end;           ///< one past the last character
  // numbers
  bool is_float = false;
  std::int64_t int_value = 0;
  double float_value = 0;
  // strings
  bool is_fstring = false;
  bool is_raw = false;
  Pos body_pos;  ///< first character after the opening quote (f-strings)

  bool is_op(const char* op) const { return kind == TokenKind::kOp && text == op; }
  bool is_name(const char* name) const { return kind == TokenKind::kName && text == name; }
};

/// Python's reserved words (soft keywords such as `match` are not included).
bool is_keyword(const std::string& name);

}  // namespace spmd::scenario
