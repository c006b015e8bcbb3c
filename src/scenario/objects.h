#pragma once
// Callable and namespace objects of the interpreter: user functions, native
// (C++) functions, modules, and the CustomObject interface for JAX-specific
// objects (pmap-ed functions, devices, `x.at[...]`, partials, ...).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/ast.h"
#include "scenario/value.h"
#include "spmd/source_loc.h"

namespace spmd::scenario {

class Interpreter;
struct ExecState;

/// Arguments of a call, after * and ** expansion.
struct CallArgs {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
};

/// Where a call happens in the program (for errors, collectives and warnings).
struct CallSite {
  Pos pos;
  const CallExpr* call = nullptr;  ///< null for calls made by natives (map, lax.cond, ...)
};

/// What a native function sees of its call.
struct NativeCall {
  Interpreter& interp;
  ExecState& st;
  const CallSite& site;
  const Value& self;  ///< the receiver of a bound method, else undefined
  const Value& data;  ///< data stored with the native (e.g. which jnp op)
  const std::string& name;  ///< qualified name, for messages ("jax.numpy.sum")
  SourceLoc loc() const;
  /// Python source of the receiver (`results` in `results.append(x)`), or `fallback`.
  std::string receiver_text(std::string_view fallback) const;
};

using NativeFn = Value (*)(NativeCall& c, CallArgs& args);

struct NativeObject : Object {
  NativeObject(std::string n, NativeFn f, Value s, Value d)
      : name(std::move(n)), fn(f), self(std::move(s)), data(std::move(d)) {}
  std::string name;
  NativeFn fn;
  Value self;
  Value data;
};

Value make_native(std::string name, NativeFn fn, Value self = {}, Value data = {});

struct FunctionObject : Object {
  FunctionObject(const FunctionCode* c, std::uint64_t owner) : Object(owner), code(c) {}
  const FunctionCode* code;
  std::vector<Value> defaults;  ///< per parameter; undefined where there is none
  std::vector<std::shared_ptr<CellObject>> closure;
  PyDict attrs;                 ///< f.attr = value
};

struct ModuleObject : Object {
  explicit ModuleObject(std::string n) : name(std::move(n)) {}
  std::string name;  ///< "jax.numpy"
  PyDict attrs;
  void set(const std::string& key, Value v) { attrs.set(Value::str(key), std::move(v)); }
};

/// Objects with behaviour defined in C++.
class CustomObject : public Object {
 public:
  using Object::Object;
  virtual std::string type_name() const = 0;
  virtual std::string repr(ExecState& st) const = 0;
  /// Sets `out` and returns true when `name` is an attribute.
  virtual bool get_attr(Interpreter& interp, ExecState& st, const Value& self, const std::string& name,
                        Value& out) const {
    return false;
  }
  virtual bool callable() const { return false; }
  virtual Value call(Interpreter& interp, ExecState& st, const Value& self, CallArgs& args, const CallSite& site);
  /// obj[index]; returns false when not subscriptable.
  virtual bool get_item(Interpreter& interp, ExecState& st, const Value& index, Value& out) const { return false; }
  /// `with obj:` support.
  virtual bool is_context_manager() const { return false; }
  virtual Value enter(Interpreter& interp, ExecState& st) const { return Value::none(); }
  /// Must not throw.
  virtual void exit(Interpreter& interp, ExecState& st) const noexcept {}
};

/// Python's type name of a value: "int", "list", "ArrayImpl", "function", ...
std::string type_name(const Value& v);

}  // namespace spmd::scenario
