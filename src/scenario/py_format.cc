#include "scenario/py_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "scenario/lexer.h"
#include "scenario/natives.h"
#include "scenario/python_errors.h"
#include "spmd/core/format.h"
#include "util/python_format.h"

namespace spmd::scenario {

// ============================================================================
// repr / str

std::string string_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == q || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + q;
}

namespace {

std::string repr_impl(Interpreter& interp, ExecState& st, const Value& v, int depth);

std::string join_repr(Interpreter& interp, ExecState& st, const std::vector<Value>& items, int depth) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += repr_impl(interp, st, items[i], depth + 1);
  }
  return s;
}

std::string repr_impl(Interpreter& interp, ExecState& st, const Value& v, int depth) {
  if (depth > 64) return "...";
  switch (v.kind()) {
    case Kind::kUndefined: return "<undefined>";
    case Kind::kNone: return "None";
    case Kind::kBool: return v.as_bool() ? "True" : "False";
    case Kind::kInt: return std::to_string(v.as_int());
    case Kind::kFloat: return float_repr(v.as_float());
    case Kind::kEllipsis: return "Ellipsis";
    case Kind::kDType: return "dtype('" + std::string(dtype_name(v.as_dtype())) + "')";
    case Kind::kStr: return string_repr(v.as_str());
    case Kind::kTuple: {
      const auto& items = v.tuple_items();
      return "(" + join_repr(interp, st, items, depth) + (items.size() == 1 ? ",)" : ")");
    }
    case Kind::kList: {
      std::vector<Value> items;
      {
        Interpreter::HeapGuard g(interp, st, v.object());
        items = v.as<ListObject>().items;
      }
      for (const auto& x : items) {
        if (x.is_same(v)) return "[[...]]";
      }
      return "[" + join_repr(interp, st, items, depth) + "]";
    }
    case Kind::kDict: {
      std::vector<std::pair<Value, Value>> items;
      {
        Interpreter::HeapGuard g(interp, st, v.object());
        items = v.as<DictObject>().map.items();
      }
      std::string s = "{";
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) s += ", ";
        s += repr_impl(interp, st, items[i].first, depth + 1) + ": " +
             (items[i].second.is_same(v) ? "{...}" : repr_impl(interp, st, items[i].second, depth + 1));
      }
      return s + "}";
    }
    case Kind::kSet: {
      std::vector<Value> keys;
      {
        Interpreter::HeapGuard g(interp, st, v.object());
        keys = set_keys(v.as<SetObject>());
      }
      if (keys.empty()) return v.as<SetObject>().frozen ? "frozenset()" : "set()";
      std::string body = "{" + join_repr(interp, st, keys, depth) + "}";
      return v.as<SetObject>().frozen ? "frozenset(" + body + ")" : body;
    }
    case Kind::kArray: {
      const Array& a = v.as_array();
      if (is_traced(st, a)) return traced_repr(a);
      return spmd::repr(a);
    }
    case Kind::kRange: {
      const auto& r = v.as<RangeObject>();
      std::string s = "range(" + std::to_string(r.start) + ", " + std::to_string(r.stop);
      if (r.step != 1) s += ", " + std::to_string(r.step);
      return s + ")";
    }
    case Kind::kSlice: {
      const auto& s = v.as<SliceObject>();
      return "slice(" + repr_impl(interp, st, s.start, depth + 1) + ", " + repr_impl(interp, st, s.stop, depth + 1) +
             ", " + repr_impl(interp, st, s.step, depth + 1) + ")";
    }
    case Kind::kFunction: return "<function " + v.as<FunctionObject>().code->name + ">";
    case Kind::kNative: {
      const auto& n = v.as<NativeObject>();
      if (!n.self.is_undefined()) {
        std::string name = n.name.substr(n.name.rfind('.') + 1);
        return "<built-in method " + name + " of " + type_name(n.self) + " object>";
      }
      return "<built-in function " + n.name.substr(n.name.rfind('.') + 1) + ">";
    }
    case Kind::kModule: return "<module '" + v.as<ModuleObject>().name + "'>";
    case Kind::kType: {
      const std::string& n = v.as<TypeObject>().name;
      if (n == "ArrayImpl") return "<class 'jaxlib.xla_extension.ArrayImpl'>";
      return "<class '" + n + "'>";
    }
    case Kind::kException: {
      const auto& e = v.as<ExceptionObject>();
      return e.kind + "(" + (e.message.empty() ? "" : string_repr(e.message)) + ")";
    }
    case Kind::kIterator: {
      const auto& it = v.as<IteratorObject>();
      if (it.type_name == "generator") return "<generator object <genexpr>>";
      return "<" + it.type_name + " object>";
    }
    case Kind::kCell: return "<cell>";
    case Kind::kOther: return v.as<CustomObject>().repr(st);
  }
  return "?";
}

}  // namespace

std::string Interpreter::repr(ExecState& st, const Value& v) { return repr_impl(*this, st, v, 0); }

std::string Interpreter::str(ExecState& st, const Value& v) {
  switch (v.kind()) {
    case Kind::kStr: return v.as_str();
    case Kind::kArray: {
      const Array& a = v.as_array();
      if (is_traced(st, a)) return traced_repr(a);
      return to_string(a);
    }
    case Kind::kException: return v.as<ExceptionObject>().message;
    case Kind::kDType: return std::string(dtype_name(v.as_dtype()));
    default: return repr(st, v);
  }
}

// ============================================================================
std::string format_value(Interpreter& interp, ExecState& st, const Value& v, std::string_view spec) {
  if (spec.empty()) return interp.str(st, v);
  const char type = format_spec_type(spec);
  const bool text = type == 0 || type == 's';
  switch (v.kind()) {
    case Kind::kBool:
      if (text) return format_str_spec(v.as_bool() ? "True" : "False", spec);
      [[fallthrough]];
    case Kind::kInt:
      return format_int_spec(v.as_int(), spec);
    case Kind::kFloat:
      return format_float_spec(v.as_float(), spec);
    case Kind::kStr:
      return format_str_spec(v.as_str(), spec);
    case Kind::kArray: {
      const Array& a = v.as_array();
      if (is_traced(st, a)) {
        raise_concretization(st, a,
                             "The problem arose with a format spec ('" + std::string(spec) +
                                 "'), which needs a concrete number; print traced values with "
                                 "jax.debug.print(\"{x:" + std::string(spec) + "}\", x=x).");
      }
      if (a.ndim() != 0) {
        if (text) return format_str_spec(to_string(a), spec);
        raise_type_error("unsupported format string passed to ArrayImpl.__format__",
                         "only 0-d arrays take numeric format specs; format elements one by one");
      }
      return format_value(interp, st, array_to_scalar(a), spec);
    }
    default:
      if (text) return format_str_spec(interp.str(st, v), spec);
      raise_type_error("unsupported format string passed to " + type_name(v) + ".__format__");
  }
}

// ============================================================================
// str.format

std::string format_string(Interpreter& interp, ExecState& st, std::string_view fmt, const std::vector<Value>& pos,
                          const std::vector<std::pair<std::string, Value>>& kw) {
  std::string out;
  int auto_index = 0;
  bool used_auto = false;
  bool used_manual = false;
  std::size_t i = 0;
  auto field_value = [&](std::string_view field) -> Value {
    std::size_t end = field.find_first_of(".[");
    std::string_view head = field.substr(0, end);
    Value v;
    if (head.empty()) {
      if (used_manual) raise_value_error("cannot switch from manual field specification to automatic field numbering");
      used_auto = true;
      std::size_t k = static_cast<std::size_t>(auto_index++);
      if (k >= pos.size()) {
        raise_error("IndexError", "Replacement index " + std::to_string(k) + " out of range for positional args tuple");
      }
      v = pos[k];
    } else if (head.find_first_not_of("0123456789") == std::string_view::npos) {
      if (used_auto) raise_value_error("cannot switch from automatic field numbering to manual field specification");
      used_manual = true;
      std::size_t k = static_cast<std::size_t>(std::stoul(std::string(head)));
      if (k >= pos.size()) {
        raise_error("IndexError", "Replacement index " + std::to_string(k) + " out of range for positional args tuple");
      }
      v = pos[k];
    } else {
      bool found = false;
      for (const auto& [name, val] : kw) {
        if (name == head) {
          v = val;
          found = true;
        }
      }
      if (!found) raise_error("KeyError", string_repr(head));
    }
    // .attr and [key] accessors
    std::size_t p = end;
    while (p != std::string_view::npos && p < field.size()) {
      if (field[p] == '.') {
        std::size_t q = field.find_first_of(".[", p + 1);
        std::string attr(field.substr(p + 1, q == std::string_view::npos ? std::string_view::npos : q - p - 1));
        v = interp.get_attr(st, v, attr);
        p = q;
      } else {
        std::size_t q = field.find(']', p);
        if (q == std::string_view::npos) raise_value_error("Missing ']' in format string");
        std::string key(field.substr(p + 1, q - p - 1));
        Value k = key.find_first_not_of("0123456789") == std::string::npos && !key.empty()
                      ? Value::integer(std::stoll(key))
                      : Value::str(key);
        v = interp.get_item(st, v, k);
        p = q + 1;
      }
    }
    return v;
  };
  while (i < fmt.size()) {
    char c = fmt[i];
    if (c == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      i += 2;
      continue;
    }
    if (c == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
      out += '}';
      i += 2;
      continue;
    }
    if (c == '}') raise_value_error("Single '}' encountered in format string");
    if (c != '{') {
      out += c;
      ++i;
      continue;
    }
    // find the matching '}' (specs may nest one level of {})
    std::size_t j = i + 1;
    int depth = 0;
    for (; j < fmt.size(); ++j) {
      if (fmt[j] == '{') ++depth;
      else if (fmt[j] == '}') {
        if (depth == 0) break;
        --depth;
      }
    }
    if (j >= fmt.size()) raise_value_error("expected '}' before end of string");
    std::string_view inner = fmt.substr(i + 1, j - i - 1);
    std::size_t colon = std::string_view::npos;
    std::size_t bang = std::string_view::npos;
    int bdepth = 0;
    for (std::size_t k = 0; k < inner.size(); ++k) {
      if (inner[k] == '[') ++bdepth;
      else if (inner[k] == ']') --bdepth;
      else if (bdepth == 0 && inner[k] == '!' && bang == std::string_view::npos && colon == std::string_view::npos) bang = k;
      else if (bdepth == 0 && inner[k] == ':' && colon == std::string_view::npos) {
        colon = k;
        break;
      }
    }
    std::string_view field = inner.substr(0, std::min(bang, colon));
    char conv = 0;
    if (bang != std::string_view::npos) {
      if (bang + 1 >= inner.size()) raise_value_error("end of string while looking for conversion specifier");
      conv = inner[bang + 1];
      if (conv != 'r' && conv != 's' && conv != 'a') raise_value_error(std::string("Unknown conversion specifier ") + conv);
    }
    std::string spec;
    if (colon != std::string_view::npos) {
      spec = format_string(interp, st, inner.substr(colon + 1), pos, kw);
    }
    Value v = field_value(field);
    if (conv == 'r' || conv == 'a') v = Value::str(interp.repr(st, v));
    else if (conv == 's') v = Value::str(interp.str(st, v));
    out += format_value(interp, st, v, spec);
    i = j + 1;
  }
  return out;
}

// ============================================================================
// %-formatting

std::string percent_format(Interpreter& interp, ExecState& st, std::string_view fmt, const Value& args) {
  std::vector<Value> items;
  bool mapping = args.is(Kind::kDict);
  if (args.is(Kind::kTuple)) {
    items = args.tuple_items();
  } else if (!mapping) {
    items.push_back(args);
  }
  std::size_t next = 0;
  std::string out;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c != '%') {
      out += c;
      continue;
    }
    if (++i >= fmt.size()) raise_value_error("incomplete format");
    if (fmt[i] == '%') {
      out += '%';
      continue;
    }
    Value v;
    if (fmt[i] == '(') {
      std::size_t close = fmt.find(')', i);
      if (close == std::string_view::npos || !mapping) raise_type_error("format requires a mapping");
      std::string key(fmt.substr(i + 1, close - i - 1));
      const Value* found = args.as<DictObject>().map.find(Value::str(key));
      if (!found) raise_error("KeyError", string_repr(key));
      v = *found;
      i = close + 1;
    }
    std::string spec;
    while (i < fmt.size() && std::string_view("-+ #0123456789.").find(fmt[i]) != std::string_view::npos) {
      spec += fmt[i++];
    }
    if (i >= fmt.size()) raise_value_error("incomplete format");
    char type = fmt[i];
    if (v.is_undefined()) {
      if (next >= items.size()) raise_type_error("not enough arguments for format string");
      v = items[next++];
    }
    // Translate printf flags into a format spec.
    std::string fs;
    std::string flags;
    std::size_t k = 0;
    while (k < spec.size() && std::string_view("-+ #0").find(spec[k]) != std::string_view::npos) flags += spec[k++];
    std::string rest = spec.substr(k);
    if (flags.find('-') != std::string::npos) fs += "<";
    if (flags.find('+') != std::string::npos) fs += "+";
    else if (flags.find(' ') != std::string::npos) fs += " ";
    if (flags.find('#') != std::string::npos) fs += "#";
    if (flags.find('0') != std::string::npos && flags.find('-') == std::string::npos) fs += "0";
    fs += rest;
    switch (type) {
      case 's': out += format_value(interp, st, Value::str(interp.str(st, v)), fs); break;
      case 'r': out += format_value(interp, st, Value::str(interp.repr(st, v)), fs); break;
      case 'd': case 'i': case 'u': {
        Value iv = v.is(Kind::kFloat) ? Value::integer(static_cast<std::int64_t>(v.as_float())) : v;
        if (iv.is(Kind::kArray)) iv = Value::integer(to_int(st, iv, "%d formatting"));
        out += format_value(interp, st, iv, fs + "d");
        break;
      }
      case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': {
        Value fv = Value::floating(to_float(st, v, "%f formatting"));
        out += format_value(interp, st, fv, fs + type);
        break;
      }
      case 'x': case 'X': case 'o':
        out += format_value(interp, st, Value::integer(to_int(st, v, "%x formatting")), fs + type);
        break;
      case 'c':
        out += v.is(Kind::kStr) ? v.as_str() : format_value(interp, st, v, "c");
        break;
      default:
        raise_value_error(std::string("unsupported format character '") + type + "'");
    }
  }
  if (!mapping && next < items.size()) raise_type_error("not all arguments converted during string formatting");
  return out;
}

}  // namespace spmd::scenario
