#pragma once
/// \file
/// A traced program: what `jax.pmap` / `jax.jit` record when they run the
/// user's Python function once on abstract values, and what every device then
/// executes in C++ (see executor.h) without running any Python.
///
/// The form follows JAX's jaxpr: numbered variables with an abstract value
/// (shape, dtype, weak type), equations that apply a primitive to variables or
/// literals and define new variables, and sub-programs as parameters (the
/// branches of a cond, the body of a while). Every equation carries the user's
/// file:line:column, so a report on a device names the Python expression that
/// recorded it.
///
///   ProgramBuilder b;
///   Var x = b.add_input({{4}, DType::kFloat32});
///   auto y = b.add_equation("mul", {x, Atom::literal(Array::scalar(2, kDefaultFloat, true))}, {}, loc);
///   b.set_outputs({y[0]});
///   std::shared_ptr<const Program> p = b.finish();

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/source_loc.h"

namespace spmd::program {

/// What tracing knows of a value: JAX's ShapedArray.
struct Aval {
  Shape shape;
  DType dtype = kDefaultFloat;
  bool weak_type = false;
  /// "f32[4,10]"; a weakly typed value is marked "f32[]{weak}" only in
  /// debugging output, never here.
  std::string str() const;
  friend bool operator==(const Aval&, const Aval&) = default;
  static Aval of(const Array& a) { return {a.shape(), a.dtype(), a.weak_type()}; }
};

/// A variable of a program: its index in Program::vars.
using Var = int;

/// An operand of an equation: a variable, or a literal constant (a host
/// array captured at trace time: a Python scalar, a numpy array, a concrete
/// jax array closed over).
struct Atom {
  Var var = -1;
  Array literal;  ///< valid() only for literals
  bool is_literal() const { return literal.valid(); }
  static Atom of(Var v) { return Atom{v, {}}; }
  static Atom of_literal(Array a) { return Atom{-1, std::move(a)}; }
};

class Program;
struct ExecutionPlan;
using ProgramRef = std::shared_ptr<const Program>;

/// A parameter of an equation (axis names, axes, a branch program, ...).
using Param = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>,
                           std::vector<std::string>, ProgramRef, std::vector<ProgramRef>>;

/// The parameters of one equation, by name, in name order (as jaxprs print them).
class Params {
 public:
  void set(std::string name, Param value) { values_[std::move(name)] = std::move(value); }
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  /// The parameter `name` as T; throws InvalidArgument naming the primitive
  /// when it is missing or of another type (a front end's bug, not the user's).
  template <class T>
  const T& get(std::string_view name, std::string_view primitive) const;
  /// The parameter, or `fallback` when absent.
  template <class T>
  T get_or(std::string_view name, T fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    const T* v = std::get_if<T>(&it->second);
    return v ? *v : fallback;
  }
  const std::map<std::string, Param, std::less<>>& all() const { return values_; }

 private:
  [[noreturn]] static void missing(std::string_view name, std::string_view primitive);
  std::map<std::string, Param, std::less<>> values_;
};

template <class T>
const T& Params::get(std::string_view name, std::string_view primitive) const {
  auto it = values_.find(name);
  const T* v = it == values_.end() ? nullptr : std::get_if<T>(&it->second);
  if (v == nullptr) missing(name, primitive);
  return *v;
}

struct Primitive;

/// outputs = primitive(inputs; params), recorded at `loc`.
struct Equation {
  const Primitive* primitive = nullptr;
  std::vector<Atom> inputs;
  std::vector<Var> outputs;
  Params params;
  SourceLoc loc;
};

/// A traced function: inputs, equations in order, outputs. Immutable once
/// built; shared by every device that runs it.
class Program {
 public:
  const std::vector<Aval>& vars() const { return vars_; }
  const Aval& aval(Var v) const { return vars_.at(static_cast<std::size_t>(v)); }
  const std::vector<Var>& inputs() const { return inputs_; }
  const std::vector<Atom>& outputs() const { return outputs_; }
  const std::vector<Equation>& equations() const { return equations_; }
  std::vector<Aval> input_avals() const;
  std::vector<Aval> output_avals() const;
  Aval aval_of(const Atom& a) const { return a.is_literal() ? Aval::of(a.literal) : aval(a.var); }
  /// How the executor runs it (steps, fused chains, when values die); made
  /// by ProgramBuilder::finish.
  const ExecutionPlan& plan() const { return *plan_; }

 private:
  friend class ProgramBuilder;
  std::vector<Aval> vars_;
  std::vector<Var> inputs_;
  std::vector<Atom> outputs_;
  std::vector<Equation> equations_;
  std::shared_ptr<const ExecutionPlan> plan_;
};

/// What abstract evaluation may consult besides the operands: the axes that
/// are bound where the equation is traced (pmap's axis_name and the enclosing
/// pmaps'), innermost last, so an unknown axis name fails at trace time as in JAX.
struct AxisFrame {
  std::string name;
  int size = 0;
};
using AxisEnv = std::vector<AxisFrame>;

/// Records a program equation by equation. Each add_equation checks the
/// operands with the primitive's abstract evaluation (shapes, dtypes, axis
/// names) and throws the same error the operation would throw when run.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(AxisEnv axes = {}) : axes_(std::move(axes)) {}
  Var add_input(Aval aval);
  std::vector<Var> add_equation(std::string_view primitive, std::vector<Atom> inputs, Params params, SourceLoc loc);
  void set_outputs(std::vector<Atom> outputs);
  const Aval& aval(Var v) const { return program_->vars_.at(static_cast<std::size_t>(v)); }
  Aval aval_of(const Atom& a) const { return program_->aval_of(a); }
  const AxisEnv& axes() const { return axes_; }
  /// The inputs `v`'s value depends on (positions in the input list, in
  /// order): error messages name the arguments a traced value came from.
  std::vector<int> input_dependencies(Var v) const;
  /// The finished program; the builder is empty afterwards.
  ProgramRef finish();

 private:
  Var new_var(Aval aval);
  AxisEnv axes_;
  std::shared_ptr<Program> program_ = std::make_shared<Program>();
};

/// JAX's constvars of p: the literals of its equations and outputs that are
/// not scalars (arrays the traced function closed over), each once, in order
/// of first use. spmdsim's programs carry them as literals; JAX hoists them
/// into the jaxpr's constvars, and so do its text and jax.make_jaxpr's
/// ClosedJaxpr.consts.
std::vector<Array> jaxpr_constants(const Program& p);
/// Which of `constants` (jaxpr_constants) the literal `a` is; -1 for none.
int jaxpr_constant_index(const std::vector<Array>& constants, const Array& a);

/// JAX's jaxpr text form:
///   { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }
/// with constvars before the ';': { lambda a:f32[3]; b:f32[]. let ... }
std::string to_jaxpr_text(const Program& p);

}  // namespace spmd::program
