#include "backend/cuda/copy_transport.h"

#include "backend/cuda/kernels/kernels.h"
#include "backend/cuda/nccl_check.h"

namespace spmd::cuda {

thread_local CopyTransport::Pending CopyTransport::pending_;

CopyTransport::CopyTransport(std::shared_ptr<WaitPolicy> policy) : policy_(std::move(policy)) {}

CopyTransport::Devices CopyTransport::devices_of(const detail::TransportGroup& g) {
  Devices d;
  for (DeviceId id : g.devices) d.push_back(DeviceTable::instance().at(id));
  pending_.op = g.op;
  for (const auto& r : d) pending_.streams.push_back({r->device, r->ordinal, r->stream});
  return d;
}

void CopyTransport::join(const Devices& devs, const std::string& op) {
  if (devs.size() < 2) return;
  std::vector<cudaEvent_t> events(devs.size(), nullptr);
  for (std::size_t i = 0; i < devs.size(); ++i) {
    DeviceGuard guard(devs[i]->ordinal);
    ErrorSite site{devs[i]->device, op};
    SPMD_CUDA_CHECK(cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming), site);
    SPMD_CUDA_CHECK(cudaEventRecord(events[i], devs[i]->stream), site);
  }
  for (std::size_t i = 0; i < devs.size(); ++i) {
    DeviceGuard guard(devs[i]->ordinal);
    for (std::size_t j = 0; j < devs.size(); ++j) {
      if (j != i && devs[j]->stream != devs[i]->stream) {
        SPMD_CUDA_CHECK(cudaStreamWaitEvent(devs[i]->stream, events[j], 0), (ErrorSite{devs[i]->device, op}));
      }
    }
  }
  for (std::size_t i = 0; i < devs.size(); ++i) {
    DeviceGuard guard(devs[i]->ordinal);
    cudaEventDestroy(events[i]);  // released once recorded work completed
  }
}

void CopyTransport::reduce_into(const Devices& devs, std::size_t r, detail::ReduceKind op, DType dtype,
                                std::int64_t count, const std::vector<const void*>& in, std::int64_t offset, void* out,
                                const std::string& what) {
  const DeviceResources& me = *devs[r];
  DeviceGuard guard(me.ordinal);
  ErrorSite site{me.device, what};
  const std::size_t es = dtype_size(dtype);
  std::vector<const void*> sources(in.size());
  std::vector<void*> staged;
  for (std::size_t s = 0; s < in.size(); ++s) {
    sources[s] = in[s];
    if (devs[s]->ordinal != me.ordinal) {
      // Another GPU's buffer: bring the needed range over first.
      void* p = nullptr;
      const std::size_t bytes = static_cast<std::size_t>(count) * es;
      SPMD_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes == 0 ? 256 : bytes, me.pool, me.stream), site);
      SPMD_CUDA_CHECK(cudaMemcpyPeerAsync(p, me.ordinal, static_cast<const std::byte*>(in[s]) + offset * es,
                                          devs[s]->ordinal, bytes, me.stream),
                      site);
      sources[s] = static_cast<const std::byte*>(p) - offset * es;
      staged.push_back(p);
    }
  }
  void* table = nullptr;
  SPMD_CUDA_CHECK(cudaMallocFromPoolAsync(&table, sources.size() * sizeof(void*), me.pool, me.stream), site);
  SPMD_CUDA_CHECK(cudaMemcpyAsync(table, sources.data(), sources.size() * sizeof(void*), cudaMemcpyHostToDevice,
                                  me.stream),
                  site);
  const int code = op == detail::ReduceKind::kSum ? 0 : op == detail::ReduceKind::kMax ? 1 : 2;
  kernels::group_reduce(me.stream, code, dtype, static_cast<const void* const*>(table), static_cast<int>(in.size()),
                        offset, out, count);
  SPMD_CUDA_CHECK(cudaGetLastError(), site);
  cudaFreeAsync(table, me.stream);
  for (void* p : staged) cudaFreeAsync(p, me.stream);
}

void CopyTransport::all_reduce(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype,
                               std::int64_t count, const std::vector<const void*>& in, const std::vector<void*>& out) {
  Devices devs = devices_of(g);
  join(devs, g.op);
  for (std::size_t r = 0; r < devs.size(); ++r) reduce_into(devs, r, op, dtype, count, in, 0, out[r], g.op);
  join(devs, g.op);
}

void CopyTransport::reduce_scatter(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype,
                                   std::int64_t count, const std::vector<const void*>& in,
                                   const std::vector<void*>& out) {
  Devices devs = devices_of(g);
  join(devs, g.op);
  for (std::size_t r = 0; r < devs.size(); ++r) {
    reduce_into(devs, r, op, dtype, count, in, static_cast<std::int64_t>(r) * count, out[r], g.op);
  }
  join(devs, g.op);
}

void CopyTransport::all_gather(const detail::TransportGroup& g, std::size_t bytes, const std::vector<const void*>& in,
                               const std::vector<void*>& out) {
  Devices devs = devices_of(g);
  join(devs, g.op);
  for (std::size_t r = 0; r < devs.size(); ++r) {
    DeviceGuard guard(devs[r]->ordinal);
    for (std::size_t s = 0; s < in.size(); ++s) {
      SPMD_CUDA_CHECK(cudaMemcpyAsync(static_cast<std::byte*>(out[r]) + s * bytes, in[s], bytes, cudaMemcpyDefault,
                                      devs[r]->stream),
                      (ErrorSite{devs[r]->device, g.op}));
    }
  }
  join(devs, g.op);
}

void CopyTransport::exchange(const detail::TransportGroup& g, const std::vector<detail::Transfer>& transfers) {
  Devices devs = devices_of(g);
  join(devs, g.op);
  for (const auto& t : transfers) {
    const auto& dst = devs[static_cast<std::size_t>(t.to)];
    DeviceGuard guard(dst->ordinal);
    SPMD_CUDA_CHECK(cudaMemcpyAsync(t.dst, t.src, t.bytes, cudaMemcpyDefault, dst->stream),
                    (ErrorSite{dst->device, g.op}));
  }
  join(devs, g.op);
}

void CopyTransport::complete() {
  Pending p = std::move(pending_);
  pending_ = Pending{};
  if (p.streams.empty()) return;
  wait_streams(p.streams, {}, p.op, *policy_);
}

}  // namespace spmd::cuda
