#pragma once
// The entry point of every collective: resolve the axes, meet the other
// members, compare signatures, let the backend move the data.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/collective_signature.h"
#include "spmd/core/array.h"

namespace spmd::detail {

class DeviceContext;
struct Communicator;

/// Bit i set when ctx->env[i] is named in `axes`. Throws AxisNameError for a
/// name that is not bound (on the host nothing is), listing the bound names
/// and the closest one; and for a name given twice.
std::uint64_t resolve_axes(const DeviceContext* ctx, const std::vector<std::string>& axes, std::string_view op,
                           SourceLoc loc);

/// Size of the group over `axes` and this device's index in it (row-major in
/// the order `axes` are named).
struct AxisPosition {
  int size = 1;
  int index = 0;
};
AxisPosition axis_position(const DeviceContext& ctx, const std::vector<std::string>& axes);

/// What a device knows about a set of axes it names, resolved on first use
/// and kept per device (a call site names the same axes every time).
struct ResolvedAxes {
  AxisNames names;  // interned: signatures point at it
  std::uint64_t mask = 0;
  AxisPosition position;
  Communicator* comm = nullptr;  // the group over these axes, found at the first collective
  int slot = 0;                  // this device's slot in comm
};
/// resolve_axes + axis_position, cached in the device context.
ResolvedAxes& resolve_axes_cached(DeviceContext& ctx, const std::vector<std::string>& axes, std::string_view op,
                                  SourceLoc loc);

/// Blocks until all members arrived; the data plane puts this device's results
/// in `outputs` (null for a barrier, which has none: nothing in the caller's
/// frame is then touched after the wait). Throws CollectiveMismatch /
/// DeadlockError (on the device that detects it) or RunAborted (on the
/// others). `axes` is resolve_axes_cached(sig.axes).
void run_collective(DeviceContext& ctx, ResolvedAxes& axes, const CollectiveSignature& sig,
                    std::span<const Array> inputs, std::vector<Array>* outputs);
/// The same, returning the results.
inline std::vector<Array> run_collective(DeviceContext& ctx, ResolvedAxes& axes, const CollectiveSignature& sig,
                                         std::span<const Array> inputs) {
  std::vector<Array> outputs;
  run_collective(ctx, axes, sig, inputs, &outputs);
  return outputs;
}
/// The same, resolving sig.axes first (trace replay).
std::vector<Array> run_collective(DeviceContext& ctx, const CollectiveSignature& sig, std::span<const Array> inputs);

}  // namespace spmd::detail
