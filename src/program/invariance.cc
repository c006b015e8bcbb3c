// Replicated values of a program under a pmap. See invariance.h.

#include "program/invariance.h"

#include <algorithm>

#include "program/execution_plan.h"
#include "spmd/core/shape.h"
#include "spmd/program/primitive.h"

namespace spmd::program {

namespace {

// A collective over every axis the pmap binds gives all of its devices the
// same result; with axis_index_groups only each group's members agree.
bool replicates_over_pmap(const Equation& eq, const std::vector<std::string>& pmap_axes) {
  if (!eq.params.get_or<std::vector<std::int64_t>>("axis_index_groups", {}).empty()) return false;
  if (pmap_axes.empty()) return false;  // an anonymous axis cannot be named
  const auto& axes = eq.params.get<std::vector<std::string>>("axes", eq.primitive->name);
  return std::all_of(pmap_axes.begin(), pmap_axes.end(), [&](const std::string& name) {
    return std::find(axes.begin(), axes.end(), name) != axes.end();
  });
}

}  // namespace

std::vector<bool> shared_steps(const Program& p, const std::vector<bool>& replicated_inputs,
                               const std::vector<std::string>& pmap_axes) {
  std::vector<bool> replicated(p.vars().size(), false);
  for (std::size_t i = 0; i < p.inputs().size() && i < replicated_inputs.size(); ++i) {
    replicated[static_cast<std::size_t>(p.inputs()[i])] = replicated_inputs[i];
  }
  auto all_replicated = [&](const std::vector<Atom>& atoms) {
    return std::all_of(atoms.begin(), atoms.end(),
                       [&](const Atom& a) { return a.is_literal() || replicated[static_cast<std::size_t>(a.var)]; });
  };
  const ExecutionPlan& plan = p.plan();
  std::vector<bool> shared(plan.steps.size(), false);
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& step = plan.steps[s];
    bool pure = true;
    bool replicating = false;
    if (step.fused) {
      // Elementwise equations only: pure.
    } else {
      const Equation& eq = step_equation(p, step);
      pure = eq.primitive->replication == Replication::kPure;
      replicating = eq.primitive->replication == Replication::kReplicating &&
                    (all_replicated(eq.inputs) || replicates_over_pmap(eq, pmap_axes));
    }
    const bool from_replicated = pure && all_replicated(step_inputs(p, step));
    if (!from_replicated && !replicating) continue;
    // Every value the step defines, a fused chain's unmaterialised ones too.
    std::size_t bytes = 0;
    for (int e = step.first_equation; e < step.first_equation + step.equation_count; ++e) {
      for (Var v : p.equations()[static_cast<std::size_t>(e)].outputs) replicated[static_cast<std::size_t>(v)] = true;
    }
    for (Var v : step_outputs(p, step)) bytes += byte_count(p.aval(v).shape, p.aval(v).dtype);
    // A collective runs on every device (it is a rendezvous); its result is
    // only known to be replicated.
    shared[s] = from_replicated && bytes >= kMinSharedStepBytes;
  }
  return shared;
}

}  // namespace spmd::program
