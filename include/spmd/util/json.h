#pragma once
/// \file
/// A small JSON value: enough for reports, traces and timelines.
///
/// Objects keep insertion order so rendered reports read top-down.
/// `Json::parse` reports malformed input as SyntaxError with
/// source:line:column and the offending line.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace spmd {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  Json(int i) : v_(static_cast<std::int64_t>(i)) {}
  Json(std::int64_t i) : v_(i) {}
  Json(std::uint64_t i) : v_(static_cast<std::int64_t>(i)) {}
  Json(double d) : v_(d) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}
  Json(Array a) : v_(std::move(a)) {}
  Json(Object o) : v_(std::move(o)) {}

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_number() const { return is_int() || std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_array() const { return std::holds_alternative<Array>(v_); }
  bool is_object() const { return std::holds_alternative<Object>(v_); }

  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  /// Object member; nullptr when absent or when this is not an object.
  const Json* find(std::string_view key) const;
  /// Member `key` as a string; "" when absent or not a string.
  std::string string_at(std::string_view key) const;
  /// Member `key` as an integer; `fallback` when absent or not an integer.
  std::int64_t int_at(std::string_view key, std::int64_t fallback = 0) const;
  /// Appends (object) — does not replace an existing key.
  Json& set(std::string key, Json value);
  /// Appends (array).
  Json& push(Json value);

  /// Compact (indent < 0) or pretty-printed with `indent` spaces.
  std::string dump(int indent = -1) const;

  /// Parses one JSON value. `source` names the input in errors
  /// ("trace.jsonl:12" for a line of a JSON-lines file); `line_offset` is
  /// added to reported line numbers. Throws SyntaxError.
  static Json parse(std::string_view text, std::string_view source = "<json>", int line_offset = 0);

  friend bool operator==(const Json& a, const Json& b) { return a.v_ == b.v_; }

 private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Array, Object> v_;
};

/// JSON string escaping of `s` (without the quotes).
std::string json_escape(std::string_view s);

}  // namespace spmd
