// Grouping a program's equations into the executor's steps. See execution_plan.h.

#include "program/execution_plan.h"

#include <climits>

#include "program/fusion.h"

namespace spmd::program {

ExecutionPlan make_execution_plan(const Program& p) {
  const auto& eqs = p.equations();
  const int n = static_cast<int>(eqs.size());
  // The last equation reading each variable; program outputs live on.
  std::vector<int> last_read(p.vars().size(), -1);
  for (int k = 0; k < n; ++k) {
    for (const Atom& a : eqs[static_cast<std::size_t>(k)].inputs) {
      if (!a.is_literal()) last_read[static_cast<std::size_t>(a.var)] = k;
    }
  }
  for (const Atom& a : p.outputs()) {
    if (!a.is_literal()) last_read[static_cast<std::size_t>(a.var)] = INT_MAX;
  }

  ExecutionPlan plan;
  for (int k = 0; k < n;) {
    PlanStep step;
    step.first_equation = k;
    const int run = fusible_run_length(p, k);
    if (run >= 2) {
      step.equation_count = run;
      step.fused = make_fused_chain(p, k, run, last_read);
    }
    const int end = k + step.equation_count;
    for (int e = k; e < end; ++e) {
      const Equation& eq = eqs[static_cast<std::size_t>(e)];
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

}  // namespace spmd::program
