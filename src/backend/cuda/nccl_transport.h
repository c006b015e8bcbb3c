#pragma once
// The NCCL transport: one communicator per group (the ordered list of its
// devices, i.e. per axis set, fixed coordinates and axis_index_groups group),
// created on first use with ncclCommInitAll over the group's GPUs (ranks in
// group order) and kept for the backend's life. Every call issues the
// operations of all ranks from the calling thread inside one
// ncclGroupStart/End, on each rank's device stream; complete() waits for the
// streams through the watchdog.
//
// Across processes (a run with local devices, set_processes()): a group
// with members in other processes gets its communicator from
// ncclCommInitRank, every process initialising its own ranks with the unique
// id that process 0 made (ncclGetUniqueId) and shared through the store;
// each process then issues the calls of its own ranks, and the buffers of
// the others' ranks are null.

#include <nccl.h>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/device_resources.h"
#include "backend/cuda/watchdog.h"
#include "dataplane/transport.h"
#include "dist/process_group.h"

namespace spmd::cuda {

class NcclTransport final : public detail::Transport {
 public:
  explicit NcclTransport(std::shared_ptr<WaitPolicy> policy);
  ~NcclTransport() override;

  std::string_view name() const override { return "nccl"; }
  void all_reduce(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                  const std::vector<const void*>& in, const std::vector<void*>& out) override;
  void all_gather(const detail::TransportGroup& g, std::size_t bytes, const std::vector<const void*>& in,
                  const std::vector<void*>& out) override;
  void reduce_scatter(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                      const std::vector<const void*>& in, const std::vector<void*>& out) override;
  void exchange(const detail::TransportGroup& g, const std::vector<detail::Transfer>& transfers) override;
  void complete() override;

  /// Forgets what the calling thread issued (before a new collective).
  void reset_pending() noexcept { pending_ = Pending{}; }
  /// ncclCommAbort on every communicator (after an error or a timeout): no
  /// rank can stay blocked in NCCL. Later calls create fresh ones.
  void abort_all() noexcept;
  /// Where the other processes are, for groups that span them (set before
  /// the first such collective; the group outlives the transport's use).
  void set_processes(dist::ProcessGroup* processes, detail::LocalDevices local) {
    processes_ = processes;
    local_ = local;
  }

 private:
  // Per rank of a group: its communicator and device, both null for a rank
  // of another process.
  struct Comms {
    std::vector<ncclComm_t> ranks;
    std::vector<std::shared_ptr<DeviceResources>> devices;
  };
  void init_across_processes(const detail::TransportGroup& g, Comms& c);
  Comms& comms_for(const detail::TransportGroup& g);
  void note_pending(const Comms& c);
  template <class Issue>
  void issue_grouped(const detail::TransportGroup& g, const Comms& c, Issue issue);

  std::shared_ptr<WaitPolicy> policy_;
  dist::ProcessGroup* processes_ = nullptr;
  detail::LocalDevices local_;
  std::mutex mu_;  // guards comms_
  std::map<std::vector<DeviceId>, std::unique_ptr<Comms>> comms_;
  // Per calling thread: what complete() waits for (the completing device's
  // thread issues and completes one collective at a time).
  struct Pending {
    std::vector<StreamRef> streams;
    std::vector<CommRef> comms;
    std::string op;
  };
  static thread_local Pending pending_;
};

}  // namespace spmd::cuda
