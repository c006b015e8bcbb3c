// The traced program's data structure, its builder and its jaxpr text form.

#include "spmd/program/program.h"

#include <sstream>

#include "spmd/core/format.h"
#include "spmd/error.h"
#include "program/execution_plan.h"
#include "spmd/program/primitive.h"

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

class JaxprPrinter {
 public:
  std::string print(const Program& p, int indent) {
    std::map<Var, std::string> names;
    auto name_of = [&](Var v) -> const std::string& {
      auto it = names.find(v);
      if (it == names.end()) it = names.emplace(v, var_name(next_++)).first;
      return it->second;
    };
    auto atom = [&](const Program& prog, const Atom& a) {
      if (a.is_literal()) return literal_text(a.literal);
      return name_of(a.var);
    };
    auto typed = [&](const Program& prog, Var v) { return name_of(v) + ":" + prog.aval(v).str(); };

    std::ostringstream head;
    head << "{ lambda ; ";
    for (std::size_t i = 0; i < p.inputs().size(); ++i) head << (i ? " " : "") << typed(p, p.inputs()[i]);
    head << ". let";
    std::vector<std::string> lines;
    for (const Equation& eq : p.equations()) {
      std::ostringstream l;
      for (std::size_t i = 0; i < eq.outputs.size(); ++i) l << (i ? " " : "") << typed(p, eq.outputs[i]);
      l << " = " << eq.primitive->name << params_text(eq.params, indent + 4);
      for (const Atom& a : eq.inputs) l << " " << atom(p, a);
      lines.push_back(l.str());
    }
    std::ostringstream tail;
    tail << "in (";
    for (std::size_t i = 0; i < p.outputs().size(); ++i) tail << (i ? ", " : "") << atom(p, p.outputs()[i]);
    tail << (p.outputs().size() == 1 ? ",)" : ")") << " }";

    std::size_t width = head.str().size() + tail.str().size();
    bool multiline = false;
    for (const std::string& l : lines) {
      width += l.size() + 1;
      multiline = multiline || l.find('\n') != std::string::npos;
    }
    if (!multiline && width <= 80) {
      std::string s = head.str();
      for (const std::string& l : lines) s += " " + l;
      return s + " " + tail.str();
    }
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    std::string s = head.str() + "\n";
    for (const std::string& l : lines) s += pad + "    " + l + "\n";
    return s + pad + "  " + tail.str();
  }

 private:
  static std::string literal_text(const Array& a) {
    std::string v = a.size() == 1 ? format_scalar(a, 0) : "[...]";
    return v + ":" + a.abstract_type();
  }

  std::string params_text(const Params& params, int indent) {
    if (params.all().empty()) return "";
    std::string s = "[";
    bool first = true;
    for (const auto& [name, value] : params.all()) {
      if (name == "source") continue;  // spmdsim's own: which lax function made it, for reports
      if (!first) s += "\n" + std::string(static_cast<std::size_t>(indent), ' ') + " ";
      first = false;
      s += name + "=" + param_text(value, indent + 2);
    }
    // Short parameter lists stay on one line.
    if (s.find('{') == std::string::npos && s.size() < 60) {
      std::string flat;
      bool in_gap = false;
      for (char c : s) {
        if (c == '\n') {
          in_gap = true;
          continue;
        }
        if (in_gap && c == ' ') continue;
        if (in_gap) flat += ' ';
        in_gap = false;
        flat += c;
      }
      s = flat;
    }
    return s + "]";
  }

  std::string param_text(const Param& v, int indent) {
    struct Visit {
      JaxprPrinter& self;
      int indent;
      std::string operator()(std::int64_t x) const { return std::to_string(x); }
      std::string operator()(double x) const {
        std::ostringstream o;
        o << x;
        return o.str();
      }
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
      std::string operator()(const ProgramRef& p) const { return self.print(*p, indent); }
      std::string operator()(const std::vector<ProgramRef>& ps) const {
        std::string s = "(\n";
        for (const ProgramRef& p : ps) s += std::string(static_cast<std::size_t>(indent + 2), ' ') + self.print(*p, indent + 2) + "\n";
        return s + std::string(static_cast<std::size_t>(indent), ' ') + ")";
      }
    };
    return std::visit(Visit{*this, indent}, v);
  }

  int next_ = 0;
};

}  // namespace

std::string to_jaxpr_text(const Program& p) { return JaxprPrinter{}.print(p, 0); }

}  // namespace spmd::program
