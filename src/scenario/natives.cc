#include "scenario/natives.h"

#include <cmath>
#include <limits>

#include "scenario/python_errors.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"

namespace spmd::scenario {

SourceLoc NativeCall::loc() const { return interp.loc(site.pos); }

std::string NativeCall::receiver_text(std::string_view fallback) const {
  if (site.call && site.call->func->kind == ExprKind::kAttribute) {
    return expr_to_source(*static_cast<const AttributeExpr&>(*site.call->func).value);
  }
  return std::string(fallback);
}

Value make_native(std::string name, NativeFn fn, Value self, Value data) {
  return Value::object(Kind::kNative, std::make_shared<NativeObject>(std::move(name), fn, std::move(self), std::move(data)));
}

namespace {

std::string short_name(const std::string& name) {
  std::size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

}  // namespace

Args::Args(NativeCall& c, CallArgs& args, std::initializer_list<const char*> names, std::size_t required,
           std::size_t max_positional) {
  std::vector<const char*> n(names);
  values_.resize(n.size());
  std::size_t maxpos = std::min(max_positional, n.size());
  std::string fname = short_name(c.name);
  if (args.pos.size() > maxpos) {
    std::string takes = required == maxpos ? std::to_string(maxpos)
                                           : "from " + std::to_string(required) + " to " + std::to_string(maxpos);
    raise_type_error(fname + "() takes " + takes + " positional argument" + (maxpos == 1 ? "" : "s") + " but " +
                     std::to_string(args.pos.size()) + (args.pos.size() == 1 ? " was" : " were") + " given");
  }
  for (std::size_t i = 0; i < args.pos.size(); ++i) values_[i] = args.pos[i];
  for (auto& [k, v] : args.kw) {
    std::size_t idx = n.size();
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (k == n[i]) idx = i;
    }
    if (idx == n.size()) {
      std::vector<std::string> all(n.begin(), n.end());
      std::string close = closest_name(k, all);
      raise_type_error(fname + "() got an unexpected keyword argument '" + k + "'",
                       close.empty() ? "" : "did you mean '" + close + "'?");
    }
    if (!values_[idx].is_undefined()) raise_type_error(fname + "() got multiple values for argument '" + k + "'");
    values_[idx] = v;
  }
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < required; ++i) {
    if (values_[i].is_undefined()) missing.push_back(std::string("'") + n[i] + "'");
  }
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size(); ++i) {
      if (i > 0) list += missing.size() == 2 ? " and " : (i + 1 == missing.size() ? ", and " : ", ");
      list += missing[i];
    }
    raise_type_error(fname + "() missing " + std::to_string(missing.size()) + " required positional argument" +
                     (missing.size() == 1 ? "" : "s") + ": " + list);
  }
}

void no_args(NativeCall& c, const CallArgs& args) {
  if (!args.pos.empty() || !args.kw.empty()) {
    raise_type_error(short_name(c.name) + "() takes no arguments (" +
                     std::to_string(args.pos.size() + args.kw.size()) + " given)");
  }
}

// ============================================================================
// tracers

bool is_traced(const ExecState& st, const Array& a) {
  DeviceId owner = a.device();
  if (owner == kHost) return false;
  // A device's value seen on the host or on another device escaped its pmap
  // (a side effect): JAX shows such a leaked tracer abstractly too.
  if (!st.in_device || owner != st.device) return true;
  return !st.disable_jit;
}

namespace {

// Using (not just showing) a value that escaped its device is an ownership error.
void check_escaped(const ExecState& st, const Array& a, std::string_view op) {
  if (a.device() != kHost && (!st.in_device || a.device() != st.device)) check_placement(a, op);
}

}  // namespace

std::string aval_string(const Array& a) {
  std::string s(dtype_name(a.dtype()));
  s += "[";
  for (std::size_t i = 0; i < a.shape().size(); ++i) {
    if (i) s += ",";
    s += std::to_string(a.shape()[i]);
  }
  return s + "]";
}

std::string traced_repr(const Array& a) { return "Traced<" + aval_string(a) + ">with<DynamicJaxprTrace>"; }

namespace {

std::string traced_function(const ExecState& st) {
  return st.frames.empty() ? std::string("the pmap-ed function") : "'" + *st.frames.front()->name + "'";
}

}  // namespace

void raise_concretization(const ExecState& st, const Array& a, std::string_view problem) {
  check_escaped(st, a, "conversion to a Python value");
  Report r = make_report("ConcretizationTypeError",
                         "Abstract tracer value encountered where concrete value is expected: traced array with shape " +
                             aval_string(a),
                         "shapes, Python ints, indices into Python containers and loop bounds must be static: derive "
                         "them from static values (x.shape, Python numbers), keep the value as an array "
                         "(jnp operations, lax.fori_loop), or use jax.disable_jit() to debug");
  r.details.push_back(std::string(problem));
  r.details.push_back("The value is traced: inside the pmap-ed function " + traced_function(st) +
                      " it is known only per device, at run time, not while Python runs the function.");
  throw ProgramError(std::move(r));
}

void raise_tracer_bool(const ExecState& st, const Array& a) {
  check_escaped(st, a, "bool()");
  Report r = make_report("TracerBoolConversionError",
                         "Attempted boolean conversion of traced array with shape " + aval_string(a) + ".",
                         "use jax.lax.cond / jnp.where for value-dependent branches, or make the value static");
  r.details.push_back("The error occurred while tracing the function " + traced_function(st) +
                      " for pmap: the value differs per device (it depends on the device's data or on "
                      "lax.axis_index), so a Python `if`, `while`, `and`/`or`/`not` or bool() cannot branch on it.");
  throw ProgramError(std::move(r));
}

// ============================================================================
// conversions

std::int64_t to_int(const ExecState& st, const Value& v, std::string_view what) {
  switch (v.kind()) {
    case Kind::kBool:
    case Kind::kInt:
      return v.as_int();
    case Kind::kArray: {
      const Array& a = v.as_array();
      if (is_traced(st, a)) {
        raise_concretization(st, a, "The problem arose with " + std::string(what) + ", which needs a concrete Python int.");
      }
      if (is_floating(a.dtype())) {
        raise_type_error("only integer scalar arrays can be converted to a scalar index (" + std::string(what) +
                         " got an array of dtype " + std::string(dtype_name(a.dtype())) + ")");
      }
      if (a.size() != 1) raise_type_error("Only integer scalar arrays can be converted to a scalar index.");
      return a.element_as_int64(0);
    }
    default:
      raise_type_error("'" + type_name(v) + "' object cannot be interpreted as an integer");
  }
}

double to_float(const ExecState& st, const Value& v, std::string_view what) {
  switch (v.kind()) {
    case Kind::kBool:
    case Kind::kInt:
    case Kind::kFloat:
      return v.as_float();
    case Kind::kArray: {
      const Array& a = v.as_array();
      if (is_traced(st, a)) {
        raise_concretization(st, a, "The problem arose with " + std::string(what) + ", which needs a concrete Python number.");
      }
      if (a.size() != 1) raise_type_error("Only scalar arrays can be converted to Python scalars.");
      return a.element_as_double(0);
    }
    default:
      raise_type_error(std::string(what) + " must be a real number, not '" + type_name(v) + "'");
  }
}

std::string to_str(const Value& v, std::string_view what) {
  if (!v.is(Kind::kStr)) raise_type_error(std::string(what) + " must be a str, not " + type_name(v));
  return v.as_str();
}

Value array_value(Array a) { return Value::array(std::move(a)); }

namespace {

Array python_scalar_array(const Value& v, std::optional<DType> dtype) {
  if (v.is(Kind::kBool)) {
    Array a = Array::scalar_int(v.as_bool() ? 1 : 0, DType::kBool);
    return dtype && *dtype != DType::kBool ? astype(a, *dtype) : a;
  }
  if (v.is(Kind::kInt)) {
    std::int64_t i = v.as_int();
    DType t = dtype.value_or(kDefaultInt);
    if (t == DType::kInt32 && (i > std::numeric_limits<std::int32_t>::max() || i < std::numeric_limits<std::int32_t>::min())) {
      raise_error("OverflowError", "Python int " + std::to_string(i) + " too large to convert to int32");
    }
    if (is_floating(t)) return Array::scalar(static_cast<double>(i), t, !dtype);
    return Array::scalar_int(i, t, !dtype);
  }
  DType t = dtype.value_or(kDefaultFloat);
  if (is_floating(t)) return Array::scalar(v.as_float(), t, !dtype);
  return astype(Array::scalar(v.as_float(), kDefaultFloat), t);
}

// Shape of a nested list of Python scalars; false when it holds arrays.
bool nested_shape(const Value& v, Shape& shape, std::size_t depth, bool& has_float, bool& has_int, bool& all_bool) {
  if (depth > 64) raise_value_error("cannot convert a list nested more than 64 levels deep to an array");
  if (v.is(Kind::kList) || v.is(Kind::kTuple)) {
    const std::vector<Value>& items = v.is(Kind::kList) ? v.as<ListObject>().items : v.tuple_items();
    if (depth == shape.size()) {
      shape.push_back(static_cast<std::int64_t>(items.size()));
    } else if (shape[depth] != static_cast<std::int64_t>(items.size())) {
      raise_value_error("setting an array element with a sequence. The requested array has an inhomogeneous shape after " +
                        std::to_string(depth) + " dimensions.");
    }
    for (const auto& item : items) {
      if (!nested_shape(item, shape, depth + 1, has_float, has_int, all_bool)) return false;
    }
    return true;
  }
  if (v.is(Kind::kArray)) return false;
  if (depth != shape.size()) {
    raise_value_error("setting an array element with a sequence. The requested array has an inhomogeneous shape after " +
                      std::to_string(depth) + " dimensions.");
  }
  if (v.is(Kind::kFloat)) {
    has_float = true;
    all_bool = false;
  } else if (v.is(Kind::kInt)) {
    has_int = true;
    all_bool = false;
  } else if (!v.is(Kind::kBool)) {
    raise_type_error("cannot convert a value of type '" + type_name(v) + "' to a JAX array");
  }
  return true;
}

void flatten_scalars(const Value& v, std::vector<double>& d, std::vector<std::int64_t>& i) {
  if (v.is(Kind::kList) || v.is(Kind::kTuple)) {
    const std::vector<Value>& items = v.is(Kind::kList) ? v.as<ListObject>().items : v.tuple_items();
    for (const auto& item : items) flatten_scalars(item, d, i);
    return;
  }
  d.push_back(v.as_float());
  i.push_back(v.is(Kind::kFloat) ? 0 : v.as_int());
}

}  // namespace

Array to_array(ExecState& st, const Value& v, std::optional<DType> dtype) {
  switch (v.kind()) {
    case Kind::kArray: {
      const Array& a = v.as_array();
      if (dtype && *dtype != a.dtype()) return astype(a, *dtype);
      return a;
    }
    case Kind::kBool:
    case Kind::kInt:
    case Kind::kFloat:
      return python_scalar_array(v, dtype);
    case Kind::kList:
    case Kind::kTuple: {
      Shape shape;
      bool has_float = false, has_int = false, all_bool = true;
      if (nested_shape(v, shape, 0, has_float, has_int, all_bool)) {
        DType t = dtype ? *dtype : has_float ? kDefaultFloat : (has_int || !all_bool) ? kDefaultInt : DType::kBool;
        if (shape.empty()) shape.push_back(0);
        std::vector<double> d;
        std::vector<std::int64_t> i;
        flatten_scalars(v, d, i);
        if (is_floating(t) || (has_float && !is_floating(t))) return Array::from_doubles(d, shape, t);
        return Array::from_int64s(i, shape, t);
      }
      // Elements that are arrays: stack them (all elements converted first).
      const std::vector<Value>& items = v.is(Kind::kList) ? v.as<ListObject>().items : v.tuple_items();
      std::vector<Array> parts;
      for (const auto& item : items) parts.push_back(to_array(st, item));
      PromotedType pt{parts[0].dtype(), parts[0].weak_type()};
      for (const auto& p : parts) pt = promote_weak(pt.dtype, pt.weak, p.dtype(), p.weak_type());
      DType t = dtype.value_or(pt.dtype);
      for (auto& p : parts) {
        if (p.dtype() != t) p = astype(p, t);
      }
      return stack(parts, 0);
    }
    case Kind::kNone:
      raise_type_error("cannot convert None to a JAX array");
    default:
      raise_type_error("cannot convert a value of type '" + type_name(v) + "' to a JAX array",
                       "JAX arrays hold numbers; pass a number, a (nested) list of numbers, or an array");
  }
}

Shape to_shape(const ExecState& st, const Value& v, std::string_view what) {
  Shape s;
  std::string problem = "the shape argument of " + std::string(what);
  if (v.is_int_like() || v.is(Kind::kArray)) {
    if (v.is(Kind::kArray) && v.as_array().ndim() == 1) {
      const Array& a = v.as_array();
      if (is_traced(st, a)) raise_concretization(st, a, "The problem arose with " + problem + ": shapes must be static.");
      for (std::int64_t i = 0; i < a.size(); ++i) s.push_back(a.element_as_int64(i));
      return s;
    }
    if (v.is(Kind::kArray) && is_traced(st, v.as_array())) {
      raise_concretization(st, v.as_array(), "The problem arose with " + problem + ": shapes must be static.");
    }
    s.push_back(to_int(st, v, problem));
    return s;
  }
  if (v.is(Kind::kTuple) || v.is(Kind::kList)) {
    const std::vector<Value>& items = v.is(Kind::kList) ? v.as<ListObject>().items : v.tuple_items();
    for (const auto& item : items) {
      if (item.is(Kind::kArray) && is_traced(st, item.as_array())) {
        raise_concretization(st, item.as_array(), "The problem arose with " + problem + ": shapes must be static.");
      }
      s.push_back(to_int(st, item, problem));
    }
    return s;
  }
  raise_type_error(std::string(what) + ": shape must be an int or a tuple of ints, got " + type_name(v));
}

std::optional<std::vector<int>> to_axes(const ExecState& st, const Value& v, std::string_view what) {
  if (v.is_undefined() || v.is_none()) return std::nullopt;
  std::vector<int> axes;
  if (v.is(Kind::kTuple) || v.is(Kind::kList)) {
    const std::vector<Value>& items = v.is(Kind::kList) ? v.as<ListObject>().items : v.tuple_items();
    for (const auto& item : items) axes.push_back(static_cast<int>(to_int(st, item, what)));
  } else {
    axes.push_back(static_cast<int>(to_int(st, v, what)));
  }
  return axes;
}

std::optional<int> to_optional_axis(const ExecState& st, const Value& v, std::string_view what) {
  if (v.is_undefined() || v.is_none()) return std::nullopt;
  return static_cast<int>(to_int(st, v, what));
}

DType to_dtype(const Value& v) {
  if (v.is(Kind::kDType)) return v.as_dtype();
  if (v.is(Kind::kType)) {
    const std::string& n = v.as<TypeObject>().name;
    if (n == "int") return kDefaultInt;
    if (n == "float") return kDefaultFloat;
    if (n == "bool") return DType::kBool;
  }
  if (v.is(Kind::kStr)) {
    if (auto t = parse_dtype(v.as_str())) return *t;
    if (v.as_str() == "float64" || v.as_str() == "f8") return DType::kFloat64;
    raise_type_error("data type '" + v.as_str() + "' not understood",
                     "use bool, int32, int64, float16, bfloat16, float32 or float64");
  }
  raise_type_error("Cannot interpret '" + type_name(v) + "' as a data type",
                   "pass a dtype such as jnp.float32, or the name 'float32'");
}

std::optional<DType> to_optional_dtype(const Value& v) {
  if (v.is_undefined() || v.is_none()) return std::nullopt;
  return to_dtype(v);
}

AxisSet to_axis_set(const Value& v, std::string_view what) {
  if (v.is(Kind::kStr)) return AxisSet(v.as_str());
  if (v.is(Kind::kTuple) || v.is(Kind::kList)) {
    const std::vector<Value>& items = v.is(Kind::kList) ? v.as<ListObject>().items : v.tuple_items();
    std::vector<std::string> names;
    for (const auto& item : items) {
      if (!item.is(Kind::kStr)) {
        raise_type_error(std::string(what) + ": axis_name must be a string or a tuple of strings, got an element of type " +
                         type_name(item));
      }
      names.push_back(item.as_str());
    }
    return AxisSet(std::move(names));
  }
  raise_type_error(std::string(what) + ": axis_name must be a string or a tuple of strings, got " + type_name(v),
                   v.is_none() ? "give the pmap an axis_name=... and use the same name in the collective" : "");
}

AxisIndexGroups to_groups(const ExecState& st, const Value& v) {
  AxisIndexGroups groups;
  if (v.is_undefined() || v.is_none()) return groups;
  if (!v.is(Kind::kList) && !v.is(Kind::kTuple)) raise_type_error("axis_index_groups must be a list of lists of ints");
  const std::vector<Value>& outer = v.is(Kind::kList) ? v.as<ListObject>().items : v.tuple_items();
  for (const auto& g : outer) {
    if (!g.is(Kind::kList) && !g.is(Kind::kTuple)) raise_type_error("axis_index_groups must be a list of lists of ints");
    const std::vector<Value>& inner = g.is(Kind::kList) ? g.as<ListObject>().items : g.tuple_items();
    std::vector<int> group;
    for (const auto& i : inner) group.push_back(static_cast<int>(to_int(st, i, "axis_index_groups")));
    groups.push_back(std::move(group));
  }
  return groups;
}

Value array_to_scalar(const Array& a) {
  if (a.dtype() == DType::kBool) return Value::boolean(a.element_as_bool(0));
  if (is_integer(a.dtype())) return Value::integer(a.element_as_int64(0));
  return Value::floating(a.element_as_double(0));
}

Value shape_value(const Shape& s) {
  std::vector<Value> items;
  items.reserve(s.size());
  for (auto d : s) items.push_back(Value::integer(d));
  return Value::tuple(std::move(items));
}

bool python_truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::kNone:
    case Kind::kUndefined:
      return false;
    case Kind::kBool:
    case Kind::kInt:
      return v.as_int() != 0;
    case Kind::kFloat:
      return v.as_float() != 0.0;
    case Kind::kStr:
      return !v.as_str().empty();
    case Kind::kTuple:
      return !v.tuple_items().empty();
    case Kind::kList:
      return !v.as<ListObject>().items.empty();
    case Kind::kDict:
      return !v.as<DictObject>().map.empty();
    case Kind::kSet:
      return !v.as<SetObject>().map.empty();
    case Kind::kRange:
      return v.as<RangeObject>().length() > 0;
    default:
      return true;
  }
}

// ============================================================================
// indexing

namespace {

std::optional<std::int64_t> slice_bound(ExecState& st, const Value& v) {
  if (v.is_none() || v.is_undefined()) return std::nullopt;
  if (v.is(Kind::kArray) && is_traced(st, v.as_array())) {
    raise_concretization(st, v.as_array(),
                         "The problem arose with a slice bound: array slices need static start/stop/step (use "
                         "lax.dynamic_slice for a traced start index).");
  }
  return to_int(st, v, "a slice bound");
}

}  // namespace

std::vector<IndexItem> to_index(ExecState& st, const Array& x, const Value& index, Array* take_index, int* take_axis) {
  std::vector<Value> raw = index.is(Kind::kTuple) ? index.tuple_items() : std::vector<Value>{index};
  std::vector<IndexItem> items;
  int array_pos = -1;
  bool seen_ellipsis = false;
  bool has_int_or_newaxis = false;
  for (std::size_t k = 0; k < raw.size(); ++k) {
    const Value& v = raw[k];
    switch (v.kind()) {
      case Kind::kInt:
        items.push_back(IndexItem::at(v.as_int()));
        has_int_or_newaxis = true;
        break;
      case Kind::kNone:
        items.push_back(IndexItem::new_axis());
        has_int_or_newaxis = true;
        break;
      case Kind::kEllipsis:
        items.push_back(IndexItem::ellipsis());
        seen_ellipsis = true;
        break;
      case Kind::kSlice: {
        const auto& s = v.as<SliceObject>();
        items.push_back(IndexItem::slice(slice_bound(st, s.start), slice_bound(st, s.stop), slice_bound(st, s.step)));
        break;
      }
      case Kind::kArray:
      case Kind::kList: {
        Array a = to_array(st, v);
        if (a.dtype() == DType::kBool) {
          raise_not_implemented("boolean mask indexing",
                                "JAX needs static shapes: use jnp.where(mask, x, 0) or x * mask instead of x[mask]");
        }
        if (!is_integer(a.dtype())) {
          raise_error("IndexError", "only integers, slices (`:`), ellipsis (`...`), None and integer arrays are valid indices");
        }
        if (a.ndim() == 0) {
          // A scalar index array (possibly traced): a dynamic index, clamped like JAX's gather.
          std::int64_t i = a.element_as_int64(0);
          int axis = static_cast<int>(items.size());
          if (seen_ellipsis) axis = x.ndim() - static_cast<int>(raw.size() - k);
          std::int64_t dim = axis >= 0 && axis < x.ndim() ? x.shape()[static_cast<std::size_t>(axis)] : 0;
          if (dim > 0) {
            if (i < 0) i += dim;
            i = std::clamp<std::int64_t>(i, 0, dim - 1);
          }
          items.push_back(IndexItem::at(i));
          has_int_or_newaxis = true;
          break;
        }
        if (array_pos >= 0) {
          raise_not_implemented("indexing with several integer arrays", "index one axis at a time, e.g. x[i][:, j]");
        }
        array_pos = static_cast<int>(k);
        *take_index = a;
        *take_axis = seen_ellipsis ? x.ndim() - static_cast<int>(raw.size() - k) : static_cast<int>(items.size());
        items.push_back(IndexItem::slice());
        break;
      }
      case Kind::kBool:
        raise_not_implemented("indexing with a Python bool", "use an integer index");
      default:
        raise_error("IndexError", "only integers, slices (`:`), ellipsis (`...`), None and integer arrays are valid "
                                  "indices, not '" + type_name(v) + "'");
    }
  }
  if (array_pos >= 0 && has_int_or_newaxis) {
    raise_not_implemented("mixing an integer-array index with integer or None indices",
                          "index in two steps, e.g. x[0][idx] instead of x[0, idx]");
  }
  return items;
}

}  // namespace spmd::scenario
