#pragma once
// The built-in modules (jax, jax.numpy, jax.lax, ...) and attribute tables
// shared between files.

#include <string>

#include "scenario/interpreter.h"
#include "scenario/objects.h"
#include "scenario/value.h"

namespace spmd::scenario {

Value build_jax_module(Interpreter& interp);
Value build_debug_module(Interpreter& interp);
Value build_tree_util_module(Interpreter& interp, const std::string& name);
Value build_numpy_module(Interpreter& interp, const std::string& name);
Value build_nn_module(Interpreter& interp);
Value build_lax_module(Interpreter& interp);
Value build_random_module(Interpreter& interp);
Value build_functools_module(Interpreter& interp);
Value build_math_module(Interpreter& interp);
Value build_typing_module(Interpreter& interp);
Value build_time_module(Interpreter& interp);

/// A new, empty module object named `name` (e.g. "jax.lax").
std::shared_ptr<ModuleObject> new_module(const std::string& name);
/// Adds native function `name` to module `m` (its repr: "m.name").
void add_fn(ModuleObject& m, const std::string& name, NativeFn fn, Value data = {});

/// jnp.float32(x) and friends: an array of that dtype.
Value dtype_call(Interpreter& interp, ExecState& st, DType dtype, CallArgs& args);
/// The jax.errors module.
Value build_errors_module(Interpreter& interp);

/// Attributes and methods of arrays (x.shape, x.sum(), x.at, ...).
bool array_attribute(Interpreter& interp, ExecState& st, const Value& self, const std::string& name, Value& out);
/// Attributes and methods of str, list, dict, set, tuple, range, ...
bool builtin_attribute(Interpreter& interp, ExecState& st, const Value& self, const std::string& name, Value& out);

}  // namespace spmd::scenario
