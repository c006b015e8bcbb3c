#pragma once
// A Transport between processes through their store, for host memory: how
// the sim backend moves a collective's data in a run with local devices
// (RuntimeOptions::process_local_devices), where each process holds only its
// own devices' buffers. Every process posts the bytes of its ranks and reads
// the others' (ProcessGroup::exchange), then computes its ranks' results the
// way the host data plane does (rank order), so results equal a one-process
// run bit for bit. Slow (files), exact, and needs no network: it exists to
// run and test the multi-process data path without GPUs; the cuda backend
// moves the same collectives with NCCL.
//
// Buffers of other processes' ranks are null in every call.

#include <map>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "dataplane/transport.h"
#include "dist/process_group.h"

namespace spmd::dist {

class StoreTransport final : public detail::Transport {
 public:
  /// `devices_per_process`: process p runs devices p*L .. p*L+L-1.
  StoreTransport(ProcessGroup& processes, int devices_per_process);

  std::string_view name() const override { return "store"; }
  void all_reduce(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                  const std::vector<const void*>& in, const std::vector<void*>& out) override;
  void all_gather(const detail::TransportGroup& g, std::size_t bytes, const std::vector<const void*>& in,
                  const std::vector<void*>& out) override;
  void reduce_scatter(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                      const std::vector<const void*>& in, const std::vector<void*>& out) override;
  void exchange(const detail::TransportGroup& g, const std::vector<detail::Transfer>& transfers) override;
  void complete() override {}

 private:
  int owner(DeviceId device) const { return device / devices_per_process_; }
  /// Posts `mine` for the group's next exchange; returns each process's
  /// bytes, indexed by process rank (empty for processes outside the group).
  std::vector<std::string> swap(const detail::TransportGroup& g, const std::string& mine);
  /// Every rank's `bytes`-sized buffer: this process's from `in`, the
  /// others' inside `parts` (each process posts its ranks' buffers in rank order).
  std::vector<const void*> all_buffers(const detail::TransportGroup& g, const std::vector<const void*>& in,
                                       std::size_t bytes, const std::vector<std::string>& parts) const;
  std::string pack(const std::vector<const void*>& in, std::size_t bytes) const;

  ProcessGroup& processes_;
  int devices_per_process_;
  std::map<std::string, std::int64_t> exchanges_;  // per group key: exchanges so far
};

}  // namespace spmd::dist
