// Grouping a program's equations into the executor's steps. See execution_plan.h.

#include "program/execution_plan.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>

#include "program/fusion.h"
#include "spmd/program/primitive.h"

namespace spmd::program {

namespace {

// The dimension-number lists of dot_general's operand `i` (0 lhs, 1 rhs).
const char* contracting_of(std::size_t i) { return i == 0 ? "lhs_contracting" : "rhs_contracting"; }
const char* batch_of(std::size_t i) { return i == 0 ? "lhs_batch" : "rhs_batch"; }

// dot_general reading transpose(y, perm) can read y instead, with each axis d
// of its lists renamed perm[d], when the operand's free axes keep their order
// in y (the result's axes follow it). nullopt where they do not.
std::optional<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> through_transpose(
    const Equation& dot, std::size_t i, const std::vector<std::int64_t>& perm) {
  const auto& contracting = dot.params.get<std::vector<std::int64_t>>(contracting_of(i), "dot_general");
  const auto& batch = dot.params.get<std::vector<std::int64_t>>(batch_of(i), "dot_general");
  auto renamed = [&](const std::vector<std::int64_t>& axes) {
    std::vector<std::int64_t> out;
    for (std::int64_t d : axes) out.push_back(perm[static_cast<std::size_t>(d)]);
    return out;
  };
  std::int64_t last_free = -1;
  for (std::size_t d = 0; d < perm.size(); ++d) {
    const auto axis = static_cast<std::int64_t>(d);
    if (std::find(contracting.begin(), contracting.end(), axis) != contracting.end()) continue;
    if (std::find(batch.begin(), batch.end(), axis) != batch.end()) continue;
    if (perm[d] < last_free) return std::nullopt;
    last_free = perm[d];
  }
  return std::pair{renamed(contracting), renamed(batch)};
}

// transpose(dot_general(a, b), perm) as one product that makes its result
// in perm's order: dot_general's out_permutation, which the kernel makes
// without a copy where it can (the free blocks swapped, as a product's rhs
// cotangent is written; rhs's leading free axes first, as jnp.matmul(w, x)
// of a stack or vmap of a product records it).
std::shared_ptr<const Equation> with_result_permuted(const Equation& transpose, const Equation& dot) {
  Equation eq = dot;
  eq.params.set("out_permutation", transpose.params.get<std::vector<std::int64_t>>("permutation", "transpose"));
  eq.outputs = transpose.outputs;
  eq.loc = transpose.loc;
  return std::make_shared<const Equation>(std::move(eq));
}

// The program's equations as the plan runs them (XLA's transpose folding:
// the product reads the layout it is given, so the copy is not needed); null
// where nothing changes. A transpose of a product read only by it becomes the
// product with its result permuted; then each dot_general whose operand is a
// transpose reads the transpose's operand through renamed axes.
std::vector<std::shared_ptr<const Equation>> fold_transposes(const Program& p) {
  const auto& eqs = p.equations();
  std::vector<int> defined_by(p.vars().size(), -1);
  std::vector<int> reads(p.vars().size(), 0);
  for (std::size_t k = 0; k < eqs.size(); ++k) {
    for (Var v : eqs[k].outputs) defined_by[static_cast<std::size_t>(v)] = static_cast<int>(k);
    for (const Atom& a : eqs[k].inputs) {
      if (!a.is_literal()) ++reads[static_cast<std::size_t>(a.var)];
    }
  }
  for (const Atom& a : p.outputs()) {
    if (!a.is_literal()) ++reads[static_cast<std::size_t>(a.var)];
  }
  auto producer = [&](const Atom& a, const char* name) -> const Equation* {
    if (a.is_literal() || defined_by[static_cast<std::size_t>(a.var)] < 0) return nullptr;
    const Equation& e = eqs[static_cast<std::size_t>(defined_by[static_cast<std::size_t>(a.var)])];
    return e.primitive->name == name ? &e : nullptr;
  };
  std::vector<std::shared_ptr<const Equation>> rewritten(eqs.size());
  for (std::size_t k = 0; k < eqs.size(); ++k) {
    if (eqs[k].primitive->name != "transpose") continue;
    const Equation* dot = producer(eqs[k].inputs[0], "dot_general");
    if (dot != nullptr && reads[static_cast<std::size_t>(eqs[k].inputs[0].var)] == 1) {
      rewritten[k] = with_result_permuted(eqs[k], *dot);
    }
  }
  for (std::size_t k = 0; k < eqs.size(); ++k) {
    const Equation& original = rewritten[k] ? *rewritten[k] : eqs[k];
    if (original.primitive->name != "dot_general") continue;
    Equation eq = original;
    bool changed = false;
    for (std::size_t i = 0; i < 2; ++i) {
      const Equation* t = producer(eq.inputs[i], "transpose");
      if (t == nullptr) continue;
      auto lists = through_transpose(eq, i, t->params.get<std::vector<std::int64_t>>("permutation", "transpose"));
      if (!lists) continue;
      eq.params.set(contracting_of(i), std::move(lists->first));
      eq.params.set(batch_of(i), std::move(lists->second));
      eq.inputs[i] = t->inputs[0];
      changed = true;
    }
    if (changed) rewritten[k] = std::make_shared<const Equation>(std::move(eq));
  }
  return rewritten;
}

}  // namespace

ExecutionPlan make_execution_plan(const Program& p) {
  const auto& eqs = p.equations();
  const int n = static_cast<int>(eqs.size());
  const std::vector<std::shared_ptr<const Equation>> rewritten = fold_transposes(p);
  auto as_run = [&](int k) -> const Equation& {
    const auto& r = rewritten[static_cast<std::size_t>(k)];
    return r ? *r : eqs[static_cast<std::size_t>(k)];
  };
  // The last equation reading each variable; program outputs live on.
  std::vector<int> last_read(p.vars().size(), -1);
  for (int k = 0; k < n; ++k) {
    for (const Atom& a : as_run(k).inputs) {
      if (!a.is_literal()) last_read[static_cast<std::size_t>(a.var)] = k;
    }
  }
  for (const Atom& a : p.outputs()) {
    if (!a.is_literal()) last_read[static_cast<std::size_t>(a.var)] = INT_MAX;
  }

  ExecutionPlan plan;
  for (int k = 0; k < n;) {
    // A transpose folded into every product that read it, or a product
    // folded into the transpose that read it, is not run at all.
    const std::string& name = eqs[static_cast<std::size_t>(k)].primitive->name;
    if ((name == "transpose" || name == "dot_general") &&
        last_read[static_cast<std::size_t>(eqs[static_cast<std::size_t>(k)].outputs[0])] < 0) {
      ++k;
      continue;
    }
    PlanStep step;
    step.first_equation = k;
    step.rewritten = rewritten[static_cast<std::size_t>(k)];
    const int run = fusible_run_length(p, k);
    if (run >= 2) {
      step.equation_count = run;
      step.fused = make_fused_chain(p, k, run, last_read);
    }
    const int end = k + step.equation_count;
    for (int e = k; e < end; ++e) {
      const Equation& eq = as_run(e);
      for (const Atom& a : eq.inputs) {
        if (a.is_literal()) continue;
        // Read for the last time here: dropped after the step (once).
        if (last_read[static_cast<std::size_t>(a.var)] == e) {
          bool listed = false;
          for (Var v : step.release) listed = listed || v == a.var;
          if (!listed) step.release.push_back(a.var);
        }
      }
      // A result nobody reads is dropped at once.
      for (Var v : eq.outputs) {
        if (last_read[static_cast<std::size_t>(v)] < 0) step.release.push_back(v);
      }
    }
    plan.steps.push_back(std::move(step));
    k = end;
  }
  return plan;
}

const Equation& step_equation(const Program& p, const PlanStep& step) {
  return step.rewritten ? *step.rewritten : p.equations()[static_cast<std::size_t>(step.first_equation)];
}

const std::vector<Atom>& step_inputs(const Program& p, const PlanStep& step) {
  return step.fused ? step.fused->inputs() : step_equation(p, step).inputs;
}

const std::vector<Var>& step_outputs(const Program& p, const PlanStep& step) {
  return step.fused ? step.fused->outputs() : step_equation(p, step).outputs;
}

}  // namespace spmd::program
