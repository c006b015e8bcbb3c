#include "scenario/lexer.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <string>

#include "scenario/python_errors.h"

namespace spmd::scenario {

namespace {

constexpr std::array<const char*, 35> kKeywords = {
    "False", "None",   "True",    "and",      "as",     "assert", "async", "await",  "break",
    "class", "continue", "def",   "del",      "elif",   "else",   "except", "finally", "for",
    "from",  "global", "if",      "import",   "in",     "is",     "lambda", "nonlocal", "not",
    "or",    "pass",   "raise",   "return",   "try",    "while",  "with",   "yield"};

constexpr std::array<const char*, 5> kOps3 = {"**=", "//=", ">>=", "<<=", "..."};
constexpr std::array<const char*, 19> kOps2 = {"->", ":=", "**", "//", "==", "!=", "<=", ">=", "<<", ">>",
                                               "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="};
constexpr std::string_view kOps1 = "+-*/%@&|^~<>()[]{},:.;=";

bool is_ascii_ident_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ascii_ident_char(unsigned char c) { return is_ascii_ident_start(c) || (c >= '0' && c <= '9'); }

// Punctuation and symbols that Python rejects in identifiers; the full-width
// forms are a frequent slip when typing with a CJK input method.
bool is_invalid_non_ascii(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x206F) ||
         (cp >= 0x2190 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
         (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65) ||
         cp == 0xFEFF;
}

std::string ascii_lookalike(std::uint32_t cp) {
  if (cp >= 0xFF01 && cp <= 0xFF5E) return std::string(1, static_cast<char>(cp - 0xFEE0));
  switch (cp) {
    case 0x3001: return ",";
    case 0x3002: return ".";
    case 0x201C: case 0x201D: return "\"";
    case 0x2018: case 0x2019: return "'";
    case 0x3010: return "[";
    case 0x3011: return "]";
    case 0x300C: case 0x300D: return "\"";
    case 0x00A0: case 0x3000: return " ";
    default: return {};
  }
}

// Decodes the code point at s[i]; sets `len` to its byte length (1 for bad bytes).
std::uint32_t decode_utf8(std::string_view s, std::size_t i, std::size_t& len) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    len = 1;
    return c;
  }
  int n = (c >= 0xF0) ? 4 : (c >= 0xE0) ? 3 : (c >= 0xC0) ? 2 : 1;
  if (n == 1 || i + static_cast<std::size_t>(n) > s.size()) {
    len = 1;
    return c;
  }
  std::uint32_t cp = c & (0x7F >> n);
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
  len = static_cast<std::size_t>(n);
  return cp;
}

std::string codepoint_label(std::uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", cp);
  return buf;
}

class Lexer {
 public:
  Lexer(const SourceText& src, std::string_view text, Pos start, bool expression_mode)
      : src_(src), s_(text), p_(start), expr_mode_(expression_mode) {}

  std::vector<Token> run();

 private:
  bool at_end() const { return i_ >= s_.size(); }
  unsigned char peek(std::size_t k = 0) const {
    return i_ + k < s_.size() ? static_cast<unsigned char>(s_[i_ + k]) : 0;
  }
  void advance() {
    auto c = static_cast<unsigned char>(s_[i_++]);
    if (c == '\n') {
      ++p_.line;
      p_.col = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++p_.col;
    }
  }
  [[noreturn]] void error(Pos pos, std::string message, std::string hint = {}, std::string kind = "SyntaxError") {
    throw_syntax_error(src_, pos, std::move(message), std::move(hint), std::move(kind));
  }
  void emit(Token t) {
    if (t.kind != TokenKind::kNewline && t.kind != TokenKind::kIndent && t.kind != TokenKind::kDedent) {
      pending_line_ = true;
    }
    out_.push_back(std::move(t));
  }
  Token make(TokenKind kind, std::string text, Pos pos) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.pos = pos;
    t.end = p_;
    return t;
  }

  void indentation();
  void newline();
  void name();
  void number();
  void string(std::size_t prefix_len, bool raw, bool fstring, Pos start);
  void op();
  void bad_character();

  const SourceText& src_;
  std::string_view s_;
  std::size_t i_ = 0;
  Pos p_;
  bool expr_mode_;
  bool at_line_start_ = true;
  bool pending_line_ = false;
  std::vector<Token> out_;
  struct Bracket {
    char c;
    Pos pos;
  };
  std::vector<Bracket> brackets_;
  std::vector<int> indents_{0};
  std::vector<int> alt_indents_{0};
};

std::vector<Token> Lexer::run() {
  if (s_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;
  while (!at_end()) {
    if (!expr_mode_ && at_line_start_ && brackets_.empty()) {
      at_line_start_ = false;
      indentation();
      continue;
    }
    unsigned char c = peek();
    if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
      advance();
    } else if (c == '#') {
      while (!at_end() && peek() != '\n') advance();
    } else if (c == '\\') {
      Pos pos = p_;
      advance();
      if (peek() == '\r') advance();
      if (at_end()) error(pos, "unexpected EOF while parsing");
      if (peek() != '\n') error(pos, "unexpected character after line continuation character");
      advance();
    } else if (c == '\n') {
      newline();
    } else if (is_ascii_ident_start(c) || c >= 0x80) {
      name();
    } else if ((c >= '0' && c <= '9') || (c == '.' && peek(1) >= '0' && peek(1) <= '9')) {
      number();
    } else if (c == '"' || c == '\'') {
      string(0, false, false, p_);
    } else {
      op();
    }
  }
  if (!brackets_.empty()) {
    const Bracket& b = brackets_.back();
    error(b.pos, std::string("'") + b.c + "' was never closed");
  }
  if (!expr_mode_) {
    if (pending_line_) {
      out_.push_back(make(TokenKind::kNewline, "", p_));
      pending_line_ = false;
    }
    while (indents_.size() > 1) {
      indents_.pop_back();
      out_.push_back(make(TokenKind::kDedent, "", p_));
    }
  }
  out_.push_back(make(TokenKind::kEnd, "", p_));
  return std::move(out_);
}

void Lexer::indentation() {
  int col = 0;
  int alt = 0;
  while (!at_end()) {
    unsigned char c = peek();
    if (c == ' ') {
      ++col;
      ++alt;
    } else if (c == '\t') {
      col = (col / 8 + 1) * 8;
      ++alt;
    } else if (c == '\f') {
      col = alt = 0;
    } else {
      break;
    }
    advance();
  }
  unsigned char c = peek();
  if (at_end() || c == '#' || c == '\n' || c == '\r') return;  // blank line: no indentation change
  Pos pos = p_;
  if (col == indents_.back()) {
    if (alt != alt_indents_.back()) error(pos, "inconsistent use of tabs and spaces in indentation", {}, "TabError");
  } else if (col > indents_.back()) {
    if (alt <= alt_indents_.back()) error(pos, "inconsistent use of tabs and spaces in indentation", {}, "TabError");
    if (static_cast<int>(indents_.size()) > kMaxIndentDepth) {
      error(pos, "too many levels of indentation", "move deeply nested code into functions", "IndentationError");
    }
    indents_.push_back(col);
    alt_indents_.push_back(alt);
    out_.push_back(make(TokenKind::kIndent, "", pos));
  } else {
    while (indents_.size() > 1 && col < indents_.back()) {
      indents_.pop_back();
      alt_indents_.pop_back();
      out_.push_back(make(TokenKind::kDedent, "", pos));
    }
    if (col != indents_.back()) {
      error(pos, "unindent does not match any outer indentation level",
            "indent this line exactly like the block it belongs to", "IndentationError");
    }
    if (alt != alt_indents_.back()) error(pos, "inconsistent use of tabs and spaces in indentation", {}, "TabError");
  }
}

void Lexer::newline() {
  Pos pos = p_;
  advance();
  if (expr_mode_ || !brackets_.empty()) return;
  if (pending_line_) {
    Token t;
    t.kind = TokenKind::kNewline;
    t.pos = pos;
    t.end = pos;
    out_.push_back(std::move(t));
    pending_line_ = false;
  }
  at_line_start_ = true;
}

void Lexer::name() {
  Pos start = p_;
  std::size_t begin = i_;
  while (!at_end()) {
    unsigned char c = peek();
    if (c < 0x80) {
      if (!is_ascii_ident_char(c)) break;
      advance();
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = decode_utf8(s_, i_, len);
    if (is_invalid_non_ascii(cp)) {
      if (i_ == begin) bad_character();
      break;
    }
    for (std::size_t k = 0; k < len; ++k) advance();
  }
  std::string text(s_.substr(begin, i_ - begin));
  // String prefixes: r, b, f, u and their combinations.
  unsigned char q = peek();
  if ((q == '"' || q == '\'') && text.size() <= 2) {
    std::string lower;
    for (char ch : text) lower += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    static constexpr std::array<const char*, 9> kPrefixes = {"r", "u", "f", "b", "rb", "br", "fr", "rf", "U"};
    bool prefix = false;
    for (const char* p : kPrefixes) prefix = prefix || lower == p;
    if (prefix) {
      if (lower.find('b') != std::string::npos) {
        throw_unsupported_syntax(src_, start, "bytes literals", "use a str literal");
      }
      string(text.size(), lower.find('r') != std::string::npos, lower.find('f') != std::string::npos, start);
      return;
    }
  }
  emit(make(TokenKind::kName, std::move(text), start));
}

void Lexer::bad_character() {
  std::size_t len = 0;
  std::uint32_t cp = decode_utf8(s_, i_, len);
  std::string ch(s_.substr(i_, len));
  std::string hint;
  std::string ascii = ascii_lookalike(cp);
  if (!ascii.empty()) {
    hint = ascii == " " ? "a non-ASCII space; use a plain space"
                        : "this is a full-width or typographic character; use the ASCII '" + ascii + "' instead";
  }
  error(p_, "invalid character '" + ch + "' (" + codepoint_label(cp) + ")", hint);
}

void Lexer::number() {
  Pos start = p_;
  std::size_t begin = i_;
  std::string digits;
  bool is_float = false;
  int base = 10;
  auto take_digits = [&](auto is_digit) {
    while (!at_end()) {
      unsigned char c = peek();
      if (is_digit(c)) {
        digits += static_cast<char>(c);
        advance();
      } else if (c == '_' && is_digit(peek(1))) {
        advance();
      } else {
        break;
      }
    }
  };
  auto dec = [](unsigned char c) { return c >= '0' && c <= '9'; };
  if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X' || peek(1) == 'o' || peek(1) == 'O' || peek(1) == 'b' ||
                        peek(1) == 'B')) {
    unsigned char kind = peek(1);
    advance();
    advance();
    if (kind == 'x' || kind == 'X') {
      base = 16;
      take_digits([](unsigned char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      });
    } else if (kind == 'o' || kind == 'O') {
      base = 8;
      take_digits([](unsigned char c) { return c >= '0' && c <= '7'; });
    } else {
      base = 2;
      take_digits([](unsigned char c) { return c == '0' || c == '1'; });
    }
    if (digits.empty()) error(start, "invalid " + std::string(base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary") + " literal");
  } else {
    take_digits(dec);
    if (peek() == '.' && !(peek(1) == '.' && peek(2) == '.')) {
      is_float = true;
      digits += '.';
      advance();
      take_digits(dec);
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (dec(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && dec(peek(2))))) {
      is_float = true;
      digits += 'e';
      advance();
      if (peek() == '+' || peek() == '-') {
        digits += static_cast<char>(peek());
        advance();
      }
      take_digits(dec);
    }
  }
  if (peek() == 'j' || peek() == 'J') {
    throw_unsupported_syntax(src_, start, "complex literals", "spmdsim arrays are real-valued");
  }
  bool ident_follows = is_ascii_ident_char(peek());
  if (peek() >= 0x80) {
    std::size_t len = 0;
    ident_follows = !is_invalid_non_ascii(decode_utf8(s_, i_, len));
  }
  if (ident_follows) {
    error(start, std::string("invalid ") + (base == 16 ? "hexadecimal" : base == 8 ? "octal" : base == 2 ? "binary" : "decimal") + " literal");
  }
  Token t = make(TokenKind::kNumber, std::string(s_.substr(begin, i_ - begin)), start);
  if (is_float) {
    t.is_float = true;
    if (digits.front() == '.') digits.insert(digits.begin(), '0');
    t.float_value = std::strtod(digits.c_str(), nullptr);
  } else {
    if (base == 10 && digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos) {
      error(start, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
    }
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
    if (ec != std::errc() || v > static_cast<std::uint64_t>(INT64_MAX)) {
      error(start, "integer literal too large", "spmdsim integers are 64-bit");
    }
    t.int_value = static_cast<std::int64_t>(v);
  }
  emit(std::move(t));
}

void Lexer::string(std::size_t prefix_len, bool raw, bool fstring, Pos start) {
  (void)prefix_len;
  char q = static_cast<char>(peek());
  bool triple = peek(1) == static_cast<unsigned char>(q) && peek(2) == static_cast<unsigned char>(q);
  advance();
  if (triple) {
    advance();
    advance();
  }
  Pos body_pos = p_;
  std::size_t body_begin = i_;
  std::size_t body_end = 0;
  while (true) {
    if (at_end()) {
      error(start, std::string(triple ? "unterminated triple-quoted string literal" : "unterminated string literal") +
                       " (detected at line " + std::to_string(p_.line) + ")",
            triple ? "close the string with " + std::string(3, q) : "close the string with " + std::string(1, q) +
                                                                       " on the same line, or use a triple-quoted string");
    }
    unsigned char c = peek();
    if (c == '\\') {
      advance();
      if (!at_end()) advance();
      continue;
    }
    if (c == '\n' && !triple) {
      error(start, "unterminated string literal (detected at line " + std::to_string(p_.line) + ")",
            "close the string with " + std::string(1, q) + " on the same line, or use a triple-quoted string");
    }
    if (c == static_cast<unsigned char>(q)) {
      if (!triple) {
        body_end = i_;
        advance();
        break;
      }
      if (peek(1) == static_cast<unsigned char>(q) && peek(2) == static_cast<unsigned char>(q)) {
        body_end = i_;
        advance();
        advance();
        advance();
        break;
      }
    }
    advance();
  }
  std::string_view body = s_.substr(body_begin, body_end - body_begin);
  Token t = make(TokenKind::kString, "", start);
  t.is_fstring = fstring;
  t.is_raw = raw;
  t.body_pos = body_pos;
  if (fstring || raw) {
    t.text = std::string(body);
  } else {
    t.text = decode_escapes(src_, body, body_pos);
  }
  emit(std::move(t));
}

void Lexer::op() {
  Pos start = p_;
  std::string_view rest = s_.substr(i_);
  std::string text;
  for (const char* o : kOps3) {
    if (rest.substr(0, 3) == o) text = o;
  }
  if (text.empty()) {
    for (const char* o : kOps2) {
      if (rest.substr(0, 2) == o) text = o;
    }
  }
  if (text.empty() && kOps1.find(static_cast<char>(peek())) != std::string_view::npos) {
    text = std::string(1, static_cast<char>(peek()));
  }
  if (text.empty()) {
    unsigned char c = peek();
    if (c == '!') error(start, "invalid syntax", "Python's 'not' operator is spelled `not`, and 'not equal' is `!=`");
    if (c == '$' || c == '?' || c == '`') {
      error(start, std::string("invalid character '") + static_cast<char>(c) + "' (" + codepoint_label(c) + ")");
    }
    bad_character();
  }
  for (std::size_t k = 0; k < text.size(); ++k) advance();
  char c = text.size() == 1 ? text[0] : 0;
  if (c == '(' || c == '[' || c == '{') {
    if (static_cast<int>(brackets_.size()) >= kMaxBracketDepth) {
      error(start, "too many nested parentheses",
            "brackets may nest at most " + std::to_string(kMaxBracketDepth) + " levels deep");
    }
    brackets_.push_back({c, start});
  } else if (c == ')' || c == ']' || c == '}') {
    if (brackets_.empty()) error(start, std::string("unmatched '") + c + "'");
    char open = brackets_.back().c;
    char want = open == '(' ? ')' : open == '[' ? ']' : '}';
    if (c != want) {
      std::string msg = std::string("closing parenthesis '") + c + "' does not match opening parenthesis '" + open + "'";
      if (brackets_.back().pos.line != start.line) msg += " on line " + std::to_string(brackets_.back().pos.line);
      error(start, msg);
    }
    brackets_.pop_back();
  }
  emit(make(TokenKind::kOp, std::move(text), start));
}

}  // namespace

bool is_keyword(const std::string& name) {
  for (const char* k : kKeywords) {
    if (name == k) return true;
  }
  return false;
}

std::vector<Token> tokenize(const SourceText& src) {
  return Lexer(src, src.text(), Pos{1, 1}, false).run();
}

std::vector<Token> tokenize_expression(const SourceText& src, std::string_view text, Pos start) {
  return Lexer(src, text, start, true).run();
}


std::string decode_escapes(const SourceText& src, std::string_view body, Pos pos) {
  std::string out;
  out.reserve(body.size());
  Pos p = pos;
  auto hex_value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      if (c == '\n') {
        ++p.line;
        p.col = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++p.col;
      }
      continue;
    }
    Pos esc = p;
    char e = body[++i];
    p.col += 2;
    switch (e) {
      case '\n': ++p.line; p.col = 1; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': case 'u': case 'U': {
        int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        std::uint32_t cp = 0;
        for (int k = 0; k < n; ++k) {
          int h = i + 1 < body.size() ? hex_value(body[i + 1]) : -1;
          if (h < 0) {
            throw_syntax_error(src, esc, std::string("(unicode error) truncated \\") + e + " escape");
          }
          cp = cp * 16 + static_cast<std::uint32_t>(h);
          ++i;
          ++p.col;
        }
        append_utf8(out, cp);
        break;
      }
      case 'N':
        throw_unsupported_syntax(src, esc, "the \\N{...} escape", "write the character itself or use \\u");
      default:
        if (e >= '0' && e <= '7') {
          std::uint32_t v = static_cast<std::uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
            v = v * 8 + static_cast<std::uint32_t>(body[++i] - '0');
            ++p.col;
          }
          append_utf8(out, v);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

}  // namespace spmd::scenario
