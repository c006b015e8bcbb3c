#pragma once
/// \file
/// The primitives a traced program is made of, each with the two rules JAX
/// gives a primitive: abstract evaluation (output shapes and dtypes from the
/// operands', checked the way running it would check them) and its
/// implementation over Arrays (run on the calling device, or on the host).
///
/// The implementations call the runtime's kernels and collectives, so a
/// program's collectives meet at the same rendezvous, with the same checks and
/// reports, as any other spmd code.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/program/program.h"

namespace spmd::program {

/// What the executor may fuse a primitive into: a chain of elementwise ops
/// over one shape runs as one pass over memory (see executor.h); a sum, max
/// or min over trailing axes may end it (kReduce).
/// kIntegerPow: the multiplications integer_pow stands for (but y == 0, ones,
/// is not fused).
enum class Fusion { kNone, kUnary, kBinary, kIntegerPow, kSelect, kConvert, kBroadcast, kReduce };

/// Whether a primitive gives the same bits on every device of a pmap: the
/// executor computes a value once for all of them when it does (see
/// program/invariance.h), as XLA hoists what does not depend on the device.
enum class Replication {
  /// Depends on which device runs it (axis_index, ppermute), has an effect
  /// (debug_print, a recorded decision), or runs sub-programs: every device
  /// runs it. The default.
  kPerDevice,
  /// A function of its operands and params alone.
  kPure,
  /// A collective whose result is the same on every member (psum, pmean,
  /// pmax, pmin, all_gather): every device still runs it, and its result is
  /// replicated over the axes it names (without axis_index_groups).
  kReplicating,
};

struct Primitive {
  using AbstractEval = std::vector<Aval> (*)(const Primitive& self, std::span<const Aval> in, const Params& params,
                                             const AxisEnv& axes);
  using Impl = std::vector<Array> (*)(const Primitive& self, std::span<const Array> in, const Params& params,
                                      SourceLoc loc);
  std::string name;
  AbstractEval abstract_eval = nullptr;
  Impl impl = nullptr;
  int op = 0;  ///< the kernel's op code (UnaryOp, BinaryOp, ReduceOp) where one implementation serves several
  Fusion fusion = Fusion::kNone;
  Replication replication = Replication::kPerDevice;
  /// JAX's parameters of this primitive that spmdsim never sets and JAX
  /// leaves None unless a program asks (explicit-sharding mode's `sharding`
  /// and `out_sharding`, reshape's `dimensions`): jaxpr text prints them as
  /// `name=None` where JAX does, and JaxprEqn.params holds them as None
  /// (unless an equation sets one: slice's strides).
  std::vector<std::string> unset_params;
};

/// The primitive called `name`; throws ProgramError kind "NotImplementedError"
/// for a name spmdsim does not know (a front end asking for a missing one).
const Primitive& find_primitive(std::string_view name);

/// Every primitive's name, sorted (for tests and documentation).
std::vector<std::string> primitive_names();

/// Applies one primitive to concrete arrays: eager evaluation outside any
/// trace (jnp on concrete values), and each equation of a running program.
std::vector<Array> apply(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc = {});

}  // namespace spmd::program
