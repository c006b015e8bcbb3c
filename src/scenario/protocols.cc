// Python protocols on Values: truthiness, iteration, attributes, items,
// len and `in`.

#include <algorithm>

#include "scenario/interpreter.h"
#include "scenario/lexer.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/operators.h"
#include "scenario/py_format.h"
#include "scenario/python_errors.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/core/reduction.h"

namespace spmd::scenario {

namespace {

// Code points of a UTF-8 string, each as its own string.
std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t j = i + 1;
    while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool is_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// Python slice semantics: the indices selected by slice(start, stop, step) on a length-n sequence.
std::vector<std::int64_t> slice_indices(ExecState& st, const SliceObject& s, std::int64_t n) {
  std::int64_t step = s.step.is_none() ? 1 : to_int(st, s.step, "a slice step");
  if (step == 0) raise_value_error("slice step cannot be zero");
  auto bound = [&](const Value& v, std::int64_t def) -> std::int64_t {
    if (v.is_none()) return def;
    std::int64_t i = to_int(st, v, "a slice bound");
    if (i < 0) {
      i += n;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= n) {
      i = step < 0 ? n - 1 : n;
    }
    return i;
  };
  std::int64_t start = bound(s.start, step < 0 ? n - 1 : 0);
  std::int64_t stop = bound(s.stop, step < 0 ? -1 : n);
  std::vector<std::int64_t> out;
  if (step > 0) {
    for (std::int64_t i = start; i < stop; i += step) out.push_back(i);
  } else {
    for (std::int64_t i = start; i > stop; i += step) out.push_back(i);
  }
  return out;
}

std::int64_t sequence_index(ExecState& st, const Value& index, std::int64_t n, const char* what) {
  if (!index.is_int_like() && !index.is(Kind::kArray)) {
    raise_type_error(std::string(what) + " indices must be integers or slices, not " + type_name(index));
  }
  if (index.is(Kind::kArray) && is_traced(st, index.as_array())) {
    raise_concretization(st, index.as_array(),
                         "The problem arose with indexing a Python " + std::string(what) +
                             ": a Python container needs a concrete index (keep the data in an array to index it "
                             "with a traced value).");
  }
  std::int64_t i = to_int(st, index, "an index");
  if (i < 0) i += n;
  if (i < 0 || i >= n) raise_error("IndexError", std::string(what) + " index out of range");
  return i;
}

}  // namespace

// ============================================================================
// truthiness and iteration

bool Interpreter::truthy(ExecState& st, const Value& v) {
  if (v.is(Kind::kArray)) {
    const Array& a = v.as_array();
    if (is_traced(st, a)) raise_tracer_bool(st, a);
    if (a.size() == 0) raise_value_error("The truth value of an empty array is ambiguous.");
    if (a.size() != 1) {
      raise_value_error("The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
    }
    return a.element_as_bool(0);
  }
  if (v.is(Kind::kList) || v.is(Kind::kDict) || v.is(Kind::kSet)) {
    HeapGuard g(*this, st, v.object());
    return python_truthy(v);
  }
  return python_truthy(v);
}

std::vector<Value> Interpreter::iterate(ExecState& st, const Value& v) {
  switch (v.kind()) {
    case Kind::kTuple:
      return v.tuple_items();
    case Kind::kList: {
      HeapGuard g(*this, st, v.object());
      return v.as<ListObject>().items;
    }
    case Kind::kDict: {
      HeapGuard g(*this, st, v.object());
      return v.as<DictObject>().map.keys();
    }
    case Kind::kSet: {
      HeapGuard g(*this, st, v.object());
      return set_keys(v.as<SetObject>());
    }
    case Kind::kStr: {
      std::vector<Value> out;
      for (auto& c : utf8_chars(v.as_str())) out.push_back(Value::str(std::move(c)));
      return out;
    }
    case Kind::kRange: {
      const auto& r = v.as<RangeObject>();
      std::vector<Value> out;
      std::int64_t n = r.length();
      check_size(static_cast<double>(n), "list from a range");
      out.reserve(static_cast<std::size_t>(n));
      for (std::int64_t k = 0; k < n; ++k) out.push_back(Value::integer(r.start + k * r.step));
      return out;
    }
    case Kind::kArray: {
      const Array& a = v.as_array();
      if (a.ndim() == 0) raise_type_error("iteration over a 0-d array");
      std::vector<Value> out;
      for (std::int64_t i = 0; i < a.shape()[0]; ++i) out.push_back(Value::array(index(a, {IndexItem::at(i)})));
      return out;
    }
    case Kind::kIterator: {
      auto& it = v.as<IteratorObject>();
      std::vector<Value> out(it.items.begin() + static_cast<std::ptrdiff_t>(it.next), it.items.end());
      it.next = it.items.size();
      return out;
    }
    default:
      raise_type_error("'" + type_name(v) + "' object is not iterable");
  }
}

std::int64_t Interpreter::length(ExecState& st, const Value& v) {
  switch (v.kind()) {
    case Kind::kStr:
      return static_cast<std::int64_t>(utf8_length(v.as_str()));
    case Kind::kTuple:
      return static_cast<std::int64_t>(v.tuple_items().size());
    case Kind::kList: {
      HeapGuard g(*this, st, v.object());
      return static_cast<std::int64_t>(v.as<ListObject>().items.size());
    }
    case Kind::kDict: {
      HeapGuard g(*this, st, v.object());
      return static_cast<std::int64_t>(v.as<DictObject>().map.size());
    }
    case Kind::kSet: {
      HeapGuard g(*this, st, v.object());
      return static_cast<std::int64_t>(v.as<SetObject>().map.size());
    }
    case Kind::kRange:
      return v.as<RangeObject>().length();
    case Kind::kArray: {
      const Array& a = v.as_array();
      if (a.ndim() == 0) raise_type_error("len() of unsized object");
      return a.shape()[0];
    }
    case Kind::kIterator: {
      const auto& it = v.as<IteratorObject>();
      raise_type_error("object of type '" + it.type_name + "' has no len()");
    }
    default:
      raise_type_error("object of type '" + type_name(v) + "' has no len()");
  }
}

bool Interpreter::contains(ExecState& st, const Value& c, const Value& item) {
  switch (c.kind()) {
    case Kind::kStr:
      if (!item.is(Kind::kStr)) raise_type_error("'in <string>' requires string as left operand, not " + type_name(item));
      return c.as_str().find(item.as_str()) != std::string::npos;
    case Kind::kDict: {
      HeapGuard g(*this, st, c.object());
      return c.as<DictObject>().map.find(item) != nullptr;
    }
    case Kind::kSet: {
      HeapGuard g(*this, st, c.object());
      return c.as<SetObject>().map.find(item) != nullptr;
    }
    case Kind::kRange: {
      if (!item.is_number()) return false;
      const auto& r = c.as<RangeObject>();
      if (item.is(Kind::kFloat) && item.as_float() != static_cast<double>(static_cast<std::int64_t>(item.as_float()))) {
        return false;
      }
      std::int64_t x = static_cast<std::int64_t>(item.as_float());
      if (item.is_int_like()) x = item.as_int();
      if (r.step > 0 ? (x < r.start || x >= r.stop) : (x > r.start || x <= r.stop)) return false;
      return (x - r.start) % r.step == 0;
    }
    case Kind::kArray: {
      Value eq = compare_op(*this, st, CmpOp::kEq, c, item);
      return truthy(st, Value::array(reduce(ReduceOp::kAny, eq.as_array())));
    }
    case Kind::kTuple:
    case Kind::kList:
    case Kind::kIterator: {
      for (const auto& x : iterate(st, c)) {
        if (x.is_same(item) || py_equal(*this, st, x, item)) return true;
      }
      return false;
    }
    default:
      raise_type_error("argument of type '" + type_name(c) + "' is not iterable");
  }
}

// ============================================================================
// attributes

bool Interpreter::has_attr(ExecState& st, const Value& obj, const std::string& name) {
  try {
    get_attr(st, obj, name);
    return true;
  } catch (ProgramError& e) {
    if (e.kind() == "AttributeError") return false;
    throw;
  }
}

Value Interpreter::get_attr(ExecState& st, const Value& obj, const std::string& name) {
  Value out;
  switch (obj.kind()) {
    case Kind::kModule: {
      const auto& m = obj.as<ModuleObject>();
      if (const Value* v = m.attrs.find(Value::str(name))) return *v;
      std::vector<std::string> names;
      for (const auto& k : m.attrs.keys()) names.push_back(k.as_str());
      std::string close = closest_name(name, names);
      raise_error("AttributeError", "module '" + m.name + "' has no attribute '" + name + "'",
                  close.empty() ? "spmdsim implements a subset of " + m.name : "did you mean '" + close + "'?");
    }
    case Kind::kArray:
      if (array_attribute(*this, st, obj, name, out)) return out;
      break;
    case Kind::kFunction: {
      const auto& fn = obj.as<FunctionObject>();
      if (name == "__name__" || name == "__qualname__") return Value::str(fn.code->name);
      if (name == "__doc__") return Value::none();
      HeapGuard g(*this, st, &fn);
      if (const Value* v = fn.attrs.find(Value::str(name))) return *v;
      break;
    }
    case Kind::kNative:
      if (name == "__name__" || name == "__qualname__") {
        const std::string& n = obj.as<NativeObject>().name;
        std::size_t dot = n.rfind('.');
        return Value::str(dot == std::string::npos ? n : n.substr(dot + 1));
      }
      break;
    case Kind::kType:
      if (name == "__name__" || name == "__qualname__") return Value::str(obj.as<TypeObject>().name);
      break;
    case Kind::kException:
      if (name == "args") {
        const auto& e = obj.as<ExceptionObject>();
        return Value::tuple(e.message.empty() ? std::vector<Value>{} : std::vector<Value>{Value::str(e.message)});
      }
      break;
    case Kind::kOther:
      if (obj.as<CustomObject>().get_attr(*this, st, obj, name, out)) return out;
      break;
    default:
      if (builtin_attribute(*this, st, obj, name, out)) return out;
      break;
  }
  std::string hint;
  if (obj.is(Kind::kList) && name == "push") hint = "did you mean 'append'?";
  if (obj.is(Kind::kArray) && (name == "numpy" || name == "cpu")) hint = "use the array directly, or x.tolist()";
  raise_error("AttributeError", "'" + type_name(obj) + "' object has no attribute '" + name + "'", hint);
}

void Interpreter::set_attr(ExecState& st, const Value& obj, const std::string& name, const Value& v,
                           const Expr* obj_expr) {
  std::string owner = obj_expr ? expr_to_source(*obj_expr) : type_name(obj);
  if (obj.is(Kind::kFunction)) {
    auto& fn = obj.as<FunctionObject>();
    if (allow_mutation(st, fn, "setting attribute '" + name + "' of '" + owner + "'", v)) {
      HeapGuard g(*this, st, &fn);
      fn.attrs.set(Value::str(name), v);
    }
    return;
  }
  if (obj.is(Kind::kModule)) {
    auto& m = obj.as<ModuleObject>();
    if (allow_mutation(st, m, "setting attribute '" + name + "' of module '" + m.name + "'", v)) {
      HeapGuard g(*this, st, &m);
      m.attrs.set(Value::str(name), v);
    }
    return;
  }
  if (obj.is(Kind::kArray)) {
    raise_error("AttributeError", "attribute '" + name + "' of 'ArrayImpl' objects is not writable",
                "JAX arrays are immutable; build a new array instead");
  }
  raise_error("AttributeError", "'" + type_name(obj) + "' object has no attribute '" + name + "'",
              "spmdsim objects other than functions and modules take no new attributes; use a dict for state");
}

// ============================================================================
// items

Value Interpreter::get_item(ExecState& st, const Value& obj, const Value& index) {
  switch (obj.kind()) {
    case Kind::kList:
    case Kind::kTuple: {
      const char* what = obj.is(Kind::kList) ? "list" : "tuple";
      std::vector<Value> items;
      if (obj.is(Kind::kList)) {
        HeapGuard g(*this, st, obj.object());
        if (!index.is(Kind::kSlice)) {
          const auto& v = obj.as<ListObject>().items;
          return v[static_cast<std::size_t>(sequence_index(st, index, static_cast<std::int64_t>(v.size()), what))];
        }
        items = obj.as<ListObject>().items;
      } else {
        const auto& v = obj.tuple_items();
        if (!index.is(Kind::kSlice)) {
          return v[static_cast<std::size_t>(sequence_index(st, index, static_cast<std::int64_t>(v.size()), what))];
        }
        items = v;
      }
      std::vector<Value> out;
      for (auto i : slice_indices(st, index.as<SliceObject>(), static_cast<std::int64_t>(items.size()))) {
        out.push_back(items[static_cast<std::size_t>(i)]);
      }
      if (obj.is(Kind::kList)) return Value::list(std::move(out), st.token);
      return Value::tuple(std::move(out));
    }
    case Kind::kStr: {
      const std::string& s = obj.as_str();
      if (is_ascii(s)) {
        if (!index.is(Kind::kSlice)) {
          return Value::str(std::string(1, s[static_cast<std::size_t>(sequence_index(st, index, static_cast<std::int64_t>(s.size()), "string"))]));
        }
        std::string out;
        for (auto i : slice_indices(st, index.as<SliceObject>(), static_cast<std::int64_t>(s.size()))) {
          out += s[static_cast<std::size_t>(i)];
        }
        return Value::str(std::move(out));
      }
      std::vector<std::string> chars = utf8_chars(s);
      if (!index.is(Kind::kSlice)) {
        return Value::str(chars[static_cast<std::size_t>(sequence_index(st, index, static_cast<std::int64_t>(chars.size()), "string"))]);
      }
      std::string out;
      for (auto i : slice_indices(st, index.as<SliceObject>(), static_cast<std::int64_t>(chars.size()))) {
        out += chars[static_cast<std::size_t>(i)];
      }
      return Value::str(std::move(out));
    }
    case Kind::kRange: {
      const auto& r = obj.as<RangeObject>();
      std::int64_t n = r.length();
      if (!index.is(Kind::kSlice)) return Value::integer(r.start + sequence_index(st, index, n, "range object") * r.step);
      std::vector<Value> out;
      for (auto i : slice_indices(st, index.as<SliceObject>(), n)) out.push_back(Value::integer(r.start + i * r.step));
      return Value::list(std::move(out), st.token);
    }
    case Kind::kDict: {
      HeapGuard g(*this, st, obj.object());
      if (const Value* v = obj.as<DictObject>().map.find(index)) return *v;
      raise_error("KeyError", repr(st, index));
    }
    case Kind::kArray: {
      const Array& x = obj.as_array();
      Array take_idx;
      int take_axis = -1;
      std::vector<IndexItem> items = to_index(st, x, index, &take_idx, &take_axis);
      Array r = spmd::index(x, items);
      if (take_idx.valid()) r = take(r, take_idx, take_axis);
      return Value::array(std::move(r));
    }
    case Kind::kOther: {
      Value out;
      if (obj.as<CustomObject>().get_item(*this, st, index, out)) return out;
      break;
    }
    default:
      break;
  }
  raise_type_error("'" + type_name(obj) + "' object is not subscriptable");
}

void Interpreter::set_item(ExecState& st, const Value& obj, const Value& index, const Value& v, const Expr* obj_expr) {
  std::string name = obj_expr ? expr_to_source(*obj_expr) : type_name(obj);
  switch (obj.kind()) {
    case Kind::kList: {
      auto& l = obj.as<ListObject>();
      if (!allow_mutation(st, l, "assigning to an item of '" + name + "'", v)) return;
      if (index.is(Kind::kSlice)) {
        std::vector<Value> repl = iterate(st, v);
        HeapGuard g(*this, st, &l);
        const auto& s = index.as<SliceObject>();
        std::vector<std::int64_t> idx = slice_indices(st, s, static_cast<std::int64_t>(l.items.size()));
        bool simple = s.step.is_none() || (s.step.is_int_like() && s.step.as_int() == 1);
        if (simple) {
          std::int64_t n = static_cast<std::int64_t>(l.items.size());
          std::int64_t start = idx.empty() ? 0 : idx.front();
          if (idx.empty()) {
            // Empty selection: insert at the clamped start.
            start = s.start.is_none() ? 0 : to_int(st, s.start, "a slice bound");
            if (start < 0) start = std::max<std::int64_t>(0, start + n);
            start = std::min(start, n);
          }
          auto first = l.items.begin() + static_cast<std::ptrdiff_t>(start);
          l.items.erase(first, first + static_cast<std::ptrdiff_t>(idx.size()));
          l.items.insert(l.items.begin() + static_cast<std::ptrdiff_t>(start), repl.begin(), repl.end());
          return;
        }
        if (repl.size() != idx.size()) {
          raise_value_error("attempt to assign sequence of size " + std::to_string(repl.size()) +
                            " to extended slice of size " + std::to_string(idx.size()));
        }
        for (std::size_t k = 0; k < idx.size(); ++k) l.items[static_cast<std::size_t>(idx[k])] = repl[k];
        return;
      }
      HeapGuard g(*this, st, &l);
      std::int64_t i = sequence_index(st, index, static_cast<std::int64_t>(l.items.size()), "list assignment");
      l.items[static_cast<std::size_t>(i)] = v;
      return;
    }
    case Kind::kDict: {
      auto& d = obj.as<DictObject>();
      hash_value(index);  // unhashable keys fail before any side effect
      if (!allow_mutation(st, d, "assigning to an item of '" + name + "'", v)) return;
      HeapGuard g(*this, st, &d);
      d.map.set(index, v);
      return;
    }
    case Kind::kArray:
      raise_type_error("'<class 'jaxlib.xla_extension.ArrayImpl'>' object does not support item assignment. JAX arrays "
                       "are immutable.",
                       "instead of `x[idx] = y`, use `x = x.at[idx].set(y)` (or .add, .multiply, .min, .max)");
    default:
      raise_type_error("'" + type_name(obj) + "' object does not support item assignment");
  }
}

void Interpreter::del_item(ExecState& st, const Value& obj, const Value& index, const Expr* obj_expr) {
  std::string name = obj_expr ? expr_to_source(*obj_expr) : type_name(obj);
  switch (obj.kind()) {
    case Kind::kList: {
      auto& l = obj.as<ListObject>();
      if (!allow_mutation(st, l, "deleting an item of '" + name + "'", {})) return;
      HeapGuard g(*this, st, &l);
      if (index.is(Kind::kSlice)) {
        std::vector<std::int64_t> idx = slice_indices(st, index.as<SliceObject>(), static_cast<std::int64_t>(l.items.size()));
        std::sort(idx.begin(), idx.end());
        for (auto it = idx.rbegin(); it != idx.rend(); ++it) l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(*it));
        return;
      }
      std::int64_t i = sequence_index(st, index, static_cast<std::int64_t>(l.items.size()), "list assignment");
      l.items.erase(l.items.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
    case Kind::kDict: {
      auto& d = obj.as<DictObject>();
      if (!allow_mutation(st, d, "deleting an item of '" + name + "'", {})) return;
      HeapGuard g(*this, st, &d);
      if (!d.map.erase(index)) raise_error("KeyError", repr(st, index));
      return;
    }
    case Kind::kArray:
      raise_type_error("JAX arrays are immutable and do not support item deletion");
    default:
      raise_type_error("'" + type_name(obj) + "' object doesn't support item deletion");
  }
}

}  // namespace spmd::scenario
