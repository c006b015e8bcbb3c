#pragma once
// How the executor runs a program: its equations grouped into steps, each
// step either one equation run by its primitive or a fused elementwise chain
// (see fusion.h), and after each step the variables nobody reads any more.
//
// Made once when the program is finished (ProgramBuilder::finish) and shared
// by every device that runs it, so executing costs no analysis.

#include <memory>
#include <vector>

#include "spmd/program/program.h"

namespace spmd::program {

class FusedChain;

struct PlanStep {
  int first_equation = 0;  ///< the step runs equations [first, first + count)
  int equation_count = 1;
  /// The chain the equations form when they run as one pass; null for a
  /// step of one equation run by its primitive.
  std::shared_ptr<const FusedChain> fused;
  /// The equation as it runs when the plan rewrote it (XLA's transpose
  /// folding): a dot_general reading the operand of a transpose, with its
  /// dimension numbers renamed through the permutation, or a transpose of a
  /// product run as the product with its result permuted (out_permutation);
  /// the transpose or product folded in, read by nothing else, has no step.
  /// Null: the program's equation.
  std::shared_ptr<const Equation> rewritten;
  /// Variables last read by this step (never a program output): the executor
  /// drops them after it, so their arena memory is free for what follows, as
  /// XLA's buffer assignment reuses a dead value's buffer.
  std::vector<Var> release;
};

struct ExecutionPlan {
  std::vector<PlanStep> steps;
};

ExecutionPlan make_execution_plan(const Program& p);

/// The values a step reads from before it (a fused chain's outside
/// operands, or its one equation's inputs as it runs).
const std::vector<Atom>& step_inputs(const Program& p, const PlanStep& step);
/// The arrays a step makes (a fused chain's materialised values, or its one
/// equation's outputs).
const std::vector<Var>& step_outputs(const Program& p, const PlanStep& step);
/// The equation a step of one equation runs (rewritten or the program's).
const Equation& step_equation(const Program& p, const PlanStep& step);

}  // namespace spmd::program
