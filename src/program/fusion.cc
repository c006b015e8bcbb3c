// Grouping equations into fused elementwise chains. See fusion.h.

#include "program/fusion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/row_reduction.h"
#include "program/primitive_rules.h"
#include "spmd/program/primitive.h"

namespace spmd::program {

namespace {

Shape broadcast_shape_param(const std::vector<std::int64_t>& v) { return Shape(v.begin(), v.end()); }

// broadcast_in_dim's operand seen in the result's rank: its axes at
// broadcast_dimensions, size 1 elsewhere.
Shape broadcast_view(const Equation& eq, const Aval& operand) {
  const Shape shape = broadcast_shape_param(eq.params.get<std::vector<std::int64_t>>("shape", eq.primitive->name));
  const auto& dims = eq.params.get<std::vector<std::int64_t>>("broadcast_dimensions", eq.primitive->name);
  Shape view(shape.size(), 1);
  for (std::size_t k = 0; k < dims.size(); ++k) view[static_cast<std::size_t>(dims[k])] = operand.shape[k];
  return view;
}

bool defined_in(const std::vector<Var>& defined, const Atom& a) {
  return !a.is_literal() && std::find(defined.begin(), defined.end(), a.var) != defined.end();
}

using Reduced = detail::ElementwiseChain::Reduced;

// How a reduction of a rank-`rank` value reduces, as reduce() runs it: over
// the trailing axes from `split` on (rows), or else a sum over the leading
// axes before `split` (columns); nullopt for any other set of axes.
std::optional<std::pair<Reduced, int>> reduced_axes(const Equation& eq, std::size_t rank) {
  std::vector<bool> reduced(rank, false);
  for (std::int64_t a : eq.params.get<std::vector<std::int64_t>>("axes", eq.primitive->name)) {
    const std::int64_t n = a < 0 ? a + static_cast<std::int64_t>(rank) : a;
    if (n < 0 || n >= static_cast<std::int64_t>(rank) || reduced[static_cast<std::size_t>(n)]) return std::nullopt;
    reduced[static_cast<std::size_t>(n)] = true;
  }
  std::size_t first = rank;
  while (first > 0 && reduced[first - 1]) --first;
  if (std::none_of(reduced.begin(), reduced.begin() + static_cast<std::ptrdiff_t>(first), [](bool r) { return r; })) {
    return std::make_pair(Reduced::kTrailing, static_cast<int>(first));
  }
  std::size_t count = 0;
  while (count < rank && reduced[count]) ++count;
  const bool leading = std::none_of(reduced.begin() + static_cast<std::ptrdiff_t>(count), reduced.end(),
                                    [](bool r) { return r; });
  if (leading && static_cast<ReduceOp>(eq.primitive->op) == ReduceOp::kSum) {
    return std::make_pair(Reduced::kLeading, static_cast<int>(count));
  }
  return std::nullopt;
}

// Whether eq, right after a chain of `shape` defining `defined`, ends it: a
// reduction reduce() runs by rows or columns of a value the chain computed,
// which is not empty (an empty max or min is reduce()'s error to give).
bool ends_chain(const Program& p, const Equation& eq, const std::vector<Var>& defined, const Shape& shape) {
  if (eq.primitive->fusion != Fusion::kReduce || eq.inputs.size() != 1 || eq.outputs.size() != 1) return false;
  if (!defined_in(defined, eq.inputs[0]) || num_elements(shape) == 0) return false;
  const Aval& in = p.aval_of(eq.inputs[0]);
  return in.shape == shape && reduced_axes(eq, shape.size()).has_value() &&
         detail::RowReduction::supports(static_cast<ReduceOp>(eq.primitive->op), in.dtype);
}

}  // namespace

int fusible_run_length(const Program& p, int first) {
  const auto& eqs = p.equations();
  std::vector<Var> defined;
  Shape shape;
  int k = first;
  for (; k < static_cast<int>(eqs.size()); ++k) {
    const Equation& eq = eqs[static_cast<std::size_t>(k)];
    if (k > first && ends_chain(p, eq, defined, shape)) return k + 1 - first;
    if (eq.primitive->fusion == Fusion::kNone || eq.primitive->fusion == Fusion::kReduce || eq.outputs.size() != 1) {
      break;
    }
    if (eq.primitive->fusion == Fusion::kIntegerPow && eq.params.get<std::int64_t>("y", "integer_pow") == 0) break;
    const Aval& out = p.aval(eq.outputs[0]);
    if (k == first) shape = out.shape;
    if (out.shape != shape) break;
    // A value made inside the chain has the chain's shape; only outside
    // values can be broadcast into it.
    if (eq.primitive->fusion == Fusion::kBroadcast && defined_in(defined, eq.inputs[0]) &&
        p.aval_of(eq.inputs[0]).shape != shape) {
      break;
    }
    defined.push_back(eq.outputs[0]);
  }
  return k - first;
}

std::shared_ptr<const FusedChain> make_fused_chain(const Program& p, int first, int count,
                                                   const std::vector<int>& last_read) {
  const auto& eqs = p.equations();
  const Shape& shape = p.aval(eqs[static_cast<std::size_t>(first)].outputs[0]).shape;
  detail::ElementwiseChain chain(shape);
  std::vector<Atom> inputs;
  std::map<Var, detail::ElementwiseChain::Value> inside;
  // Outside values by variable (or literal) and view: each is read once per block.
  std::vector<std::pair<std::pair<const Atom*, Shape>, detail::ElementwiseChain::Value>> outside;
  auto read = [&](const Atom& a, const Shape& view) {
    if (!a.is_literal()) {
      auto it = inside.find(a.var);
      if (it != inside.end()) return it->second;
    }
    for (const auto& [key, value] : outside) {
      const Atom& b = *key.first;
      const bool same = a.is_literal() ? &a == &b : (!b.is_literal() && b.var == a.var);
      if (same && key.second == view) return value;
    }
    const Aval aval = p.aval_of(a);
    detail::ElementwiseChain::Value v = chain.input(view, aval.dtype, aval.weak_type);
    inputs.push_back(a);
    outside.push_back({{&a, view}, v});
    return v;
  };
  auto operand = [&](const Atom& a) { return read(a, p.aval_of(a).shape); };

  const int end = first + count;
  for (int k = first; k < end; ++k) {
    const Equation& eq = eqs[static_cast<std::size_t>(k)];
    const Primitive& prim = *eq.primitive;
    detail::ElementwiseChain::Value v = -1;
    switch (prim.fusion) {
      case Fusion::kUnary:
        v = chain.unary(rules::unary_op_for(prim, eq.params), operand(eq.inputs[0]));
        break;
      case Fusion::kBinary:
        v = chain.binary(rules::binary_op_for(prim, p.aval_of(eq.inputs[0]).dtype), operand(eq.inputs[0]),
                         operand(eq.inputs[1]));
        break;
      case Fusion::kIntegerPow: {
        auto mul = [&](detail::ElementwiseChain::Value a, detail::ElementwiseChain::Value b) {
          return chain.binary(BinaryOp::kMultiply, a, b);
        };
        auto reciprocal = [&](detail::ElementwiseChain::Value a) { return chain.unary(UnaryOp::kReciprocal, a); };
        v = rules::unrolled_power(operand(eq.inputs[0]), eq.params.get<std::int64_t>("y", prim.name), mul, reciprocal);
        break;
      }
      case Fusion::kSelect:  // select_n(pred, on_false, on_true)
        v = chain.select(operand(eq.inputs[0]), operand(eq.inputs[2]), operand(eq.inputs[1]));
        break;
      case Fusion::kConvert: {
        const Aval& out = p.aval(eq.outputs[0]);
        v = chain.convert(operand(eq.inputs[0]), out.dtype, out.weak_type);
        break;
      }
      case Fusion::kBroadcast:
        v = read(eq.inputs[0], broadcast_view(eq, p.aval_of(eq.inputs[0])));
        break;
      case Fusion::kReduce: {
        // The chain's last equation (fusible_run_length): its result comes
        // after the outputs.
        const auto [which, split] = *reduced_axes(eq, shape.size());
        chain.reduce(static_cast<ReduceOp>(prim.op), inside.at(eq.inputs[0].var), which, split);
        continue;
      }
      case Fusion::kNone:
        return nullptr;
    }
    const Aval& out = p.aval(eq.outputs[0]);
    if (chain.dtype(v) != out.dtype || chain.weak(v) != out.weak_type) {
      throw std::logic_error("fusing '" + prim.name + "' gives " + std::string(dtype_name(chain.dtype(v))) +
                             " where the program has " + out.str());
    }
    inside[eq.outputs[0]] = v;
  }
  std::vector<Var> outputs;
  std::vector<SourceLoc> locs;
  for (int k = first; k < end; ++k) {
    const Equation& eq = eqs[static_cast<std::size_t>(k)];
    if (eq.primitive->fusion == Fusion::kReduce) continue;
    const Var var = eq.outputs[0];
    if (last_read[static_cast<std::size_t>(var)] < end) continue;
    chain.output(inside.at(var));
    outputs.push_back(var);
    locs.push_back(eq.loc);
  }
  if (chain.has_reduction()) {
    const Equation& eq = eqs[static_cast<std::size_t>(end - 1)];
    outputs.push_back(eq.outputs[0]);
    locs.push_back(eq.loc);
  }
  chain.finish();
  return std::make_shared<const FusedChain>(std::move(chain), std::move(inputs), std::move(outputs), std::move(locs));
}

}  // namespace spmd::program
