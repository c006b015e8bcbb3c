// Runs a traced program equation by equation on the calling fiber.

#include "spmd/program/executor.h"

#include <optional>

#include "program/execution_plan.h"
#include "program/fusion.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/program/primitive.h"
#include "spmd/runtime/device.h"

namespace spmd::program {

std::vector<Array> execute(const Program& p, std::span<const Array> args) {
  if (args.size() != p.inputs().size()) {
    throw InvalidArgument(make_report("TypeError", "program takes " + std::to_string(p.inputs().size()) +
                                                       " arguments, got " + std::to_string(args.size())));
  }
  std::vector<Array> env(p.vars().size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Aval& want = p.aval(p.inputs()[i]);
    if (args[i].shape() != want.shape || args[i].dtype() != want.dtype) {
      throw InvalidArgument(make_report("TypeError", "argument " + std::to_string(i) + " is " +
                                                         args[i].abstract_type() + " but the program was traced for " +
                                                         want.str()));
    }
    env[static_cast<std::size_t>(p.inputs()[i])] = args[i];
  }
  auto value = [&](const Atom& a) -> const Array& {
    return a.is_literal() ? a.literal : env[static_cast<std::size_t>(a.var)];
  };
  std::vector<Array> in;
  auto run_equation = [&](const Equation& eq) {
    set_current_location(eq.loc);
    count_steps(1);
    in.clear();
    for (const Atom& a : eq.inputs) in.push_back(value(a));
    std::vector<Array> out = apply(*eq.primitive, in, eq.params, eq.loc);
    for (std::size_t k = 0; k < eq.outputs.size(); ++k) env[static_cast<std::size_t>(eq.outputs[k])] = std::move(out[k]);
  };
  for (const PlanStep& step : p.plan().steps) {
    const Equation& first = p.equations()[static_cast<std::size_t>(step.first_equation)];
    std::optional<std::vector<Array>> fused;
    if (step.fused) {
      set_current_location(first.loc);
      in.clear();
      for (const Atom& a : step.fused->inputs()) in.push_back(value(a));
      fused = step.fused->chain().run(
          in, [&](std::size_t k) { set_current_location(step.fused->output_locs()[k]); });
    }
    if (fused) {
      count_steps(static_cast<std::uint64_t>(step.equation_count));
      for (std::size_t k = 0; k < fused->size(); ++k) {
        env[static_cast<std::size_t>(step.fused->outputs()[k])] = std::move((*fused)[k]);
      }
    } else {
      // One equation, or a chain on a device whose arrays live in device
      // memory: its equations run one at a time.
      if (step.rewritten) {
        run_equation(*step.rewritten);
      } else {
        for (int e = 0; e < step.equation_count; ++e) {
          run_equation(p.equations()[static_cast<std::size_t>(step.first_equation + e)]);
        }
      }
    }
    for (Var v : step.release) env[static_cast<std::size_t>(v)] = Array();
  }
  std::vector<Array> result;
  result.reserve(p.outputs().size());
  for (const Atom& a : p.outputs()) result.push_back(value(a));
  return result;
}

std::vector<Array> pmap_program(const ProgramRef& p, std::span<const Array> args, const PmapOptions& options) {
  return pmap([p](std::span<const Array> shard) { return execute(*p, shard); }, args, options);
}

}  // namespace spmd::program
