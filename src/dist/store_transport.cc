#include "dist/store_transport.h"

#include <cstring>
#include <set>

#include "dataplane/rank_order_reduce.h"
#include "spmd/error.h"

namespace spmd::dist {

namespace {

[[noreturn]] void short_part(int process, std::size_t got, std::size_t need, const std::string& op) {
  throw BackendError(make_report("BackendError",
                                 "store transport: process " + std::to_string(process) + " sent " +
                                     std::to_string(got) + " bytes for " + op + ", expected at least " +
                                     std::to_string(need),
                                 "every process must run the same program on the same shapes"));
}

}  // namespace

StoreTransport::StoreTransport(ProcessGroup& processes, int devices_per_process)
    : processes_(processes), devices_per_process_(devices_per_process) {}

std::vector<std::string> StoreTransport::swap(const detail::TransportGroup& g, const std::string& mine) {
  std::set<int> owners;
  std::vector<int> devices;
  for (DeviceId d : g.devices) {
    owners.insert(owner(d));
    devices.push_back(d);
  }
  const std::string key = group_key(devices);
  const std::int64_t n = exchanges_[key]++;
  const std::vector<int> members(owners.begin(), owners.end());
  std::vector<std::string> got = processes_.exchange(key, n, mine, members);
  std::vector<std::string> parts(static_cast<std::size_t>(processes_.world()));
  for (std::size_t i = 0; i < members.size(); ++i) parts[static_cast<std::size_t>(members[i])] = std::move(got[i]);
  return parts;
}

std::string StoreTransport::pack(const std::vector<const void*>& in, std::size_t bytes) const {
  std::string out;
  for (const void* p : in) {
    if (p != nullptr) out.append(static_cast<const char*>(p), bytes);
  }
  return out;
}

std::vector<const void*> StoreTransport::all_buffers(const detail::TransportGroup& g,
                                                     const std::vector<const void*>& in, std::size_t bytes,
                                                     const std::vector<std::string>& parts) const {
  std::vector<const void*> all(g.devices.size());
  std::map<int, std::size_t> taken;  // per process: its ranks read so far
  for (std::size_t r = 0; r < g.devices.size(); ++r) {
    const int p = owner(g.devices[r]);
    const std::size_t k = taken[p]++;
    if (in[r] != nullptr) {
      all[r] = in[r];
      continue;
    }
    const std::string& part = parts[static_cast<std::size_t>(p)];
    if (part.size() < (k + 1) * bytes) short_part(p, part.size(), (k + 1) * bytes, g.op);
    all[r] = part.data() + k * bytes;
  }
  return all;
}

void StoreTransport::all_reduce(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype,
                                std::int64_t count, const std::vector<const void*>& in,
                                const std::vector<void*>& out) {
  const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dtype);
  const std::vector<std::string> parts = swap(g, pack(in, bytes));
  const std::vector<const void*> all = all_buffers(g, in, bytes, parts);
  for (void* o : out) {
    if (o != nullptr) detail::reduce_in_rank_order(op, dtype, count, all, 0, o);
  }
}

void StoreTransport::all_gather(const detail::TransportGroup& g, std::size_t bytes, const std::vector<const void*>& in,
                                const std::vector<void*>& out) {
  const std::vector<std::string> parts = swap(g, pack(in, bytes));
  const std::vector<const void*> all = all_buffers(g, in, bytes, parts);
  for (void* o : out) {
    if (o == nullptr) continue;
    for (std::size_t s = 0; s < all.size(); ++s) std::memcpy(static_cast<std::byte*>(o) + s * bytes, all[s], bytes);
  }
}

void StoreTransport::reduce_scatter(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype,
                                    std::int64_t count, const std::vector<const void*>& in,
                                    const std::vector<void*>& out) {
  const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dtype) * g.devices.size();
  const std::vector<std::string> parts = swap(g, pack(in, bytes));
  const std::vector<const void*> all = all_buffers(g, in, bytes, parts);
  for (std::size_t r = 0; r < out.size(); ++r) {
    if (out[r] != nullptr) {
      detail::reduce_in_rank_order(op, dtype, count, all, static_cast<std::int64_t>(r) * count, out[r]);
    }
  }
}

void StoreTransport::exchange(const detail::TransportGroup& g, const std::vector<detail::Transfer>& transfers) {
  // This process posts what its ranks send, in transfer order; every process
  // finds a transfer's bytes at the same offset in its sender's part.
  std::string mine;
  for (const auto& t : transfers) {
    if (t.src != nullptr) mine.append(static_cast<const char*>(t.src), t.bytes);
  }
  const std::vector<std::string> parts = swap(g, mine);
  std::map<int, std::size_t> offset;  // per sending process
  for (const auto& t : transfers) {
    const int p = owner(g.devices[static_cast<std::size_t>(t.from)]);
    const std::size_t at = offset[p];
    offset[p] += t.bytes;
    if (t.dst == nullptr) continue;
    if (t.src != nullptr) {
      std::memcpy(t.dst, t.src, t.bytes);
      continue;
    }
    const std::string& part = parts[static_cast<std::size_t>(p)];
    if (part.size() < at + t.bytes) short_part(p, part.size(), at + t.bytes, g.op);
    std::memcpy(t.dst, part.data() + at, t.bytes);
  }
}

}  // namespace spmd::dist
