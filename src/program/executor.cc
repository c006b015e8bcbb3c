// Runs a traced program equation by equation on the calling fiber.

#include "spmd/program/executor.h"

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
  for (const Equation& eq : p.equations()) {
    set_current_location(eq.loc);
    count_steps(1);
    in.clear();
    for (const Atom& a : eq.inputs) in.push_back(value(a));
    std::vector<Array> out = apply(*eq.primitive, in, eq.params, eq.loc);
    for (std::size_t k = 0; k < eq.outputs.size(); ++k) env[static_cast<std::size_t>(eq.outputs[k])] = std::move(out[k]);
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
