// Grouping a program's equations into the executor's steps. See execution_plan.h.

#include "program/execution_plan.h"

#include <climits>

#include "program/fusion.h"
#include "spmd/program/primitive.h"

namespace spmd::program {

namespace {

// transpose[permutation] that swaps the last two axes and keeps the others.
bool swaps_last_two(const Equation& eq) {
  if (eq.primitive->name != "transpose") return false;
  const auto& perm = eq.params.get<std::vector<std::int64_t>>("permutation", eq.primitive->name);
  const auto n = static_cast<std::int64_t>(perm.size());
  if (n < 2) return false;
  for (std::int64_t i = 0; i < n - 2; ++i) {
    if (perm[static_cast<std::size_t>(i)] != i) return false;
  }
  return perm[static_cast<std::size_t>(n - 2)] == n - 1 && perm[static_cast<std::size_t>(n - 1)] == n - 2;
}

// Each matmul whose operand is such a transpose, rewritten to read the
// transpose's operand with the flag toggled; null where nothing changes.
std::vector<std::shared_ptr<const Equation>> fold_transposes(const Program& p) {
  const auto& eqs = p.equations();
  std::vector<int> defined_by(p.vars().size(), -1);
  for (std::size_t k = 0; k < eqs.size(); ++k) {
    for (Var v : eqs[k].outputs) defined_by[static_cast<std::size_t>(v)] = static_cast<int>(k);
  }
  std::vector<std::shared_ptr<const Equation>> rewritten(eqs.size());
  for (std::size_t k = 0; k < eqs.size(); ++k) {
    if (eqs[k].primitive->name != "matmul") continue;
    Equation eq = eqs[k];
    bool changed = false;
    for (std::size_t i = 0; i < 2; ++i) {
      const Atom& a = eq.inputs[i];
      if (a.is_literal() || defined_by[static_cast<std::size_t>(a.var)] < 0) continue;
      const Equation& t = eqs[static_cast<std::size_t>(defined_by[static_cast<std::size_t>(a.var)])];
      if (!swaps_last_two(t)) continue;
      const char* flag = i == 0 ? "transpose_a" : "transpose_b";
      eq.params.set(flag, !eq.params.get_or<bool>(flag, false));
      eq.inputs[i] = t.inputs[0];
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
    // A transpose folded into every matmul that read it is not run at all.
    if (swaps_last_two(eqs[static_cast<std::size_t>(k)]) &&
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
