#include "backend/cuda/nccl_transport.h"

#include <algorithm>
#include <cstring>

#include "backend/cuda/nccl_check.h"
#include "backend/cuda/nccl_types.h"
#include "spmd/error.h"
#include "util/log.h"

namespace spmd::cuda {

thread_local NcclTransport::Pending NcclTransport::pending_;

NcclTransport::NcclTransport(std::shared_ptr<WaitPolicy> policy) : policy_(std::move(policy)) {}

NcclTransport::~NcclTransport() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, c] : comms_) {
    for (ncclComm_t comm : c->ranks) {
      if (comm != nullptr) ncclCommDestroy(comm);
    }
  }
}

void NcclTransport::abort_all() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, c] : comms_) {
    for (ncclComm_t comm : c->ranks) {
      if (comm != nullptr) ncclCommAbort(comm);
    }
  }
  comms_.clear();
}

NcclTransport::Comms& NcclTransport::comms_for(const detail::TransportGroup& g) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = comms_[g.devices];
  const bool spans_processes = std::any_of(g.devices.begin(), g.devices.end(),
                                           [&](DeviceId d) { return processes_ != nullptr && !local_.contains(d); });
  if (!slot && spans_processes) {
    auto c = std::make_unique<Comms>();
    init_across_processes(g, *c);
    slot = std::move(c);
  } else if (!slot) {
    auto c = std::make_unique<Comms>();
    std::vector<int> ordinals;
    for (DeviceId d : g.devices) {
      c->devices.push_back(DeviceTable::instance().at(d));
      ordinals.push_back(c->devices.back()->ordinal);
    }
    c->ranks.resize(g.devices.size());
    SPMD_LOG(kCuda, debug, "ncclCommInitAll for {} over {} devices", g.op, ordinals.size());
    SPMD_NCCL_CHECK(ncclCommInitAll(c->ranks.data(), static_cast<int>(ordinals.size()), ordinals.data()),
                    (ErrorSite{g.devices.front(), "communicator setup for " + g.op}));
    slot = std::move(c);
  }
  return *slot;
}

void NcclTransport::init_across_processes(const detail::TransportGroup& g, Comms& c) {
  ErrorSite site{g.devices.front(), "communicator setup for " + g.op};
  std::vector<int> members(g.devices.begin(), g.devices.end());
  // Process 0 makes the id; every process receives the same bytes. Every
  // process sets up every group of a collective (the data plane visits all
  // groups, also those without a rank here), so process 0 is always there.
  const std::string id_bytes = processes_->share("nccl." + dist::group_key(members), [&] {
    ncclUniqueId id;
    SPMD_NCCL_CHECK(ncclGetUniqueId(&id), site);
    return std::string(reinterpret_cast<const char*>(&id), sizeof(id));
  });
  ncclUniqueId id;
  if (id_bytes.size() != sizeof(id)) {
    Report r = make_report("BackendError",
                           "NCCL unique id for " + g.op + " has " + std::to_string(id_bytes.size()) +
                               " bytes, expected " + std::to_string(sizeof(id)),
                           "every process must run the same spmd build against the same NCCL version");
    throw BackendError(std::move(r));
  }
  std::memcpy(&id, id_bytes.data(), sizeof(id));
  const int n = static_cast<int>(g.devices.size());
  c.ranks.assign(g.devices.size(), nullptr);
  c.devices.assign(g.devices.size(), nullptr);
  // This process's ranks join together (one thread, several GPUs).
  SPMD_NCCL_CHECK(ncclGroupStart(), site);
  for (int r = 0; r < n; ++r) {
    const DeviceId d = g.devices[static_cast<std::size_t>(r)];
    if (!local_.contains(d)) continue;
    c.devices[static_cast<std::size_t>(r)] = DeviceTable::instance().at(d);
    DeviceGuard guard(c.devices[static_cast<std::size_t>(r)]->ordinal);
    site.device = d;
    SPMD_LOG(kCuda, debug, "ncclCommInitRank for {}: device {} is rank {} of {}", g.op, d, r, n);
    SPMD_NCCL_CHECK(ncclCommInitRank(&c.ranks[static_cast<std::size_t>(r)], n, id, r), site);
  }
  SPMD_NCCL_CHECK(ncclGroupEnd(), site);
}

void NcclTransport::note_pending(const Comms& c) {
  for (std::size_t r = 0; r < c.devices.size(); ++r) {
    if (c.ranks[r] == nullptr) continue;  // another process's rank
    pending_.streams.push_back({c.devices[r]->device, c.devices[r]->ordinal, c.devices[r]->stream});
    pending_.comms.push_back({c.devices[r]->device, c.ranks[r]});
  }
}

// One collective: `issue(site)` makes every rank's NCCL calls inside one
// ncclGroupStart/End (one thread drives all ranks), and complete() will wait
// for the group's streams.
template <class Issue>
void NcclTransport::issue_grouped(const detail::TransportGroup& g, const Comms& c, Issue issue) {
  pending_.op = g.op;
  SPMD_LOG(kCuda, debug, "NCCL group for {} over {} ranks", g.op, c.ranks.size());
  ErrorSite site{g.devices.front(), g.op};
  SPMD_NCCL_CHECK(ncclGroupStart(), site);
  issue(site);
  SPMD_NCCL_CHECK(ncclGroupEnd(), site);
  note_pending(c);
}

void NcclTransport::all_reduce(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                               const std::vector<const void*>& in, const std::vector<void*>& out) {
  Comms& c = comms_for(g);
  issue_grouped(g, c, [&](ErrorSite& site) {
    for (std::size_t r = 0; r < c.ranks.size(); ++r) {
      if (c.ranks[r] == nullptr) continue;
      site.device = c.devices[r]->device;
      SPMD_NCCL_CHECK(ncclAllReduce(in[r], out[r], static_cast<std::size_t>(count), nccl_dtype(dtype), nccl_op(op),
                                    c.ranks[r], c.devices[r]->stream),
                      site);
    }
  });
}

void NcclTransport::all_gather(const detail::TransportGroup& g, std::size_t bytes, const std::vector<const void*>& in,
                               const std::vector<void*>& out) {
  Comms& c = comms_for(g);
  issue_grouped(g, c, [&](ErrorSite& site) {
    for (std::size_t r = 0; r < c.ranks.size(); ++r) {
      if (c.ranks[r] == nullptr) continue;
      site.device = c.devices[r]->device;
      SPMD_NCCL_CHECK(ncclAllGather(in[r], out[r], bytes, ncclUint8, c.ranks[r], c.devices[r]->stream), site);
    }
  });
}

void NcclTransport::reduce_scatter(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype,
                                   std::int64_t count, const std::vector<const void*>& in,
                                   const std::vector<void*>& out) {
  Comms& c = comms_for(g);
  issue_grouped(g, c, [&](ErrorSite& site) {
    for (std::size_t r = 0; r < c.ranks.size(); ++r) {
      if (c.ranks[r] == nullptr) continue;
      site.device = c.devices[r]->device;
      SPMD_NCCL_CHECK(ncclReduceScatter(in[r], out[r], static_cast<std::size_t>(count), nccl_dtype(dtype),
                                        nccl_op(op), c.ranks[r], c.devices[r]->stream),
                      site);
    }
  });
}

void NcclTransport::exchange(const detail::TransportGroup& g, const std::vector<detail::Transfer>& transfers) {
  Comms& c = comms_for(g);
  // A rank's copy to itself is a device copy, outside the NCCL group.
  for (const auto& t : transfers) {
    if (t.from != t.to || t.src == nullptr) continue;
    const auto& dev = c.devices[static_cast<std::size_t>(t.from)];
    DeviceGuard guard(dev->ordinal);
    SPMD_CUDA_CHECK(cudaMemcpyAsync(t.dst, t.src, t.bytes, cudaMemcpyDeviceToDevice, dev->stream),
                    (ErrorSite{dev->device, g.op}));
  }
  issue_grouped(g, c, [&](ErrorSite& site) {
    // Each side is issued by the process that holds it.
    for (const auto& t : transfers) {
      if (t.from == t.to) continue;
      if (const auto& src = c.devices[static_cast<std::size_t>(t.from)]) {
        site.device = src->device;
        SPMD_NCCL_CHECK(
            ncclSend(t.src, t.bytes, ncclUint8, t.to, c.ranks[static_cast<std::size_t>(t.from)], src->stream), site);
      }
      if (const auto& dst = c.devices[static_cast<std::size_t>(t.to)]) {
        site.device = dst->device;
        SPMD_NCCL_CHECK(
            ncclRecv(t.dst, t.bytes, ncclUint8, t.from, c.ranks[static_cast<std::size_t>(t.to)], dst->stream), site);
      }
    }
  });
}

void NcclTransport::complete() {
  Pending p = std::move(pending_);
  pending_ = Pending{};
  if (p.streams.empty()) return;
  wait_streams(p.streams, p.comms, p.op, *policy_);
}

}  // namespace spmd::cuda
