// The public collectives: validate what can be checked locally (as JAX does
// while tracing), build the signature, and meet the other members.

#include <algorithm>
#include <cstdint>
#include <set>

#include "dataplane/data_plane.h"
#include "runtime/rendezvous.h"
#include "runtime/device_context.h"
#include "spmd/collectives/all_gather.h"
#include "spmd/collectives/all_to_all.h"
#include "spmd/collectives/axis_index.h"
#include "spmd/collectives/barrier.h"
#include "spmd/collectives/ppermute.h"
#include "spmd/collectives/psum_scatter.h"
#include "spmd/collectives/reduce.h"
#include "spmd/error.h"

namespace spmd {

namespace detail {
namespace {

[[noreturn]] void invalid(const DeviceContext& ctx, CollectiveKind kind, const CollectiveSignature& sig,
                          std::string message, std::string hint) {
  Report r = make_report("InvalidArgument", std::string(collective_name(kind)) + ": " + message, std::move(hint));
  r.device = ctx.device;
  r.where = sig.loc;
  r.op = std::string(collective_name(kind));
  r.axis = sig.axes.text();
  throw InvalidArgument(std::move(r));
}

// Where a collective starts: the calling device and the axes it named,
// resolved (throws AxisNameError for an unbound name, or on the host).
struct Entered {
  DeviceContext& ctx;
  ResolvedAxes& axes;
};

Entered enter(CollectiveKind kind, const AxisSet& axes, SourceLoc loc) {
  DeviceContext* ctx = current_context();
  if (ctx == nullptr) resolve_axes(ctx, axes.names, collective_name(kind), loc);  // throws: nothing is bound
  return {*ctx, ctx->resolve(axes.names, collective_name(kind), loc)};
}

void check_groups(const DeviceContext& ctx, const CollectiveSignature& sig, int n) {
  if (sig.groups.empty()) return;
  std::set<int> seen;
  std::size_t size = sig.groups[0].size();
  for (const auto& g : sig.groups) {
    if (g.size() != size) {
      invalid(ctx, sig.kind, sig, "axis_index_groups must all have the same size (" + sig.params() + ")",
              "split the " + std::to_string(n) + " indices into groups of equal size");
    }
    for (int i : g) {
      if (i < 0 || i >= n || !seen.insert(i).second) {
        invalid(ctx, sig.kind, sig,
                "axis_index_groups must contain each index 0.." + std::to_string(n - 1) + " exactly once (" +
                    sig.params() + ")",
                "list every device index of the axis in exactly one group");
      }
    }
  }
  if (static_cast<int>(seen.size()) != n) {
    invalid(ctx, sig.kind, sig,
            "axis_index_groups cover " + std::to_string(seen.size()) + " of the " + std::to_string(n) + " indices",
            "list every device index of the axis in exactly one group");
  }
}

int group_size(const Entered& at, const CollectiveSignature& sig) {
  int n = at.axes.position.size;
  check_groups(at.ctx, sig, n);
  return sig.groups.empty() ? n : static_cast<int>(sig.groups[0].size());
}

CollectiveSignature signature(CollectiveKind kind, const Entered& at, std::span<const Array> xs,
                              const AxisIndexGroups& groups, SourceLoc loc) {
  CollectiveSignature sig;
  sig.kind = kind;
  sig.axes = at.axes.names;
  sig.groups = groups;
  sig.loc = loc;
  sig.operands.reserve(xs.size());
  for (const Array& x : xs) {
    check_placement(x, collective_name(kind));
    sig.operands.push_back({x.dtype(), x.shape()});
  }
  return sig;
}

std::vector<Array> reduction(CollectiveKind kind, std::span<const Array> xs, const AxisSet& axes,
                             const AxisIndexGroups& groups, SourceLoc loc) {
  Entered at = enter(kind, axes, loc);
  CollectiveSignature sig = signature(kind, at, xs, groups, loc);
  group_size(at, sig);
  std::vector<Array> out = run_collective(at.ctx, at.axes, sig, xs);
  // Python scalars stay weakly typed through a reduction, as in JAX.
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (xs[i].weak_type()) out[i] = out[i].with_weak_type(true);
  }
  return out;
}

int normalize(const DeviceContext& ctx, const CollectiveSignature& sig, int axis, int rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    invalid(ctx, sig.kind, sig,
            std::string(what) + "=" + std::to_string(axis) + " is out of bounds for operand " +
                sig.operand_types() + (rank == 0 ? " (a scalar has no axes)" : ""),
            rank == 0 ? "collectives that split or stack need an operand with at least one axis"
                      : "valid values are " + std::to_string(-rank) + ".." + std::to_string(rank - 1));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace
}  // namespace detail

using detail::CollectiveSignature;

#define SPMD_DEFINE_REDUCTION(name, kind)                                                                    \
  Array name(const Array& x, const AxisSet& axes, const AxisIndexGroups& groups, SourceLoc loc) {           \
    return detail::reduction(kind, std::span<const Array>(&x, 1), axes, groups, loc)[0];                    \
  }                                                                                                          \
  std::vector<Array> name(std::span<const Array> xs, const AxisSet& axes, const AxisIndexGroups& groups,    \
                          SourceLoc loc) {                                                                   \
    return detail::reduction(kind, xs, axes, groups, loc);                                                   \
  }

SPMD_DEFINE_REDUCTION(psum, CollectiveKind::kPsum)
SPMD_DEFINE_REDUCTION(pmean, CollectiveKind::kPmean)
SPMD_DEFINE_REDUCTION(pmax, CollectiveKind::kPmax)
SPMD_DEFINE_REDUCTION(pmin, CollectiveKind::kPmin)

#undef SPMD_DEFINE_REDUCTION

Array all_gather(const Array& x, const AxisSet& axes, int axis, bool tiled, const AxisIndexGroups& groups,
                 SourceLoc loc) {
  detail::Entered at = detail::enter(CollectiveKind::kAllGather, axes, loc);
  CollectiveSignature sig = detail::signature(CollectiveKind::kAllGather, at, std::span<const Array>(&x, 1), groups, loc);
  detail::group_size(at, sig);
  sig.tiled = tiled;
  // Untiled inserts a new axis: positions 0..rank are valid.
  sig.axis = detail::normalize(at.ctx, sig, axis, x.ndim() + (tiled ? 0 : 1), "axis");
  return detail::run_collective(at.ctx, at.axes, sig, std::span<const Array>(&x, 1))[0];
}

Array psum_scatter(const Array& x, const AxisSet& axes, int scatter_dimension, bool tiled,
                   const AxisIndexGroups& groups, SourceLoc loc) {
  detail::Entered at = detail::enter(CollectiveKind::kPsumScatter, axes, loc);
  CollectiveSignature sig = detail::signature(CollectiveKind::kPsumScatter, at, std::span<const Array>(&x, 1), groups, loc);
  int n = detail::group_size(at, sig);
  sig.tiled = tiled;
  sig.axis = detail::normalize(at.ctx, sig, scatter_dimension, x.ndim(), "scatter_dimension");
  std::int64_t dim = x.shape()[static_cast<std::size_t>(sig.axis)];
  if (!tiled && dim != n) {
    detail::invalid(at.ctx, sig.kind, sig,
                    "scatter_dimension " + std::to_string(sig.axis) + " of " + sig.operand_types() + " has size " +
                        std::to_string(dim) + " but the group has " + std::to_string(n) + " devices",
                    "untiled psum_scatter needs that dimension to equal the number of devices; use tiled=True to "
                    "split a dimension divisible by it");
  }
  if (tiled && dim % n != 0) {
    detail::invalid(at.ctx, sig.kind, sig,
                    "scatter_dimension " + std::to_string(sig.axis) + " of " + sig.operand_types() + " has size " +
                        std::to_string(dim) + ", not divisible by the " + std::to_string(n) + " devices",
                    "pad or reshape the operand so the scattered dimension is a multiple of the device count");
  }
  return detail::run_collective(at.ctx, at.axes, sig, std::span<const Array>(&x, 1))[0];
}

Array all_to_all(const Array& x, const AxisSet& axes, int split_axis, int concat_axis, bool tiled,
                 const AxisIndexGroups& groups, SourceLoc loc) {
  detail::Entered at = detail::enter(CollectiveKind::kAllToAll, axes, loc);
  CollectiveSignature sig = detail::signature(CollectiveKind::kAllToAll, at, std::span<const Array>(&x, 1), groups, loc);
  int n = detail::group_size(at, sig);
  sig.tiled = tiled;
  sig.axis = detail::normalize(at.ctx, sig, split_axis, x.ndim(), "split_axis");
  // Untiled removes split_axis and inserts a new one: concat_axis ranges over the same rank.
  sig.concat_axis = detail::normalize(at.ctx, sig, concat_axis, x.ndim(), "concat_axis");
  std::int64_t dim = x.shape()[static_cast<std::size_t>(sig.axis)];
  if ((!tiled && dim != n) || (tiled && dim % n != 0)) {
    detail::invalid(at.ctx, sig.kind, sig,
                    "split_axis " + std::to_string(sig.axis) + " of " + sig.operand_types() + " has size " +
                        std::to_string(dim) + (tiled ? ", not divisible by " : " but must equal ") + "the " +
                        std::to_string(n) + " devices of the group",
                    tiled ? "make the split dimension a multiple of the device count"
                          : "untiled all_to_all sends one slice of split_axis to each device; use tiled=True to "
                            "send equal blocks of a longer dimension");
  }
  return detail::run_collective(at.ctx, at.axes, sig, std::span<const Array>(&x, 1))[0];
}

namespace detail {
namespace {
// Every pair inside 0..n-1, each source and each destination at most once.
// Bitmaps, not sets: O(n) for a permutation of n pairs.
void ppermute_check(const Entered& at, const CollectiveSignature& sig, int n) {
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
  for (auto [s, d] : sig.perm) {
    if (s < 0 || s >= n || d < 0 || d >= n) {
      invalid(at.ctx, sig.kind, sig,
              "perm pair (" + std::to_string(s) + ", " + std::to_string(d) + ") is outside 0.." +
                  std::to_string(n - 1) + " (" + sig.params() + ")",
              "indices in perm are positions along the axis, 0 to axis_size - 1");
    }
    std::uint8_t& src_bit = seen[static_cast<std::size_t>(s)];
    std::uint8_t& dst_bit = seen[static_cast<std::size_t>(d)];
    if ((src_bit & 1) || (dst_bit & 2)) {
      invalid(at.ctx, sig.kind, sig, "perm sources and destinations must each be unique (" + sig.params() + ")",
              "each device sends at most once and receives at most once; e.g. a ring is "
              "[(i, (i + 1) % n) for i in range(n)]");
    }
    src_bit |= 1;
    dst_bit |= 2;
  }
}

// The permutation the previous ppermute on this thread brought, shared, and
// the axis size it was checked against (0: not checked). Devices normally
// bring equal permutations: they then share one copy (see SharedPerm) and only
// the first is checked, so n devices cost one comparison of the pairs each
// instead of a copy and a check each (O(n^2) memory at n devices before).
struct LastPerm {
  SharedPerm perm;
  int checked_for = 0;
};
thread_local LastPerm t_last_perm;
}  // namespace
}  // namespace detail

Array ppermute(const Array& x, const AxisSet& axes, const Permutation& perm, SourceLoc loc) {
  detail::Entered at = detail::enter(CollectiveKind::kPpermute, axes, loc);
  CollectiveSignature sig = detail::signature(CollectiveKind::kPpermute, at, std::span<const Array>(&x, 1), {}, loc);
  int n = detail::group_size(at, sig);
  detail::LastPerm& last = detail::t_last_perm;
  if (last.perm.pairs() != perm) last = {detail::SharedPerm(perm), 0};
  sig.perm = last.perm;
  if (last.checked_for != n) detail::ppermute_check(at, sig, n);
  last.checked_for = n;
  return detail::run_collective(at.ctx, at.axes, sig, std::span<const Array>(&x, 1))[0];
}

void barrier(const AxisSet& axes, SourceLoc loc) {
  detail::Entered at = detail::enter(CollectiveKind::kBarrier, axes, loc);
  // No operands, groups or parameters to check or copy.
  CollectiveSignature sig;
  sig.kind = CollectiveKind::kBarrier;
  sig.axes = at.axes.names;
  sig.loc = loc;
  detail::run_collective(at.ctx, at.axes, sig, {}, nullptr);
}

namespace detail {
namespace {
const ResolvedAxes& resolve_here(const AxisSet& axes, std::string_view op, SourceLoc loc) {
  DeviceContext* ctx = current_context();
  if (ctx == nullptr) resolve_axes(ctx, axes.names, op, loc);  // throws: nothing is bound on the host
  return ctx->resolve(axes.names, op, loc);
}
}  // namespace
}  // namespace detail

Array axis_index(const AxisSet& axes, SourceLoc loc) {
  return Array::scalar_int(detail::resolve_here(axes, "axis_index", loc).position.index, DType::kInt32);
}

int axis_size(const AxisSet& axes, SourceLoc loc) { return detail::resolve_here(axes, "axis_size", loc).position.size; }

}  // namespace spmd
