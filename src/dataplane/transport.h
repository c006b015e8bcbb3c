#pragma once
// The byte-moving layer under device-memory collectives: what NCCL provides
// (all-reduce, all-gather, reduce-scatter, send/recv), as an interface, so the
// layout work above it (device_plane.cc) is one piece of code for every
// transport: NCCL, the cuda backend's copy transport (several virtual devices
// on one GPU), and the tests' host fake.
//
// Every call covers all members of one group at once (the caller holds every
// member: they are parked at the rendezvous). Buffers are in the members'
// device memory, contiguous; positions are ranks in the group. Calls are
// ordered with the members' other device work (the same streams); complete()
// returns when everything issued so far has finished, or throws.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "spmd/collectives/collective_kind.h"
#include "spmd/core/device_id.h"
#include "spmd/core/dtype.h"

namespace spmd::detail {

/// The devices of one group in rank order (the NCCL communicator's ranks).
struct TransportGroup {
  std::vector<DeviceId> devices;
  /// What is running, for error reports: "psum over 'i' #7".
  std::string op;
};

enum class ReduceKind { kSum, kMax, kMin };

/// One point-to-point copy between two ranks of a group.
struct Transfer {
  int from = 0;
  int to = 0;
  const void* src = nullptr;  // in `from`'s memory
  void* dst = nullptr;        // in `to`'s memory
  std::size_t bytes = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string_view name() const = 0;
  /// out[r][i] = in[0][i] op in[1][i] op ... (rank order), for every rank r.
  /// dtype is never float16/bfloat16 for kSum (the caller widens them).
  virtual void all_reduce(const TransportGroup& g, ReduceKind op, DType dtype, std::int64_t count,
                          const std::vector<const void*>& in, const std::vector<void*>& out) = 0;
  /// out[r] = in[0] ++ in[1] ++ ... (`bytes` from each rank).
  virtual void all_gather(const TransportGroup& g, std::size_t bytes, const std::vector<const void*>& in,
                          const std::vector<void*>& out) = 0;
  /// out[r][i] = reduction over ranks s of in[s][r * count + i].
  virtual void reduce_scatter(const TransportGroup& g, ReduceKind op, DType dtype, std::int64_t count,
                              const std::vector<const void*>& in, const std::vector<void*>& out) = 0;
  /// All transfers at once (sends and receives matched, as NCCL groups them).
  virtual void exchange(const TransportGroup& g, const std::vector<Transfer>& transfers) = 0;
  /// Waits until every call issued so far completed (bounded by the
  /// backend's watchdog); throws BackendError on failure.
  virtual void complete() = 0;
};

}  // namespace spmd::detail
