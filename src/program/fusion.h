#pragma once
// Which equations of a program run as one fused elementwise chain
// (core/fused_elementwise.h), and the chain they make.
//
// A chain is a run of consecutive elementwise equations (unary, binary,
// select_n, convert_element_type, broadcast_in_dim of an outside value) whose
// results all have one shape; operands from outside may be smaller and
// broadcast. The equation right after may end it when it reduces one of the
// chain's values as reduce() runs it by rows or columns: reduce_sum, _max or
// _min over trailing axes, or reduce_sum over leading ones. The values read
// after the chain, or returned by the program, become arrays (the
// reduction's result last); the others exist only in the chain's per-block
// scratch.

#include <memory>
#include <vector>

#include "core/fused_elementwise.h"
#include "spmd/program/program.h"

namespace spmd::program {

class FusedChain {
 public:
  FusedChain(detail::ElementwiseChain chain, std::vector<Atom> inputs, std::vector<Var> outputs,
             std::vector<SourceLoc> output_locs)
      : chain_(std::move(chain)), inputs_(std::move(inputs)), outputs_(std::move(outputs)),
        output_locs_(std::move(output_locs)) {}
  const detail::ElementwiseChain& chain() const { return chain_; }
  /// The program values the chain reads, in the chain's input order.
  const std::vector<Atom>& inputs() const { return inputs_; }
  /// The variables the chain's outputs define, and the equations' positions.
  const std::vector<Var>& outputs() const { return outputs_; }
  const std::vector<SourceLoc>& output_locs() const { return output_locs_; }

 private:
  detail::ElementwiseChain chain_;
  std::vector<Atom> inputs_;
  std::vector<Var> outputs_;
  std::vector<SourceLoc> output_locs_;
};

/// How many equations, from `first`, form a chain (0 or 1: none starts there).
int fusible_run_length(const Program& p, int first);

/// The chain of equations [first, first + count). `last_read[v]` is the
/// last equation reading variable v (INT_MAX for a program output): the
/// chain's values read after it become its outputs.
std::shared_ptr<const FusedChain> make_fused_chain(const Program& p, int first, int count,
                                                   const std::vector<int>& last_read);

}  // namespace spmd::program
