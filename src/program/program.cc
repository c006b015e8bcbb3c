// The traced program's data structure, its builder and its jaxpr text form.

#include "spmd/program/program.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "spmd/core/format.h"
#include "spmd/error.h"
#include "program/execution_plan.h"
#include "spmd/program/primitive.h"
#include "util/pretty_printer.h"
#include "util/python_format.h"

namespace spmd::program {

std::string Aval::str() const { return abstract_type(dtype, shape); }

void Params::missing(std::string_view name, std::string_view primitive) {
  throw InvalidArgument(make_report("InternalError", "primitive '" + std::string(primitive) +
                                                         "' has no parameter '" + std::string(name) +
                                                         "' of the expected type",
                                    "this is a bug in spmdsim's jax package: please report it"));
}

std::vector<Aval> Program::input_avals() const {
  std::vector<Aval> out;
  for (Var v : inputs_) out.push_back(aval(v));
  return out;
}

std::vector<Aval> Program::output_avals() const {
  std::vector<Aval> out;
  for (const Atom& a : outputs_) out.push_back(aval_of(a));
  return out;
}

Var ProgramBuilder::new_var(Aval aval) {
  program_->vars_.push_back(std::move(aval));
  return static_cast<Var>(program_->vars_.size() - 1);
}

Var ProgramBuilder::add_input(Aval aval) {
  Var v = new_var(std::move(aval));
  program_->inputs_.push_back(v);
  return v;
}

std::vector<Var> ProgramBuilder::add_equation(std::string_view primitive, std::vector<Atom> inputs, Params params,
                                              SourceLoc loc) {
  const Primitive& p = find_primitive(primitive);
  std::vector<Aval> in;
  in.reserve(inputs.size());
  for (const Atom& a : inputs) in.push_back(aval_of(a));
  std::vector<Aval> out;
  try {
    out = p.abstract_eval(p, in, params, axes_);
  } catch (Error& e) {
    // Trace-time errors are about the user's expression that recorded it.
    if (!e.report().where.valid()) e.mutable_report().where = loc;
    throw;
  }
  Equation eq{&p, std::move(inputs), {}, std::move(params), loc};
  for (Aval& a : out) eq.outputs.push_back(new_var(std::move(a)));
  std::vector<Var> result = eq.outputs;
  program_->equations_.push_back(std::move(eq));
  return result;
}

std::vector<int> ProgramBuilder::input_dependencies(Var v) const {
  const Program& p = *program_;
  std::vector<bool> needed(p.vars_.size(), false);
  needed.at(static_cast<std::size_t>(v)) = true;
  for (auto eq = p.equations_.rbegin(); eq != p.equations_.rend(); ++eq) {
    bool feeds = false;
    for (Var out : eq->outputs) feeds = feeds || needed[static_cast<std::size_t>(out)];
    if (!feeds) continue;
    for (const Atom& a : eq->inputs) {
      if (!a.is_literal()) needed[static_cast<std::size_t>(a.var)] = true;
    }
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < p.inputs_.size(); ++i) {
    if (needed[static_cast<std::size_t>(p.inputs_[i])]) out.push_back(static_cast<int>(i));
  }
  return out;
}

void ProgramBuilder::set_outputs(std::vector<Atom> outputs) { program_->outputs_ = std::move(outputs); }

ProgramRef ProgramBuilder::finish() {
  program_->plan_ = std::make_shared<const ExecutionPlan>(make_execution_plan(*program_));
  ProgramRef done = std::move(program_);
  program_ = std::make_shared<Program>();
  return done;
}

// ---------------------------------------------------------------------------
// jaxpr text, as jax.make_jaxpr prints it.

namespace {

// JAX names variables a..z, ba..bz, ca..: digits in base 26 where the leading
// digit starts at 'b' once there are two.
std::string var_name(int n) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n > 0);
  if (s.size() > 1) s[0] = static_cast<char>(s[0] + 1);
  return s;
}

}  // namespace

std::vector<Array> jaxpr_constants(const Program& p) {
  std::vector<Array> out;
  auto visit = [&](const Atom& a) {
    if (a.is_literal() && a.literal.ndim() > 0 && jaxpr_constant_index(out, a.literal) < 0) out.push_back(a.literal);
  };
  for (const Equation& eq : p.equations()) {
    for (const Atom& a : eq.inputs) visit(a);
  }
  for (const Atom& a : p.outputs()) visit(a);
  return out;
}

int jaxpr_constant_index(const std::vector<Array>& constants, const Array& a) {
  for (std::size_t i = 0; i < constants.size(); ++i) {
    const Array& c = constants[i];
    if (c.raw_data() == a.raw_data() && c.shape() == a.shape() && c.dtype() == a.dtype()) return static_cast<int>(i);
  }
  return -1;
}

namespace {

// Parameters that are spmdsim's own bookkeeping, not JAX's: left out of the text.
bool hidden_param(const std::string& name) {
  return name == "source" || name == "capture_counts" || name == "capture_slots" || name == "trip_count" ||
         name == "rule";
}

// The jaxpr's document, built as JAX's core.pp_jaxpr builds it (names given
// in the same order, so variables are named as JAX names them).
class JaxprPrinter {
 public:
  // The top-level jaxpr hoists its constants into constvars, as
  // jax.make_jaxpr does; a sub-jaxpr's stay literals (JAX passes them to it
  // as operands, which spmdsim's programs do not record).
  pp::Doc jaxpr(const Program& p, bool top = false) {
    using namespace pp;
    std::vector<std::string> const_names;
    if (top) {
      top_ = &p;
      constants_ = jaxpr_constants(p);
      for (const Array& c : constants_) {
        const_name_.push_back(var_name(next_++));
        const_names.push_back(const_name_.back() + ":" + c.abstract_type());
      }
    }
    Doc constvars = names_doc(const_names, "");
    Doc invars = vars(p, p.inputs(), "", true);
    std::vector<Doc> eqns;
    for (const Equation& eq : p.equations()) eqns.push_back(equation(p, eq));
    std::vector<Atom> outs = p.outputs();
    Doc outvars = concat({text("("), atoms(p, outs, ","), text(outs.size() == 1 ? ",)" : ")")});
    return group(concat({nest(2, concat({text("{ "), text("lambda "), constvars, text("; "), invars, text(". "), text("let"),
                                          nest(2, concat({brk(), join(brk("; "), eqns)})), brk(), text("in "),
                                          outvars})),
                         text(" }")}));
  }

 private:
  using Key = std::pair<const Program*, Var>;

  const std::string& name_of(const Program& p, Var v) {
    auto it = names_.find(Key{&p, v});
    if (it == names_.end()) it = names_.emplace(Key{&p, v}, var_name(next_++)).first;
    return it->second;
  }

  std::string atom_text(const Program& p, const Atom& a) {
    if (a.is_literal() && &p == top_) {
      if (int c = jaxpr_constant_index(constants_, a.literal); c >= 0) return const_name_[static_cast<std::size_t>(c)];
    }
    if (a.is_literal()) return (a.literal.size() == 1 ? format_scalar(a.literal, 0) : "[...]") + ":" + a.literal.abstract_type();
    return name_of(p, a.var);
  }

  // pp_vars: the names joined by breakable spaces, each its own group.
  static pp::Doc names_doc(const std::vector<std::string>& names, const std::string& separator) {
    std::vector<pp::Doc> items;
    for (const std::string& n : names) items.push_back(pp::text(n));
    return pp::nest(2, pp::group(pp::join(pp::concat({pp::text(separator), pp::group(pp::brk())}), items)));
  }
  pp::Doc vars(const Program& p, const std::vector<Var>& vs, const std::string& separator, bool typed) {
    std::vector<std::string> names;
    for (Var v : vs) names.push_back(name_of(p, v) + (typed ? ":" + p.aval(v).str() : ""));
    return names_doc(names, separator);
  }
  pp::Doc atoms(const Program& p, const std::vector<Atom>& as, const std::string& separator) {
    std::vector<std::string> names;
    for (const Atom& a : as) names.push_back(atom_text(p, a));
    return names_doc(names, separator);
  }

  pp::Doc equation(const Program& p, const Equation& eq) {
    using namespace pp;
    const std::string& prim = eq.primitive->name;
    std::vector<std::pair<std::string, const Param*>> params;
    for (const auto& [name, value] : eq.params.all()) {
      if (!hidden_param(name)) params.emplace_back(name, &value);
    }
    for (const std::string& name : eq.primitive->unset_params) {
      if (!eq.params.has(name)) params.emplace_back(name, nullptr);
    }
    std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (prim == "jit") {
      // As JAX's jit rule: name= first, and the called jaxpr's variables named like the call's.
      std::stable_partition(params.begin(), params.end(), [](const auto& kv) { return kv.first == "name"; });
      if (const auto* body = std::get_if<ProgramRef>(&eq.params.all().at("jaxpr"))) {
        suggest_names(**body, (*body)->inputs(), p, eq.inputs);
        std::vector<Atom> outs;
        for (Var v : eq.outputs) outs.push_back(Atom::of(v));
        std::vector<Atom> inner = (*body)->outputs();
        std::vector<Var> inner_vars;
        for (const Atom& a : inner) inner_vars.push_back(a.is_literal() ? -1 : a.var);
        suggest_names(**body, inner_vars, p, outs);
      }
    }
    Doc lhs = vars(p, eq.outputs, "", true);
    std::vector<Doc> pairs;
    if (prim == "dot_general") pairs.push_back(text("dimension_numbers=" + dimension_numbers(eq.params)));
    for (const auto& [name, value] : params) {
      if (prim == "dot_general" && name.ends_with("_contracting")) continue;
      if (prim == "dot_general" && name.ends_with("_batch")) continue;
      pairs.push_back(concat({text(name + "="), value != nullptr ? param(*value) : text("None")}));
    }
    Doc kv = pairs.empty() ? nil()
                           : group(concat({nest(2, concat({text("["), brk(""), join(brk(), pairs)})), brk(""), text("]")}));
    Doc rhs = concat({text(prim), kv, text(" "), atoms(p, eq.inputs, "")});
    return eq.outputs.empty() ? rhs : concat({lhs, text(" = "), rhs});
  }

  // suggest_same_var_names: each unnamed variable of `for_p` named as its
  // counterpart in `like_p`, when that is a variable not used for another.
  void suggest_names(const Program& for_p, const std::vector<Var>& for_vars, const Program& like_p,
                     const std::vector<Atom>& like) {
    if (for_vars.size() != like.size()) return;
    std::set<Var> used;
    for (std::size_t i = 0; i < for_vars.size(); ++i) {
      if (like[i].is_literal() || for_vars[i] < 0 || used.count(like[i].var) || names_.count(Key{&for_p, for_vars[i]})) {
        continue;
      }
      used.insert(like[i].var);
      names_[Key{&for_p, for_vars[i]}] = name_of(like_p, like[i].var);
    }
  }

  // JAX's dot_general prints its four axis lists as one parameter, in lists:
  // (([1], [0]), ([], [])).
  static std::string dimension_numbers(const Params& params) {
    auto list = [&](const char* name) {
      const auto& xs = params.get<std::vector<std::int64_t>>(name, "dot_general");
      std::string s = "[";
      for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
      return s + "]";
    };
    return "((" + list("lhs_contracting") + ", " + list("rhs_contracting") + "), (" + list("lhs_batch") + ", " +
           list("rhs_batch") + "))";
  }

  pp::Doc param(const Param& v) {
    using namespace pp;
    if (const auto* prog = std::get_if<ProgramRef>(&v)) return jaxpr(**prog);
    if (const auto* progs = std::get_if<std::vector<ProgramRef>>(&v)) {
      std::vector<Doc> docs;
      for (const ProgramRef& q : *progs) docs.push_back(jaxpr(*q));
      return group(concat({nest(2, concat({text("("), brk(""), join(brk(), docs)})), brk(""), text(")")}));
    }
    struct Visit {
      std::string operator()(std::int64_t x) const { return std::to_string(x); }
      std::string operator()(double x) const { return float_repr(x); }
      std::string operator()(bool x) const { return x ? "True" : "False"; }
      std::string operator()(const std::string& x) const { return x; }
      std::string operator()(const std::vector<std::int64_t>& xs) const {
        std::string s = "(";
        for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
        return s + (xs.size() == 1 ? ",)" : ")");
      }
      std::string operator()(const std::vector<std::string>& xs) const {
        std::string s = "(";
        for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", '" : "'") + xs[i] + "'";
        return s + (xs.size() == 1 ? ",)" : ")");
      }
      std::string operator()(const ProgramRef&) const { return {}; }
      std::string operator()(const std::vector<ProgramRef>&) const { return {}; }
    };
    return text(std::visit(Visit{}, v));
  }

  std::map<Key, std::string> names_;
  int next_ = 0;
  // The top-level program's constvars (jaxpr_constants) and their names.
  const Program* top_ = nullptr;
  std::vector<Array> constants_;
  std::vector<std::string> const_name_;
};

}  // namespace

std::string to_jaxpr_text(const Program& p) { return pp::format(JaxprPrinter{}.jaxpr(p, true)); }

}  // namespace spmd::program
