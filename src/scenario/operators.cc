#include "scenario/operators.h"

#include <cmath>
#include <limits>

#include "scenario/natives.h"
#include "scenario/py_format.h"
#include "scenario/python_errors.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/linalg.h"

namespace spmd::scenario {

namespace {

[[noreturn]] void unsupported(const char* sym, const Value& a, const Value& b) {
  raise_type_error(std::string("unsupported operand type(s) for ") + sym + ": '" + type_name(a) + "' and '" +
                   type_name(b) + "'");
}

[[noreturn]] void overflow() {
  raise_error("OverflowError", "integer overflow: spmdsim Python ints are 64-bit");
}

std::int64_t ipow(std::int64_t base, std::int64_t exp) {
  std::int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) {
      if (__builtin_mul_overflow(result, base, &result)) overflow();
    }
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
  }
  return result;
}

Value number_binop(BinOp op, const Value& a, const Value& b) {
  bool ints = a.is_int_like() && b.is_int_like();
  if (ints) {
    std::int64_t x = a.as_int();
    std::int64_t y = b.as_int();
    std::int64_t r = 0;
    switch (op) {
      case BinOp::kAdd:
        if (__builtin_add_overflow(x, y, &r)) overflow();
        return Value::integer(r);
      case BinOp::kSub:
        if (__builtin_sub_overflow(x, y, &r)) overflow();
        return Value::integer(r);
      case BinOp::kMul:
        if (__builtin_mul_overflow(x, y, &r)) overflow();
        return Value::integer(r);
      case BinOp::kDiv:
        if (y == 0) raise_error("ZeroDivisionError", "division by zero");
        return Value::floating(static_cast<double>(x) / static_cast<double>(y));
      case BinOp::kFloorDiv: {
        if (y == 0) raise_error("ZeroDivisionError", "integer division or modulo by zero");
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) overflow();
        std::int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        return Value::integer(q);
      }
      case BinOp::kMod: {
        if (y == 0) raise_error("ZeroDivisionError", "integer modulo by zero");
        if (y == -1) return Value::integer(0);
        std::int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        return Value::integer(m);
      }
      case BinOp::kPow:
        if (y < 0) {
          if (x == 0) raise_error("ZeroDivisionError", "0.0 cannot be raised to a negative power");
          return Value::floating(std::pow(static_cast<double>(x), static_cast<double>(y)));
        }
        return Value::integer(ipow(x, y));
      case BinOp::kLShift:
        if (y < 0) raise_value_error("negative shift count");
        if (y >= 63 || (x != 0 && (x > (std::numeric_limits<std::int64_t>::max() >> y) ||
                                   x < (std::numeric_limits<std::int64_t>::min() >> y)))) {
          overflow();
        }
        return Value::integer(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << y));
      case BinOp::kRShift:
        if (y < 0) raise_value_error("negative shift count");
        return Value::integer(y >= 64 ? (x < 0 ? -1 : 0) : x >> y);
      case BinOp::kBitAnd:
        if (a.is(Kind::kBool) && b.is(Kind::kBool)) return Value::boolean(x & y);
        return Value::integer(x & y);
      case BinOp::kBitOr:
        if (a.is(Kind::kBool) && b.is(Kind::kBool)) return Value::boolean(x | y);
        return Value::integer(x | y);
      case BinOp::kBitXor:
        if (a.is(Kind::kBool) && b.is(Kind::kBool)) return Value::boolean(x ^ y);
        return Value::integer(x ^ y);
      case BinOp::kMatMul:
        unsupported("@", a, b);
    }
  }
  double x = a.as_float();
  double y = b.as_float();
  switch (op) {
    case BinOp::kAdd: return Value::floating(x + y);
    case BinOp::kSub: return Value::floating(x - y);
    case BinOp::kMul: return Value::floating(x * y);
    case BinOp::kDiv:
      if (y == 0) raise_error("ZeroDivisionError", "float division by zero");
      return Value::floating(x / y);
    case BinOp::kFloorDiv:
      if (y == 0) raise_error("ZeroDivisionError", "float floor division by zero");
      return Value::floating(std::floor(x / y));
    case BinOp::kMod: {
      if (y == 0) raise_error("ZeroDivisionError", "float modulo by zero");
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return Value::floating(m);
    }
    case BinOp::kPow:
      if (x == 0 && y < 0) raise_error("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y)) {
        raise_not_implemented("complex results of ** (negative base, fractional exponent)", "spmdsim numbers are real");
      }
      return Value::floating(std::pow(x, y));
    default:
      unsupported(binop_symbol(op), a, b);
  }
}

bool is_array_operand(const Value& v) { return v.is(Kind::kArray) || v.is_number(); }

std::string class_text(const Value& v) {
  std::string t = type_name(v);
  if (t == "ArrayImpl") return "<class 'jaxlib.xla_extension.ArrayImpl'>";
  return "<class '" + t + "'>";
}

Value array_binop(ExecState& st, BinOp op, const Value& a, const Value& b) {
  static const char* kNames[] = {"add", "subtract", "multiply", "matmul", "true_divide", "floor_divide", "remainder",
                                 "power", "left_shift", "right_shift", "bitwise_or", "bitwise_xor", "bitwise_and"};
  const char* name = kNames[static_cast<int>(op)];
  if (!is_array_operand(a)) {
    raise_type_error(std::string(name) + " requires ndarray or scalar arguments, got " + class_text(a) + " at position 0.");
  }
  if (!is_array_operand(b)) {
    raise_type_error(std::string(name) + " requires ndarray or scalar arguments, got " + class_text(b) + " at position 1.");
  }
  Array x = to_array(st, a);
  Array y = to_array(st, b);
  switch (op) {
    case BinOp::kAdd: return Value::array(binary(BinaryOp::kAdd, x, y));
    case BinOp::kSub: return Value::array(binary(BinaryOp::kSubtract, x, y));
    case BinOp::kMul: return Value::array(binary(BinaryOp::kMultiply, x, y));
    case BinOp::kDiv: return Value::array(binary(BinaryOp::kDivide, x, y));
    case BinOp::kFloorDiv: return Value::array(binary(BinaryOp::kFloorDivide, x, y));
    case BinOp::kMod: return Value::array(binary(BinaryOp::kRemainder, x, y));
    case BinOp::kPow: return Value::array(binary(BinaryOp::kPower, x, y));
    case BinOp::kMatMul: return Value::array(matmul(x, y));
    case BinOp::kBitAnd: return Value::array(binary(BinaryOp::kBitwiseAnd, x, y));
    case BinOp::kBitOr: return Value::array(binary(BinaryOp::kBitwiseOr, x, y));
    case BinOp::kBitXor: return Value::array(binary(BinaryOp::kBitwiseXor, x, y));
    case BinOp::kLShift:
    case BinOp::kRShift:
      raise_not_implemented("shifts of arrays", "multiply or divide by powers of two");
  }
  unsupported(binop_symbol(op), a, b);
}

std::vector<Value> repeat_items(const std::vector<Value>& items, std::int64_t n) {
  check_size(static_cast<double>(items.size()) * static_cast<double>(std::max<std::int64_t>(n, 0)), "sequence");
  std::vector<Value> out;
  for (std::int64_t k = 0; k < n; ++k) out.insert(out.end(), items.begin(), items.end());
  return out;
}

}  // namespace

Value binary_op(Interpreter& interp, ExecState& st, BinOp op, const Value& a, const Value& b) {
  if (a.is(Kind::kArray) || b.is(Kind::kArray)) return array_binop(st, op, a, b);
  if (a.is_number() && b.is_number()) return number_binop(op, a, b);
  const char* sym = binop_symbol(op);
  switch (a.kind()) {
    case Kind::kStr:
      if (op == BinOp::kAdd && b.is(Kind::kStr)) return Value::str(a.as_str() + b.as_str());
      if (op == BinOp::kMul && b.is_int_like()) {
        check_size(static_cast<double>(a.as_str().size()) * static_cast<double>(std::max<std::int64_t>(b.as_int(), 0)), "string");
        std::string out;
        for (std::int64_t k = 0; k < b.as_int(); ++k) out += a.as_str();
        return Value::str(std::move(out));
      }
      if (op == BinOp::kMod) return Value::str(percent_format(interp, st, a.as_str(), b));
      if (op == BinOp::kAdd) {
        raise_type_error("can only concatenate str (not \"" + type_name(b) + "\") to str",
                         "convert the value first, e.g. str(x), or use an f-string");
      }
      break;
    case Kind::kList:
      if (op == BinOp::kAdd && b.is(Kind::kList)) {
        std::vector<Value> items = interp.iterate(st, a);
        std::vector<Value> more = interp.iterate(st, b);
        items.insert(items.end(), more.begin(), more.end());
        return Value::list(std::move(items), st.token);
      }
      if (op == BinOp::kMul && b.is_int_like()) return Value::list(repeat_items(interp.iterate(st, a), b.as_int()), st.token);
      if (op == BinOp::kAdd) {
        raise_type_error("can only concatenate list (not \"" + type_name(b) + "\") to list");
      }
      break;
    case Kind::kTuple:
      if (op == BinOp::kAdd && b.is(Kind::kTuple)) {
        std::vector<Value> items = a.tuple_items();
        items.insert(items.end(), b.tuple_items().begin(), b.tuple_items().end());
        return Value::tuple(std::move(items));
      }
      if (op == BinOp::kMul && b.is_int_like()) return Value::tuple(repeat_items(a.tuple_items(), b.as_int()));
      if (op == BinOp::kAdd) {
        raise_type_error("can only concatenate tuple (not \"" + type_name(b) + "\") to tuple");
      }
      break;
    case Kind::kSet:
      if (b.is(Kind::kSet) && (op == BinOp::kBitOr || op == BinOp::kBitAnd || op == BinOp::kSub || op == BinOp::kBitXor)) {
        std::vector<Value> x = interp.iterate(st, a);
        std::vector<Value> y = interp.iterate(st, b);
        Value out = make_set(st.token);
        auto& m = out.as<SetObject>().map;
        const auto& bm = b.as<SetObject>().map;
        const auto& am = a.as<SetObject>().map;
        for (const auto& v : x) {
          bool in_b = bm.find(v) != nullptr;
          if (op == BinOp::kBitOr || (op == BinOp::kBitAnd && in_b) || (op == BinOp::kSub && !in_b) ||
              (op == BinOp::kBitXor && !in_b)) {
            m.set(v, Value::none());
          }
        }
        if (op == BinOp::kBitOr || op == BinOp::kBitXor) {
          for (const auto& v : y) {
            if (op == BinOp::kBitOr || am.find(v) == nullptr) m.set(v, Value::none());
          }
        }
        return out;
      }
      break;
    case Kind::kDict:
      if (op == BinOp::kBitOr && b.is(Kind::kDict)) {
        Value out = make_dict(st.token);
        auto& m = out.as<DictObject>().map;
        a.as<DictObject>().map.for_each([&](const Value& k, const Value& v) { m.set(k, v); });
        b.as<DictObject>().map.for_each([&](const Value& k, const Value& v) { m.set(k, v); });
        return out;
      }
      break;
    default:
      break;
  }
  if (op == BinOp::kMul && a.is_int_like() && (b.is(Kind::kStr) || b.is(Kind::kList) || b.is(Kind::kTuple))) {
    return binary_op(interp, st, op, b, a);
  }
  unsupported(sym, a, b);
}

Value unary_op(Interpreter& interp, ExecState& st, UnOp op, const Value& a) {
  if (a.is(Kind::kArray)) {
    const Array& x = a.as_array();
    switch (op) {
      case UnOp::kNeg: return Value::array(unary(spmd::UnaryOp::kNegative, x));
      case UnOp::kPos: return Value::array(unary(spmd::UnaryOp::kPositive, x));
      case UnOp::kInvert: return Value::array(unary(spmd::UnaryOp::kBitwiseNot, x));
      case UnOp::kNot: return Value::boolean(!interp.truthy(st, a));
    }
  }
  const char* sym = op == UnOp::kNeg ? "-" : op == UnOp::kPos ? "+" : "~";
  if (a.is_int_like()) {
    std::int64_t x = a.as_int();
    switch (op) {
      case UnOp::kNeg:
        if (x == std::numeric_limits<std::int64_t>::min()) overflow();
        return Value::integer(-x);
      case UnOp::kPos: return Value::integer(x);
      case UnOp::kInvert: return Value::integer(~x);
      case UnOp::kNot: return Value::boolean(x == 0);
    }
  }
  if (a.is(Kind::kFloat)) {
    if (op == UnOp::kNeg) return Value::floating(-a.as_float());
    if (op == UnOp::kPos) return a;
  }
  raise_type_error(std::string("bad operand type for unary ") + sym + ": '" + type_name(a) + "'");
}

namespace {

int compare_sequences(Interpreter& interp, ExecState& st, const std::vector<Value>& x, const std::vector<Value>& y) {
  interp.check_native_stack(st);
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (py_equal(interp, st, x[i], y[i])) continue;
    return py_less(interp, st, x[i], y[i]) ? -1 : 1;
  }
  return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
}

bool ordered_result(CmpOp op, int c) {
  switch (op) {
    case CmpOp::kLt: return c < 0;
    case CmpOp::kLtE: return c <= 0;
    case CmpOp::kGt: return c > 0;
    case CmpOp::kGtE: return c >= 0;
    case CmpOp::kEq: return c == 0;
    case CmpOp::kNotEq: return c != 0;
    default: return false;
  }
}

BinaryOp array_cmp(CmpOp op) {
  switch (op) {
    case CmpOp::kEq: return BinaryOp::kEqual;
    case CmpOp::kNotEq: return BinaryOp::kNotEqual;
    case CmpOp::kLt: return BinaryOp::kLess;
    case CmpOp::kLtE: return BinaryOp::kLessEqual;
    case CmpOp::kGt: return BinaryOp::kGreater;
    default: return BinaryOp::kGreaterEqual;
  }
}

bool equal_values(Interpreter& interp, ExecState& st, const Value& a, const Value& b) {
  interp.check_native_stack(st);
  if (a.is_number() && b.is_number()) return keys_equal(a, b);
  if (a.is(Kind::kDType) && b.is(Kind::kStr)) return parse_dtype(b.as_str()) == a.as_dtype();
  if (a.is(Kind::kStr) && b.is(Kind::kDType)) return parse_dtype(a.as_str()) == b.as_dtype();
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kNone:
    case Kind::kEllipsis:
      return true;
    case Kind::kStr:
      return a.as_str() == b.as_str();
    case Kind::kDType:
      return a.as_dtype() == b.as_dtype();
    case Kind::kTuple:
    case Kind::kList: {
      std::vector<Value> x = interp.iterate(st, a);
      std::vector<Value> y = interp.iterate(st, b);
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!x[i].is_same(y[i]) && !py_equal(interp, st, x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      auto x = a.as<DictObject>().map.items();
      const auto& ym = b.as<DictObject>().map;
      if (x.size() != ym.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* w = ym.find(k);
        if (!w || !py_equal(interp, st, v, *w)) return false;
      }
      return true;
    }
    case Kind::kSet: {
      const auto& xm = a.as<SetObject>().map;
      const auto& ym = b.as<SetObject>().map;
      if (xm.size() != ym.size()) return false;
      for (const auto& k : xm.keys()) {
        if (!ym.find(k)) return false;
      }
      return true;
    }
    case Kind::kRange: {
      const auto& x = a.as<RangeObject>();
      const auto& y = b.as<RangeObject>();
      return x.length() == y.length() && (x.length() == 0 || (x.start == y.start && (x.length() == 1 || x.step == y.step)));
    }
    case Kind::kException: {
      return a.is_same(b);
    }
    default:
      return a.is_same(b);
  }
}

}  // namespace

Value compare_op(Interpreter& interp, ExecState& st, CmpOp op, const Value& a, const Value& b) {
  switch (op) {
    case CmpOp::kIs:
      return Value::boolean(a.is_same(b));
    case CmpOp::kIsNot:
      return Value::boolean(!a.is_same(b));
    case CmpOp::kIn:
      return Value::boolean(interp.contains(st, b, a));
    case CmpOp::kNotIn:
      return Value::boolean(!interp.contains(st, b, a));
    default:
      break;
  }
  if (a.is(Kind::kArray) || b.is(Kind::kArray)) {
    if (is_array_operand(a) && is_array_operand(b)) {
      return Value::array(binary(array_cmp(op), to_array(st, a), to_array(st, b)));
    }
    if (op == CmpOp::kEq) return Value::boolean(false);
    if (op == CmpOp::kNotEq) return Value::boolean(true);
    raise_type_error(std::string("'") + cmpop_symbol(op) + "' not supported between instances of '" + type_name(a) +
                     "' and '" + type_name(b) + "'");
  }
  if (op == CmpOp::kEq) return Value::boolean(equal_values(interp, st, a, b));
  if (op == CmpOp::kNotEq) return Value::boolean(!equal_values(interp, st, a, b));
  if (a.is_number() && b.is_number()) {
    if (a.is_int_like() && b.is_int_like()) {
      std::int64_t x = a.as_int(), y = b.as_int();
      return Value::boolean(ordered_result(op, x < y ? -1 : x > y ? 1 : 0));
    }
    double x = a.as_float(), y = b.as_float();
    if (std::isnan(x) || std::isnan(y)) return Value::boolean(false);
    return Value::boolean(ordered_result(op, x < y ? -1 : x > y ? 1 : 0));
  }
  if (a.is(Kind::kStr) && b.is(Kind::kStr)) {
    int c = a.as_str().compare(b.as_str());
    return Value::boolean(ordered_result(op, c < 0 ? -1 : c > 0 ? 1 : 0));
  }
  if ((a.is(Kind::kTuple) && b.is(Kind::kTuple)) || (a.is(Kind::kList) && b.is(Kind::kList))) {
    return Value::boolean(ordered_result(op, compare_sequences(interp, st, interp.iterate(st, a), interp.iterate(st, b))));
  }
  if (a.is(Kind::kSet) && b.is(Kind::kSet)) {
    const auto& xm = a.as<SetObject>().map;
    const auto& ym = b.as<SetObject>().map;
    bool sub = true;
    for (const auto& k : xm.keys()) sub = sub && ym.find(k);
    bool super = true;
    for (const auto& k : ym.keys()) super = super && xm.find(k);
    switch (op) {
      case CmpOp::kLtE: return Value::boolean(sub);
      case CmpOp::kLt: return Value::boolean(sub && xm.size() < ym.size());
      case CmpOp::kGtE: return Value::boolean(super);
      default: return Value::boolean(super && xm.size() > ym.size());
    }
  }
  raise_type_error(std::string("'") + cmpop_symbol(op) + "' not supported between instances of '" + type_name(a) +
                   "' and '" + type_name(b) + "'");
}

bool py_equal(Interpreter& interp, ExecState& st, const Value& a, const Value& b) {
  Value r = compare_op(interp, st, CmpOp::kEq, a, b);
  return interp.truthy(st, r);
}

bool py_less(Interpreter& interp, ExecState& st, const Value& a, const Value& b) {
  Value r = compare_op(interp, st, CmpOp::kLt, a, b);
  return interp.truthy(st, r);
}

}  // namespace spmd::scenario
