#include "spmd/util/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "spmd/error.h"
#include "util/utf8.h"

namespace spmd {

std::int64_t Json::as_int() const {
  if (auto* d = std::get_if<double>(&v_)) return static_cast<std::int64_t>(*d);
  return std::get<std::int64_t>(v_);
}

double Json::as_double() const {
  if (auto* i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
  return std::get<double>(v_);
}

std::string Json::string_at(std::string_view key) const {
  const Json* v = find(key);
  return v != nullptr && v->is_string() ? v->as_string() : std::string();
}

std::int64_t Json::int_at(std::string_view key, std::int64_t fallback) const {
  const Json* v = find(key);
  return v != nullptr && v->is_int() ? v->as_int() : fallback;
}

const Json* Json::find(std::string_view key) const {
  auto* o = std::get_if<Object>(&v_);
  if (!o) return nullptr;
  for (auto& [k, v] : *o) {
    if (k == key) return &v;
  }
  return nullptr;
}

Json& Json::set(std::string key, Json value) {
  if (is_null()) v_ = Object{};
  auto& o = std::get<Object>(v_);
  o.emplace_back(std::move(key), std::move(value));
  return o.back().second;
}

Json& Json::push(Json value) {
  if (is_null()) v_ = Array{};
  auto& a = std::get<Array>(v_);
  a.push_back(std::move(value));
  return a.back();
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // A JSON document is UTF-8: bytes that are not (a program's binary
      // output) become U+FFFD, as Python's errors='replace' does.
      const std::size_t n = utf8_sequence_length(s.substr(i));
      if (n == 0) {
        out += "\xEF\xBF\xBD";
      } else {
        out.append(s.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

namespace {

void dump_to(const Json& j, std::string& out, int indent, int depth);

void newline(std::string& out, int indent, int depth) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent * depth), ' ');
}

void dump_to(const Json& j, std::string& out, int indent, int depth) {
  if (j.is_null()) {
    out += "null";
  } else if (j.is_bool()) {
    out += j.as_bool() ? "true" : "false";
  } else if (j.is_int()) {
    out += std::to_string(j.as_int());
  } else if (j.is_number()) {
    double d = j.as_double();
    if (!std::isfinite(d)) {
      out += "null";
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      out += buf;
    }
  } else if (j.is_string()) {
    out += '"';
    out += json_escape(j.as_string());
    out += '"';
  } else if (j.is_array()) {
    const auto& a = j.as_array();
    out += '[';
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (i) out += indent < 0 ? "," : ",";
      newline(out, indent, depth + 1);
      dump_to(a[i], out, indent, depth + 1);
    }
    if (!a.empty()) newline(out, indent, depth);
    out += ']';
  } else {
    const auto& o = j.as_object();
    out += '{';
    for (std::size_t i = 0; i < o.size(); ++i) {
      if (i) out += ',';
      newline(out, indent, depth + 1);
      out += '"';
      out += json_escape(o[i].first);
      out += indent < 0 ? "\":" : "\": ";
      dump_to(o[i].second, out, indent, depth + 1);
    }
    if (!o.empty()) newline(out, indent, depth);
    out += '}';
  }
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view source, int line_offset)
      : text_(text), source_(source), line_offset_(line_offset) {}

  Json parse_document() {
    skip_ws();
    Json v = parse_value(0);
    skip_ws();
    if (pos_ != text_.size()) fail("unexpected text after the JSON value", "remove what follows the value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 256;

  [[noreturn]] void fail(const std::string& what, const std::string& hint) {
    int line = 1, col = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
        line_start = i + 1;
      } else {
        ++col;
      }
    }
    std::size_t line_end = text_.find('\n', line_start);
    Report r = make_report("SyntaxError",
                           std::string(source_) + ":" + std::to_string(line + line_offset_) + ":" +
                               std::to_string(col) + ": invalid JSON: " + what,
                           hint);
    r.where = SourceLoc{intern_path(source_), static_cast<std::uint32_t>(line + line_offset_),
                        static_cast<std::uint32_t>(col)};
    r.source_line = std::string(text_.substr(line_start, line_end == std::string_view::npos
                                                             ? std::string_view::npos
                                                             : line_end - line_start));
    throw SyntaxError(std::move(r));
  }

  void skip_ws() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }

  Json parse_value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than 256 levels", "flatten the document");
    if (pos_ >= text_.size()) fail("unexpected end of input", "the value is incomplete");
    char c = text_[pos_];
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') return Json(parse_string());
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    if (consume("true")) return Json(true);
    if (consume("false")) return Json(false);
    if (consume("null")) return Json();
    fail(std::string("unexpected character '") + c + "'", "expected a value: object, array, string, number, true, false or null");
  }

  Json parse_object(int depth) {
    ++pos_;
    Json obj = Json::object();
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return obj;
    }
    while (true) {
      skip_ws();
      if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a string key", "object keys are double-quoted strings");
      std::string key = parse_string();
      skip_ws();
      if (pos_ >= text_.size() || text_[pos_] != ':') fail("expected ':' after the key", "write \"key\": value");
      ++pos_;
      skip_ws();
      obj.set(std::move(key), parse_value(depth + 1));
      skip_ws();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return obj;
      }
      fail("expected ',' or '}' in the object", "separate members with commas and close the object");
    }
  }

  Json parse_array(int depth) {
    ++pos_;
    Json arr = Json::array();
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return arr;
    }
    while (true) {
      skip_ws();
      arr.push(parse_value(depth + 1));
      skip_ws();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return arr;
      }
      fail("expected ',' or ']' in the array", "separate elements with commas and close the array");
    }
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  std::uint32_t parse_hex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape", "write four hex digits after \\u");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else fail("invalid hex digit in \\u escape", "write four hex digits after \\u");
    }
    return v;
  }

  std::string parse_string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("unterminated string", "close the string with '\"'");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string", "escape it (\\n, \\t, \\u00XX)");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated escape", "close the string with '\"'");
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = parse_hex4();
          if (cp >= 0xd800 && cp < 0xdc00 && text_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            std::uint32_t lo = parse_hex4();
            if (lo >= 0xdc00 && lo < 0xe000) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          append_utf8(out, cp);
          break;
        }
        default: fail(std::string("invalid escape '\\") + e + "'", "valid escapes: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
      }
    }
  }

  Json parse_number() {
    std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    bool digits = false, is_float = false;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      ++pos_;
      digits = true;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    }
    if (!digits) {
      pos_ = start;
      fail("invalid number", "numbers look like -12, 3.5 or 1e-3");
    }
    std::string num(text_.substr(start, pos_ - start));
    if (!is_float) {
      errno = 0;
      long long v = std::strtoll(num.c_str(), nullptr, 10);
      if (errno != ERANGE) return Json(static_cast<std::int64_t>(v));
    }
    return Json(std::strtod(num.c_str(), nullptr));
  }

  std::string_view text_;
  std::string_view source_;
  int line_offset_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(*this, out, indent, 0);
  return out;
}

Json Json::parse(std::string_view text, std::string_view source, int line_offset) {
  return Parser(text, source, line_offset).parse_document();
}

}  // namespace spmd
