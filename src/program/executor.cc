// Runs a traced program equation by equation on the calling fiber.

#include "spmd/program/executor.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "core/arena.h"
#include "core/placement.h"
#include "program/execution_plan.h"
#include "program/fusion.h"
#include "program/invariance.h"
#include "program/shared_execution.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/program/primitive.h"
#include "spmd/runtime/device.h"

namespace spmd::program {

namespace {

// What a device taking a shared step's outputs is charged for (named as the
// primitives that make them, as when it computes them itself).
std::vector<std::string> output_names(const Program& p, const PlanStep& step) {
  std::vector<std::string> names;
  for (Var v : step_outputs(p, step)) {
    std::string name = "shared value";
    for (int e = step.first_equation; e < step.first_equation + step.equation_count; ++e) {
      const Equation& eq = p.equations()[static_cast<std::size_t>(e)];
      for (Var out : eq.outputs) {
        if (out == v) name = eq.primitive->name + " output";
      }
    }
    names.push_back(std::move(name));
  }
  return names;
}

// The names a pmap binds, as its collectives name them.
std::vector<std::string> axis_names(const PmapOptions& options) {
  std::vector<std::string> names;
  if (!options.mesh.empty()) {
    for (const MeshAxis& axis : options.mesh) names.push_back(axis.name);
  } else if (!options.axis_name.empty()) {
    names.push_back(options.axis_name);
  }
  return names;
}

}  // namespace

std::vector<Array> execute(const Program& p, std::span<const Array> args, SharedResults* shared) {
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
  // Device memory is never shared: such a device computes every step.
  const std::shared_ptr<detail::Arena>& arena = detail::current_placement()->arena;
  if (shared && arena->memory_kind() != MemoryKind::kHost) shared = nullptr;
  std::vector<Array> in;
  auto run_equation = [&](const Equation& eq) {
    set_current_location(eq.loc);
    count_steps(1);
    in.clear();
    for (const Atom& a : eq.inputs) in.push_back(value(a));
    std::vector<Array> out = apply(*eq.primitive, in, eq.params, eq.loc);
    // The operands go now: one released after this step must not stay
    // charged to the device while a later step that never touches `in` (a
    // shared one taken) allocates.
    in.clear();
    for (std::size_t k = 0; k < eq.outputs.size(); ++k) env[static_cast<std::size_t>(eq.outputs[k])] = std::move(out[k]);
  };
  auto run_step = [&](const PlanStep& step) {
    const Equation& first = p.equations()[static_cast<std::size_t>(step.first_equation)];
    std::optional<std::vector<Array>> fused;
    if (step.fused) {
      set_current_location(first.loc);
      in.clear();
      for (const Atom& a : step.fused->inputs()) in.push_back(value(a));
      fused = step.fused->chain().run(
          in, [&](std::size_t k) { set_current_location(step.fused->output_locs()[k]); });
      in.clear();
    }
    if (fused) {
      count_steps(static_cast<std::uint64_t>(step.equation_count));
      for (std::size_t k = 0; k < fused->size(); ++k) {
        env[static_cast<std::size_t>(step.fused->outputs()[k])] = std::move((*fused)[k]);
      }
    } else if (step.rewritten) {
      run_equation(*step.rewritten);
    } else {
      // One equation, or a chain on a device whose arrays live in device
      // memory: its equations run one at a time.
      for (int e = 0; e < step.equation_count; ++e) {
        run_equation(p.equations()[static_cast<std::size_t>(step.first_equation + e)]);
      }
    }
  };
  // A step one device computes for all: take it, or compute it (publishing
  // it when this device is the first).
  auto run_shared_step = [&](std::size_t s, const PlanStep& step) {
    const std::vector<Var>& outputs = step_outputs(p, step);
    if (auto taken = shared->take(s, arena)) {
      set_current_location(step_equation(p, step).loc);
      count_steps(static_cast<std::uint64_t>(step.equation_count));
      for (std::size_t k = 0; k < outputs.size(); ++k) env[static_cast<std::size_t>(outputs[k])] = std::move((*taken)[k]);
    } else if (shared->claim(s)) {
      try {
        run_step(step);
      } catch (...) {
        shared->abandon(s);
        throw;
      }
      std::vector<Array> made;
      for (Var v : outputs) made.push_back(env[static_cast<std::size_t>(v)]);
      std::vector<Array> read;
      for (const Atom& a : step_inputs(p, step)) read.push_back(value(a));
      shared->publish(s, made, read, output_names(p, step));
    } else {
      run_step(step);
    }
    shared->passed(s);
  };
  const std::vector<PlanStep>& steps = p.plan().steps;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const PlanStep& step = steps[s];
    if (shared && shared->shared(s)) {
      run_shared_step(s, step);
    } else {
      run_step(step);
    }
    for (Var v : step.release) env[static_cast<std::size_t>(v)] = Array();
  }
  std::vector<Array> result;
  result.reserve(p.outputs().size());
  for (const Atom& a : p.outputs()) result.push_back(value(a));
  return result;
}

std::vector<Array> execute(const Program& p, std::span<const Array> args) { return execute(p, args, nullptr); }

std::vector<Array> pmap_program(const ProgramRef& p, std::span<const Array> args, const PmapOptions& options) {
  std::vector<bool> replicated_inputs(p->inputs().size(), false);
  for (std::size_t k = 0; k < options.in_axes.size() && k < replicated_inputs.size(); ++k) {
    replicated_inputs[k] = !options.in_axes[k].has_value();
  }
  std::vector<bool> steps = shared_steps(*p, replicated_inputs, axis_names(options));
  if (std::none_of(steps.begin(), steps.end(), [](bool s) { return s; })) {
    // Nothing to share: no per-device bookkeeping for it.
    return pmap([p](std::span<const Array> shard) { return execute(*p, shard, nullptr); }, args, options);
  }
  auto shared = std::make_shared<SharedResults>(std::move(steps));
  return pmap(
      [p, shared](std::span<const Array> shard) {
        shared->join(current_device().devices_in_pmap);
        return execute(*p, shard, shared.get());
      },
      args, options);
}

}  // namespace spmd::program
