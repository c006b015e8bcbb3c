// Methods of Python's built-in types: str, list, dict, set, tuple, range, ...

#include <algorithm>
#include <cmath>
#include <map>

#include "scenario/interpreter.h"
#include "scenario/lexer.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/operators.h"
#include "scenario/py_format.h"
#include "scenario/python_errors.h"

namespace spmd::scenario {

namespace {

using MethodTable = std::map<std::string, NativeFn, std::less<>>;

std::string mutation_text(NativeCall& c, const char* verb, const char* fallback) {
  return std::string(verb) + " '" + c.receiver_text(fallback) + "'";
}

// --- str ------------------------------------------------------------------------

const std::string& self_str(NativeCall& c) { return c.self.as_str(); }

bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; }

std::string strip_chars(const std::string& s, const Value& chars, bool left, bool right) {
  auto in_set = [&](char ch) {
    if (chars.is_undefined() || chars.is_none()) return is_space(ch);
    return chars.as_str().find(ch) != std::string::npos;
  };
  std::size_t b = 0, e = s.size();
  if (left) {
    while (b < e && in_set(s[b])) ++b;
  }
  if (right) {
    while (e > b && in_set(s[e - 1])) --e;
  }
  return s.substr(b, e - b);
}

Value str_strip(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"chars"}, 0);
  return Value::str(strip_chars(self_str(c), args[0], true, true));
}
Value str_lstrip(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"chars"}, 0);
  return Value::str(strip_chars(self_str(c), args[0], true, false));
}
Value str_rstrip(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"chars"}, 0);
  return Value::str(strip_chars(self_str(c), args[0], false, true));
}

Value str_case(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  std::string s = self_str(c);
  const std::string& how = c.data.as_str();
  bool start = true;
  for (auto& ch : s) {
    unsigned char u = static_cast<unsigned char>(ch);
    if (how == "upper") ch = static_cast<char>(std::toupper(u));
    else if (how == "lower") ch = static_cast<char>(std::tolower(u));
    else if (how == "title") {
      ch = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
      start = !std::isalpha(u);
    } else if (how == "capitalize") {
      ch = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
      start = false;
    } else if (how == "swapcase") {
      ch = static_cast<char>(std::isupper(u) ? std::tolower(u) : std::toupper(u));
    }
  }
  return Value::str(s);
}

Value str_predicate(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  const std::string& s = self_str(c);
  const std::string& how = c.data.as_str();
  if (s.empty()) return Value::boolean(false);
  bool any_cased = false;
  for (char ch : s) {
    unsigned char u = static_cast<unsigned char>(ch);
    bool ok = true;
    if (how == "isdigit" || how == "isnumeric" || how == "isdecimal") ok = std::isdigit(u);
    else if (how == "isalpha") ok = std::isalpha(u) || u >= 0x80;
    else if (how == "isalnum") ok = std::isalnum(u) || u >= 0x80;
    else if (how == "isspace") ok = is_space(ch);
    else if (how == "isupper") {
      ok = !std::islower(u);
      any_cased = any_cased || std::isupper(u);
    } else if (how == "islower") {
      ok = !std::isupper(u);
      any_cased = any_cased || std::islower(u);
    } else if (how == "isidentifier") {
      ok = std::isalnum(u) || ch == '_' || u >= 0x80;
    }
    if (!ok) return Value::boolean(false);
  }
  if (how == "isupper" || how == "islower") return Value::boolean(any_cased);
  if (how == "isidentifier") return Value::boolean(!std::isdigit(static_cast<unsigned char>(s[0])));
  return Value::boolean(true);
}

Value str_split(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"sep", "maxsplit"}, 0);
  const std::string& s = self_str(c);
  std::int64_t maxsplit = args.has(1) ? to_int(c.st, args[1], "maxsplit") : -1;
  std::vector<Value> out;
  if (!args.has(0)) {
    std::size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<std::int64_t>(out.size()) == maxsplit) {
        std::string rest = s.substr(i);
        while (!rest.empty() && is_space(rest.back())) rest.pop_back();
        out.push_back(Value::str(rest));
        break;
      }
      std::size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      out.push_back(Value::str(s.substr(i, j - i)));
      i = j;
    }
    return Value::list(std::move(out), c.st.token);
  }
  std::string sep = to_str(args[0], "sep");
  if (sep.empty()) raise_value_error("empty separator");
  std::size_t i = 0;
  while (true) {
    std::size_t j = s.find(sep, i);
    if (j == std::string::npos || (maxsplit >= 0 && static_cast<std::int64_t>(out.size()) == maxsplit)) {
      out.push_back(Value::str(s.substr(i)));
      break;
    }
    out.push_back(Value::str(s.substr(i, j - i)));
    i = j + sep.size();
  }
  return Value::list(std::move(out), c.st.token);
}

Value str_splitlines(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  const std::string& s = self_str(c);
  std::vector<Value> out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = s.find('\n', i);
    if (j == std::string::npos) {
      out.push_back(Value::str(s.substr(i)));
      break;
    }
    std::string line = s.substr(i, j - i);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(Value::str(line));
    i = j + 1;
  }
  return Value::list(std::move(out), c.st.token);
}

Value str_join(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable"}, 1);
  std::string out;
  std::size_t k = 0;
  for (const auto& v : c.interp.iterate(c.st, args[0])) {
    if (!v.is(Kind::kStr)) {
      raise_type_error("sequence item " + std::to_string(k) + ": expected str instance, " + type_name(v) + " found",
                       "convert the items first, e.g. \", \".join(str(x) for x in items)");
    }
    if (k++) out += self_str(c);
    out += v.as_str();
  }
  return Value::str(std::move(out));
}

Value str_replace(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"old", "new", "count"}, 2);
  std::string s = self_str(c);
  std::string from = to_str(args[0], "replace() argument 1");
  std::string to = to_str(args[1], "replace() argument 2");
  std::int64_t count = args.has(2) ? to_int(c.st, args[2], "count") : -1;
  std::string out;
  std::size_t i = 0;
  std::int64_t done = 0;
  if (from.empty()) {
    for (std::size_t k = 0; k <= s.size(); ++k) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      if (k < s.size()) out += s[k];
    }
    return Value::str(out);
  }
  while (true) {
    std::size_t j = s.find(from, i);
    if (j == std::string::npos || (count >= 0 && done >= count)) break;
    out += s.substr(i, j - i) + to;
    i = j + from.size();
    ++done;
  }
  out += s.substr(i);
  return Value::str(out);
}

Value str_affix(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"prefix"}, 1);
  bool start = c.data.as_str() == "startswith";
  const std::string& s = self_str(c);
  std::vector<Value> options = args[0].is(Kind::kTuple) ? args[0].tuple_items() : std::vector<Value>{args[0]};
  for (const auto& o : options) {
    std::string p = to_str(o, c.data.as_str() + " argument");
    if (p.size() > s.size()) continue;
    if (start ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0) {
      return Value::boolean(true);
    }
  }
  return Value::boolean(false);
}

Value str_find(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"sub", "start", "end"}, 1);
  const std::string& s = self_str(c);
  std::string sub = to_str(args[0], "substring");
  const std::string& how = c.data.as_str();
  std::size_t pos = how == "rfind" || how == "rindex" ? s.rfind(sub) : s.find(sub);
  if (how == "count") {
    if (sub.empty()) return Value::integer(static_cast<std::int64_t>(utf8_length(s) + 1));
    std::int64_t n = 0;
    for (std::size_t i = s.find(sub); i != std::string::npos; i = s.find(sub, i + sub.size())) ++n;
    return Value::integer(n);
  }
  if (pos == std::string::npos) {
    if (how == "index" || how == "rindex") raise_value_error("substring not found");
    return Value::integer(-1);
  }
  return Value::integer(static_cast<std::int64_t>(utf8_length(s.substr(0, pos))));
}

Value str_format(NativeCall& c, CallArgs& a) {
  return Value::str(format_string(c.interp, c.st, self_str(c), a.pos, a.kw));
}

Value str_justify(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"width", "fillchar"}, 1);
  std::string s = self_str(c);
  std::int64_t width = to_int(c.st, args[0], "width");
  std::string fill = args.given(1) ? to_str(args[1], "fillchar") : " ";
  std::int64_t len = static_cast<std::int64_t>(utf8_length(s));
  if (width <= len) return c.self;
  std::int64_t n = width - len;
  auto rep = [&](std::int64_t k) {
    std::string r;
    for (std::int64_t i = 0; i < k; ++i) r += fill;
    return r;
  };
  const std::string& how = c.data.as_str();
  if (how == "ljust") return Value::str(s + rep(n));
  if (how == "rjust") return Value::str(rep(n) + s);
  std::int64_t left = n / 2 + (n & width & 1);
  return Value::str(rep(left) + s + rep(n - left));
}

Value str_zfill(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"width"}, 1);
  std::string s = self_str(c);
  std::int64_t width = to_int(c.st, args[0], "width");
  std::int64_t len = static_cast<std::int64_t>(s.size());
  if (width <= len) return c.self;
  std::string sign;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    sign = s.substr(0, 1);
    s = s.substr(1);
  }
  return Value::str(sign + std::string(static_cast<std::size_t>(width - len), '0') + s);
}

Value str_partition(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"sep"}, 1);
  const std::string& s = self_str(c);
  std::string sep = to_str(args[0], "sep");
  bool right = c.data.as_str() == "rpartition";
  std::size_t i = right ? s.rfind(sep) : s.find(sep);
  if (i == std::string::npos) {
    if (right) return Value::tuple({Value::str(""), Value::str(""), c.self});
    return Value::tuple({c.self, Value::str(""), Value::str("")});
  }
  return Value::tuple({Value::str(s.substr(0, i)), Value::str(sep), Value::str(s.substr(i + sep.size()))});
}

Value str_encode(NativeCall& c, CallArgs& a) { raise_not_implemented("bytes (str.encode)", "keep text as str"); }

const MethodTable& str_methods() {
  static const MethodTable t = {
      {"strip", str_strip},       {"lstrip", str_lstrip},         {"rstrip", str_rstrip},   {"split", str_split},
      {"splitlines", str_splitlines}, {"join", str_join},         {"replace", str_replace}, {"format", str_format},
      {"zfill", str_zfill},       {"encode", str_encode},
  };
  return t;
}

// --- list ---------------------------------------------------------------------------

ListObject& self_list(NativeCall& c) { return c.self.as<ListObject>(); }

Value list_append(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"object"}, 1);
  auto& l = self_list(c);
  if (c.interp.allow_mutation(c.st, l, mutation_text(c, "appending to", "list"), args[0])) {
    Interpreter::HeapGuard g(c.interp, c.st, &l);
    l.items.push_back(args[0]);
  }
  return Value::none();
}

Value list_extend(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"iterable"}, 1);
  auto& l = self_list(c);
  std::vector<Value> more = c.interp.iterate(c.st, args[0]);
  if (c.interp.allow_mutation(c.st, l, mutation_text(c, "extending", "list"), args[0])) {
    Interpreter::HeapGuard g(c.interp, c.st, &l);
    l.items.insert(l.items.end(), more.begin(), more.end());
  }
  return Value::none();
}

Value list_insert(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"index", "object"}, 2);
  auto& l = self_list(c);
  std::int64_t i = to_int(c.st, args[0], "list.insert()");
  if (c.interp.allow_mutation(c.st, l, mutation_text(c, "inserting into", "list"), args[1])) {
    Interpreter::HeapGuard g(c.interp, c.st, &l);
    std::int64_t n = static_cast<std::int64_t>(l.items.size());
    if (i < 0) i = std::max<std::int64_t>(0, i + n);
    i = std::min(i, n);
    l.items.insert(l.items.begin() + static_cast<std::ptrdiff_t>(i), args[1]);
  }
  return Value::none();
}

Value list_pop(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"index"}, 0);
  auto& l = self_list(c);
  std::int64_t i = args.given(0) ? to_int(c.st, args[0], "list.pop()") : -1;
  bool mutate = c.interp.allow_mutation(c.st, l, mutation_text(c, "popping from", "list"), Value());
  Interpreter::HeapGuard g(c.interp, c.st, &l);
  std::int64_t n = static_cast<std::int64_t>(l.items.size());
  if (n == 0) raise_error("IndexError", "pop from empty list");
  if (i < 0) i += n;
  if (i < 0 || i >= n) raise_error("IndexError", "pop index out of range");
  Value v = l.items[static_cast<std::size_t>(i)];
  if (mutate) l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(i));
  return v;
}

Value list_remove(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"value"}, 1);
  auto& l = self_list(c);
  std::vector<Value> items = c.interp.iterate(c.st, c.self);
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (py_equal(c.interp, c.st, items[i], args[0])) {
      if (c.interp.allow_mutation(c.st, l, mutation_text(c, "removing from", "list"), Value())) {
        Interpreter::HeapGuard g(c.interp, c.st, &l);
        if (i < l.items.size()) l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(i));
      }
      return Value::none();
    }
  }
  raise_value_error("list.remove(x): x not in list");
}

Value seq_index(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"value", "start", "stop"}, 1);
  std::vector<Value> items = c.interp.iterate(c.st, c.self);
  std::int64_t n = static_cast<std::int64_t>(items.size());
  std::int64_t start = args.has(1) ? to_int(c.st, args[1], "index()") : 0;
  std::int64_t stop = args.has(2) ? to_int(c.st, args[2], "index()") : n;
  if (start < 0) start = std::max<std::int64_t>(0, start + n);
  if (stop < 0) stop += n;
  for (std::int64_t i = start; i < std::min(stop, n); ++i) {
    if (py_equal(c.interp, c.st, items[static_cast<std::size_t>(i)], args[0])) return Value::integer(i);
  }
  raise_value_error(c.self.is(Kind::kTuple) ? "tuple.index(x): x not in tuple"
                                            : c.interp.repr(c.st, args[0]) + " is not in list");
}

Value seq_count(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"value"}, 1);
  std::int64_t n = 0;
  for (const auto& v : c.interp.iterate(c.st, c.self)) n += py_equal(c.interp, c.st, v, args[0]) ? 1 : 0;
  return Value::integer(n);
}

Value list_sort(NativeCall& c, CallArgs& a) {
  if (!a.pos.empty()) raise_type_error("sort() takes no positional arguments");
  auto& l = self_list(c);
  Value key;
  bool reverse = false;
  for (auto& [k, v] : a.kw) {
    if (k == "key") key = v;
    else if (k == "reverse") reverse = c.interp.truthy(c.st, v);
    else raise_type_error("sort() got an unexpected keyword argument '" + k + "'");
  }
  std::vector<Value> items = c.interp.iterate(c.st, c.self);
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& v : items) {
    Value kv = v;
    if (!key.is_undefined() && !key.is_none()) {
      CallArgs args;
      args.pos.push_back(v);
      kv = c.interp.call(c.st, key, args, c.site);
    }
    keyed.emplace_back(kv, v);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? py_less(c.interp, c.st, y.first, x.first) : py_less(c.interp, c.st, x.first, y.first);
  });
  if (c.interp.allow_mutation(c.st, l, mutation_text(c, "sorting", "list"), Value())) {
    Interpreter::HeapGuard g(c.interp, c.st, &l);
    l.items.clear();
    for (auto& kv : keyed) l.items.push_back(kv.second);
  }
  return Value::none();
}

Value list_reverse(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  auto& l = self_list(c);
  if (c.interp.allow_mutation(c.st, l, mutation_text(c, "reversing", "list"), Value())) {
    Interpreter::HeapGuard g(c.interp, c.st, &l);
    std::reverse(l.items.begin(), l.items.end());
  }
  return Value::none();
}

Value list_clear(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  auto& l = self_list(c);
  if (c.interp.allow_mutation(c.st, l, mutation_text(c, "clearing", "list"), Value())) {
    Interpreter::HeapGuard g(c.interp, c.st, &l);
    l.items.clear();
  }
  return Value::none();
}

Value list_copy(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  return Value::list(c.interp.iterate(c.st, c.self), c.st.token);
}

const MethodTable& list_methods() {
  static const MethodTable t = {
      {"append", list_append}, {"extend", list_extend}, {"insert", list_insert}, {"pop", list_pop},
      {"remove", list_remove}, {"index", seq_index},    {"count", seq_count},    {"sort", list_sort},
      {"reverse", list_reverse}, {"clear", list_clear}, {"copy", list_copy},
  };
  return t;
}

const MethodTable& tuple_methods() {
  static const MethodTable t = {{"index", seq_index}, {"count", seq_count}};
  return t;
}

// --- dict -----------------------------------------------------------------------------

DictObject& self_dict(NativeCall& c) { return c.self.as<DictObject>(); }

Value dict_keys(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  Interpreter::HeapGuard g(c.interp, c.st, c.self.object());
  return Value::list(self_dict(c).map.keys(), c.st.token);
}

Value dict_values(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  Interpreter::HeapGuard g(c.interp, c.st, c.self.object());
  return Value::list(self_dict(c).map.values(), c.st.token);
}

Value dict_items(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  std::vector<Value> out;
  Interpreter::HeapGuard g(c.interp, c.st, c.self.object());
  for (auto& [k, v] : self_dict(c).map.items()) out.push_back(Value::tuple({k, v}));
  return Value::list(std::move(out), c.st.token);
}

Value dict_get(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "default"}, 1);
  Interpreter::HeapGuard g(c.interp, c.st, c.self.object());
  if (const Value* v = self_dict(c).map.find(args[0])) return *v;
  return args.given(1) ? args[1] : Value::none();
}

Value dict_pop(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "default"}, 1);
  auto& d = self_dict(c);
  bool mutate = c.interp.allow_mutation(c.st, d, mutation_text(c, "popping from", "dict"), Value());
  Interpreter::HeapGuard g(c.interp, c.st, &d);
  if (const Value* v = d.map.find(args[0])) {
    Value r = *v;
    if (mutate) d.map.erase(args[0]);
    return r;
  }
  if (args.given(1)) return args[1];
  raise_error("KeyError", c.interp.repr(c.st, args[0]));
}

Value dict_setdefault(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"key", "default"}, 1);
  auto& d = self_dict(c);
  {
    Interpreter::HeapGuard g(c.interp, c.st, &d);
    if (const Value* v = d.map.find(args[0])) return *v;
  }
  Value def = args.given(1) ? args[1] : Value::none();
  if (c.interp.allow_mutation(c.st, d, mutation_text(c, "updating", "dict"), def)) {
    Interpreter::HeapGuard g(c.interp, c.st, &d);
    d.map.set(args[0], def);
  }
  return def;
}

Value dict_update(NativeCall& c, CallArgs& a) {
  if (a.pos.size() > 1) raise_type_error("update expected at most 1 argument, got " + std::to_string(a.pos.size()));
  auto& d = self_dict(c);
  PyDict incoming;
  if (!a.pos.empty()) {
    const Value& src = a.pos[0];
    if (src.is(Kind::kDict)) {
      Interpreter::HeapGuard g(c.interp, c.st, src.object());
      src.as<DictObject>().map.for_each([&](const Value& k, const Value& v) { incoming.set(k, v); });
    } else {
      for (const auto& item : c.interp.iterate(c.st, src)) {
        std::vector<Value> kv = c.interp.iterate(c.st, item);
        if (kv.size() != 2) raise_value_error("dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
        incoming.set(kv[0], kv[1]);
      }
    }
  }
  for (auto& [k, v] : a.kw) incoming.set(Value::str(k), v);
  Value stored = Value::list(incoming.values(), c.st.token);
  if (c.interp.allow_mutation(c.st, d, mutation_text(c, "updating", "dict"), stored)) {
    Interpreter::HeapGuard g(c.interp, c.st, &d);
    incoming.for_each([&](const Value& k, const Value& v) { d.map.set(k, v); });
  }
  return Value::none();
}

Value dict_copy(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  Value out = make_dict(c.st.token);
  Interpreter::HeapGuard g(c.interp, c.st, c.self.object());
  self_dict(c).map.for_each([&](const Value& k, const Value& v) { out.as<DictObject>().map.set(k, v); });
  return out;
}

Value dict_clear(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  auto& d = self_dict(c);
  if (c.interp.allow_mutation(c.st, d, mutation_text(c, "clearing", "dict"), Value())) {
    Interpreter::HeapGuard g(c.interp, c.st, &d);
    d.map.clear();
  }
  return Value::none();
}

Value dict_popitem(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  auto& d = self_dict(c);
  bool mutate = c.interp.allow_mutation(c.st, d, mutation_text(c, "popping from", "dict"), Value());
  Interpreter::HeapGuard g(c.interp, c.st, &d);
  auto items = d.map.items();
  if (items.empty()) raise_error("KeyError", "'popitem(): dictionary is empty'");
  auto kv = items.back();
  if (mutate) d.map.erase(kv.first);
  return Value::tuple({kv.first, kv.second});
}

const MethodTable& dict_methods() {
  static const MethodTable t = {
      {"keys", dict_keys}, {"values", dict_values}, {"items", dict_items}, {"get", dict_get},
      {"pop", dict_pop},   {"setdefault", dict_setdefault}, {"update", dict_update}, {"copy", dict_copy},
      {"clear", dict_clear}, {"popitem", dict_popitem},
  };
  return t;
}

// --- set --------------------------------------------------------------------------------

SetObject& self_set(NativeCall& c) { return c.self.as<SetObject>(); }

void check_mutable_set(NativeCall& c) {
  if (self_set(c).frozen) raise_error("AttributeError", "'frozenset' object has no attribute '" + c.name.substr(c.name.rfind('.') + 1) + "'");
}

Value set_add(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"elem"}, 1);
  check_mutable_set(c);
  auto& s = self_set(c);
  hash_value(args[0]);
  if (c.interp.allow_mutation(c.st, s, mutation_text(c, "adding to", "set"), args[0])) {
    Interpreter::HeapGuard g(c.interp, c.st, &s);
    s.map.set(args[0], Value::none());
  }
  return Value::none();
}

Value set_remove(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"elem"}, 1);
  check_mutable_set(c);
  auto& s = self_set(c);
  bool discard = c.data.is(Kind::kStr) && c.data.as_str() == "discard";
  bool mutate = c.interp.allow_mutation(c.st, s, mutation_text(c, "removing from", "set"), Value());
  Interpreter::HeapGuard g(c.interp, c.st, &s);
  if (!s.map.find(args[0])) {
    if (discard) return Value::none();
    raise_error("KeyError", c.interp.repr(c.st, args[0]));
  }
  if (mutate) s.map.erase(args[0]);
  return Value::none();
}

Value set_update(NativeCall& c, CallArgs& a) {
  check_mutable_set(c);
  auto& s = self_set(c);
  std::vector<Value> items;
  for (const auto& x : a.pos) {
    auto more = c.interp.iterate(c.st, x);
    items.insert(items.end(), more.begin(), more.end());
  }
  if (c.interp.allow_mutation(c.st, s, mutation_text(c, "updating", "set"), Value())) {
    Interpreter::HeapGuard g(c.interp, c.st, &s);
    for (auto& v : items) s.map.set(v, Value::none());
  }
  return Value::none();
}

Value set_clear(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  check_mutable_set(c);
  auto& s = self_set(c);
  if (c.interp.allow_mutation(c.st, s, mutation_text(c, "clearing", "set"), Value())) {
    Interpreter::HeapGuard g(c.interp, c.st, &s);
    s.map.clear();
  }
  return Value::none();
}

Value set_algebra(NativeCall& c, CallArgs& a) {
  const std::string& how = c.data.as_str();
  std::vector<Value> mine = c.interp.iterate(c.st, c.self);
  Value out = make_set(c.st.token);
  auto& m = out.as<SetObject>().map;
  for (auto& v : mine) m.set(v, Value::none());
  for (const auto& other : a.pos) {
    PyDict o;
    for (auto& v : c.interp.iterate(c.st, other)) o.set(v, Value::none());
    if (how == "union") {
      o.for_each([&](const Value& k, const Value&) { m.set(k, Value::none()); });
    } else if (how == "intersection") {
      for (auto& k : m.keys()) {
        if (!o.find(k)) m.erase(k);
      }
    } else if (how == "difference") {
      o.for_each([&](const Value& k, const Value&) { m.erase(k); });
    } else if (how == "symmetric_difference") {
      o.for_each([&](const Value& k, const Value&) {
        if (m.find(k)) m.erase(k);
        else m.set(k, Value::none());
      });
    } else if (how == "issubset" || how == "issuperset" || how == "isdisjoint") {
      bool ok = true;
      if (how == "issubset") {
        for (auto& k : m.keys()) ok = ok && o.find(k);
      } else if (how == "issuperset") {
        o.for_each([&](const Value& k, const Value&) { ok = ok && m.find(k); });
      } else {
        for (auto& k : m.keys()) ok = ok && !o.find(k);
      }
      return Value::boolean(ok);
    }
  }
  return out;
}

Value set_copy(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  Value out = make_set(c.st.token);
  for (auto& v : c.interp.iterate(c.st, c.self)) out.as<SetObject>().map.set(v, Value::none());
  return out;
}

Value set_pop(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  check_mutable_set(c);
  auto& s = self_set(c);
  bool mutate = c.interp.allow_mutation(c.st, s, mutation_text(c, "popping from", "set"), Value());
  Interpreter::HeapGuard g(c.interp, c.st, &s);
  auto keys = s.map.keys();
  if (keys.empty()) raise_error("KeyError", "'pop from an empty set'");
  if (mutate) s.map.erase(keys.front());
  return keys.front();
}

const MethodTable& set_methods() {
  static const MethodTable t = {
      {"add", set_add}, {"remove", set_remove}, {"discard", set_remove}, {"update", set_update},
      {"clear", set_clear}, {"copy", set_copy}, {"pop", set_pop},
      {"union", set_algebra}, {"intersection", set_algebra}, {"difference", set_algebra},
      {"symmetric_difference", set_algebra}, {"issubset", set_algebra}, {"issuperset", set_algebra},
      {"isdisjoint", set_algebra},
  };
  return t;
}

// --- numbers --------------------------------------------------------------------------

Value float_is_integer(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  double d = c.self.as_float();
  return Value::boolean(std::isfinite(d) && d == std::floor(d));
}

Value int_bit_length(NativeCall& c, CallArgs& a) {
  no_args(c, a);
  std::uint64_t v = static_cast<std::uint64_t>(std::llabs(c.self.as_int()));
  std::int64_t n = 0;
  while (v) {
    ++n;
    v >>= 1;
  }
  return Value::integer(n);
}

Value make_method(const std::string& type, const std::string& name, NativeFn fn, const Value& self, Value data = {}) {
  return make_native(type + "." + name, fn, self, std::move(data));
}

}  // namespace

bool builtin_attribute(Interpreter& interp, ExecState& st, const Value& self, const std::string& name, Value& out) {
  switch (self.kind()) {
    case Kind::kStr: {
      static const char* kCase[] = {"upper", "lower", "title", "capitalize", "swapcase"};
      for (const char* n : kCase) {
        if (name == n) return out = make_method("str", name, str_case, self, Value::str(name)), true;
      }
      static const char* kPred[] = {"isdigit", "isnumeric", "isdecimal", "isalpha", "isalnum", "isspace",
                                    "isupper", "islower", "isidentifier"};
      for (const char* n : kPred) {
        if (name == n) return out = make_method("str", name, str_predicate, self, Value::str(name)), true;
      }
      if (name == "startswith" || name == "endswith") return out = make_method("str", name, str_affix, self, Value::str(name)), true;
      if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
        return out = make_method("str", name, str_find, self, Value::str(name)), true;
      }
      if (name == "center" || name == "ljust" || name == "rjust") {
        return out = make_method("str", name, str_justify, self, Value::str(name)), true;
      }
      if (name == "partition" || name == "rpartition") {
        return out = make_method("str", name, str_partition, self, Value::str(name)), true;
      }
      auto it = str_methods().find(name);
      if (it == str_methods().end()) return false;
      out = make_method("str", name, it->second, self);
      return true;
    }
    case Kind::kList: {
      auto it = list_methods().find(name);
      if (it == list_methods().end()) return false;
      out = make_method("list", name, it->second, self);
      return true;
    }
    case Kind::kTuple: {
      auto it = tuple_methods().find(name);
      if (it == tuple_methods().end()) return false;
      out = make_method("tuple", name, it->second, self);
      return true;
    }
    case Kind::kDict: {
      auto it = dict_methods().find(name);
      if (it == dict_methods().end()) return false;
      out = make_method("dict", name, it->second, self);
      return true;
    }
    case Kind::kSet: {
      auto it = set_methods().find(name);
      if (it == set_methods().end()) return false;
      out = make_method(self.as<SetObject>().frozen ? "frozenset" : "set", name, it->second, self, Value::str(name));
      return true;
    }
    case Kind::kRange: {
      const auto& r = self.as<RangeObject>();
      if (name == "start") return out = Value::integer(r.start), true;
      if (name == "stop") return out = Value::integer(r.stop), true;
      if (name == "step") return out = Value::integer(r.step), true;
      if (name == "index") return out = make_method("range", name, seq_index, self), true;
      if (name == "count") return out = make_method("range", name, seq_count, self), true;
      return false;
    }
    case Kind::kSlice: {
      const auto& s = self.as<SliceObject>();
      if (name == "start") return out = s.start, true;
      if (name == "stop") return out = s.stop, true;
      if (name == "step") return out = s.step, true;
      return false;
    }
    case Kind::kInt:
    case Kind::kBool:
      if (name == "real" || name == "numerator") return out = Value::integer(self.as_int()), true;
      if (name == "imag") return out = Value::integer(0), true;
      if (name == "denominator") return out = Value::integer(1), true;
      if (name == "bit_length") return out = make_method("int", name, int_bit_length, self), true;
      return false;
    case Kind::kFloat:
      if (name == "real") return out = self, true;
      if (name == "imag") return out = Value::floating(0.0), true;
      if (name == "is_integer") return out = make_method("float", name, float_is_integer, self), true;
      return false;
    case Kind::kDType:
      if (name == "name") return out = Value::str(std::string(dtype_name(self.as_dtype()))), true;
      if (name == "itemsize") return out = Value::integer(static_cast<std::int64_t>(dtype_size(self.as_dtype()))), true;
      if (name == "dtype") return out = self, true;
      if (name == "kind") {
        DType t = self.as_dtype();
        return out = Value::str(t == DType::kBool ? "b" : is_integer(t) ? "i" : "f"), true;
      }
      return false;
    default:
      (void)interp;
      (void)st;
      return false;
  }
}

}  // namespace spmd::scenario
