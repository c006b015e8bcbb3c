#pragma once
// Python operators on Values: numbers follow Python, arrays follow jax.numpy
// (Python scalars mixed with arrays are weakly typed).

#include "scenario/ast.h"
#include "scenario/interpreter.h"
#include "scenario/value.h"

namespace spmd::scenario {

Value binary_op(Interpreter& interp, ExecState& st, BinOp op, const Value& a, const Value& b);
Value unary_op(Interpreter& interp, ExecState& st, UnOp op, const Value& a);
/// One comparison; arrays give arrays.
Value compare_op(Interpreter& interp, ExecState& st, CmpOp op, const Value& a, const Value& b);
/// Python `a == b` reduced to a bool (list.index, `in`, dict values...).
bool py_equal(Interpreter& interp, ExecState& st, const Value& a, const Value& b);
/// Python `a < b` as a bool (sorted, min, max).
bool py_less(Interpreter& interp, ExecState& st, const Value& a, const Value& b);

}  // namespace spmd::scenario
