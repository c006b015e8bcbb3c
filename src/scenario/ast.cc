#include "scenario/ast.h"

#include <cstdio>

namespace spmd::scenario {

const char* binop_symbol(BinOp op) {
  switch (op) {
    case BinOp::kAdd: return "+";
    case BinOp::kSub: return "-";
    case BinOp::kMul: return "*";
    case BinOp::kMatMul: return "@";
    case BinOp::kDiv: return "/";
    case BinOp::kFloorDiv: return "//";
    case BinOp::kMod: return "%";
    case BinOp::kPow: return "**";
    case BinOp::kLShift: return "<<";
    case BinOp::kRShift: return ">>";
    case BinOp::kBitOr: return "|";
    case BinOp::kBitXor: return "^";
    case BinOp::kBitAnd: return "&";
  }
  return "?";
}

const char* cmpop_symbol(CmpOp op) {
  switch (op) {
    case CmpOp::kEq: return "==";
    case CmpOp::kNotEq: return "!=";
    case CmpOp::kLt: return "<";
    case CmpOp::kLtE: return "<=";
    case CmpOp::kGt: return ">";
    case CmpOp::kGtE: return ">=";
    case CmpOp::kIs: return "is";
    case CmpOp::kIsNot: return "is not";
    case CmpOp::kIn: return "in";
    case CmpOp::kNotIn: return "not in";
  }
  return "?";
}

namespace {

std::string constant_source(const Value& v) {
  switch (v.kind()) {
    case Kind::kNone: return "None";
    case Kind::kBool: return v.as_bool() ? "True" : "False";
    case Kind::kInt: return std::to_string(v.as_int());
    case Kind::kFloat: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.as_float());
      return buf;
    }
    case Kind::kEllipsis: return "...";
    case Kind::kStr: {
      std::string s = "'";
      for (char c : v.as_str()) {
        if (c == '\'' || c == '\\') s += '\\';
        if (c == '\n') {
          s += "\\n";
          continue;
        }
        s += c;
      }
      return s + "'";
    }
    default: return "...";
  }
}

std::string join(const std::vector<ExprPtr>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += expr_to_source(*items[i]);
  }
  return s;
}

}  // namespace

std::string expr_to_source(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kName: return static_cast<const NameExpr&>(e).id;
    case ExprKind::kConstant: return constant_source(static_cast<const ConstantExpr&>(e).value);
    case ExprKind::kFString: return "f'...'";
    case ExprKind::kBinOp: {
      const auto& x = static_cast<const BinOpExpr&>(e);
      return expr_to_source(*x.left) + " " + binop_symbol(x.op) + " " + expr_to_source(*x.right);
    }
    case ExprKind::kUnaryOp: {
      const auto& x = static_cast<const UnaryExpr&>(e);
      const char* sym = x.op == UnOp::kNeg ? "-" : x.op == UnOp::kPos ? "+" : x.op == UnOp::kInvert ? "~" : "not ";
      return sym + expr_to_source(*x.operand);
    }
    case ExprKind::kBoolOp: {
      const auto& x = static_cast<const BoolOpExpr&>(e);
      std::string s;
      for (std::size_t i = 0; i < x.values.size(); ++i) {
        if (i) s += x.is_and ? " and " : " or ";
        s += expr_to_source(*x.values[i]);
      }
      return s;
    }
    case ExprKind::kCompare: {
      const auto& x = static_cast<const CompareExpr&>(e);
      std::string s = expr_to_source(*x.left);
      for (std::size_t i = 0; i < x.ops.size(); ++i) {
        s += std::string(" ") + cmpop_symbol(x.ops[i]) + " " + expr_to_source(*x.comparators[i]);
      }
      return s;
    }
    case ExprKind::kCall: {
      const auto& x = static_cast<const CallExpr&>(e);
      std::string s = expr_to_source(*x.func) + "(";
      for (std::size_t i = 0; i < x.args.size(); ++i) {
        if (i) s += ", ";
        const auto& a = x.args[i];
        if (a.kind == Argument::Kind::kStar) s += "*";
        if (a.kind == Argument::Kind::kDoubleStar) s += "**";
        if (a.kind == Argument::Kind::kKeyword) s += a.keyword + "=";
        s += expr_to_source(*a.value);
      }
      return s + ")";
    }
    case ExprKind::kAttribute: {
      const auto& x = static_cast<const AttributeExpr&>(e);
      return expr_to_source(*x.value) + "." + x.attr;
    }
    case ExprKind::kSubscript: {
      const auto& x = static_cast<const SubscriptExpr&>(e);
      std::string idx;
      if (x.index->kind == ExprKind::kTuple) {
        idx = join(static_cast<const SequenceExpr&>(*x.index).elts);
      } else {
        idx = expr_to_source(*x.index);
      }
      return expr_to_source(*x.value) + "[" + idx + "]";
    }
    case ExprKind::kSlice: {
      const auto& x = static_cast<const SliceExpr&>(e);
      std::string s = (x.lower ? expr_to_source(*x.lower) : "") + ":" + (x.upper ? expr_to_source(*x.upper) : "");
      if (x.step) s += ":" + expr_to_source(*x.step);
      return s;
    }
    case ExprKind::kTuple: {
      const auto& x = static_cast<const SequenceExpr&>(e);
      return "(" + join(x.elts) + (x.elts.size() == 1 ? ",)" : ")");
    }
    case ExprKind::kList: return "[" + join(static_cast<const SequenceExpr&>(e).elts) + "]";
    case ExprKind::kSet: return "{" + join(static_cast<const SequenceExpr&>(e).elts) + "}";
    case ExprKind::kDict: return "{...}";
    case ExprKind::kListComp: return "[...]";
    case ExprKind::kSetComp:
    case ExprKind::kDictComp: return "{...}";
    case ExprKind::kGenExp: return "(...)";
    case ExprKind::kLambda: return "lambda";
    case ExprKind::kIfExp: {
      const auto& x = static_cast<const IfExpExpr&>(e);
      return expr_to_source(*x.body) + " if " + expr_to_source(*x.test) + " else " + expr_to_source(*x.orelse);
    }
    case ExprKind::kStarred: return "*" + expr_to_source(*static_cast<const StarredExpr&>(e).value);
  }
  return "...";
}

}  // namespace spmd::scenario
