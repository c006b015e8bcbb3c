#pragma once
// A fake "GPU" for testing the memory-kind dispatch on the CPU.
//
// FakeDeviceArena hands out memory of kind MemoryKind::kCuda whose pointers
// the host cannot dereference: every block is mapped twice (MAP_SHARED +
// mremap), once readable and writable, once PROT_NONE, and the arena returns
// the PROT_NONE address. Host code that touches a "device" pointer crashes
// at once (SIGSEGV), so a test passes only if every op dispatched to the
// DeviceOps. FakeDeviceOps translates the pointers back and computes with
// the host implementation (public ops on host copies), so results must equal
// the host's bit for bit. FakeGpuBackend runs pmaps on the simulator with
// these arenas and moves collective data through the host data plane.

#include <sys/mman.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "backend/backend.h"
#include "runtime/backend_registry.h"
#include "dataplane/data_plane.h"
#include "dataplane/device_plane.h"
#include "dataplane/rank_order_reduce.h"
#include "dataplane/transport.h"
#include "core/arena.h"
#include "core/device_ops.h"
#include "core/element_access.h"
#include "core/placement.h"
#include "rendezvous/communicator.h"
#include "runtime/device_context.h"
#include "spmd/spmd.h"

namespace spmd::testing {

/// Device-pointer -> host-view translation shared by the fake arenas and ops.
class FakeMemory {
 public:
  static FakeMemory& instance() {
    static FakeMemory m;
    return m;
  }
  void* allocate(std::size_t nbytes) {
    std::size_t len = (std::max<std::size_t>(nbytes, 1) + 4095) / 4096 * 4096;
    void* rw = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (rw == MAP_FAILED) return nullptr;
    void* dev = ::mremap(rw, 0, len, MREMAP_MAYMOVE);
    if (dev == MAP_FAILED) {
      ::munmap(rw, len);
      return nullptr;
    }
    ::mprotect(dev, len, PROT_NONE);
    std::lock_guard<std::mutex> lock(mu_);
    blocks_[reinterpret_cast<std::uintptr_t>(dev)] = {static_cast<std::byte*>(rw), len};
    ++live_blocks_;
    return dev;
  }
  void release(void* dev) {
    Block b;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(dev));
      if (it == blocks_.end()) std::abort();
      b = it->second;
      blocks_.erase(it);
      --live_blocks_;
    }
    ::munmap(dev, b.len);
    ::munmap(b.rw, b.len);
  }
  /// The host view of a device address (interior pointers included).
  std::byte* host_view(const void* dev) {
    auto addr = reinterpret_cast<std::uintptr_t>(dev);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.upper_bound(addr);
    if (it == blocks_.begin()) throw std::logic_error("fake device: not a device pointer");
    --it;
    if (addr > it->first + it->second.len) throw std::logic_error("fake device: not a device pointer");
    return it->second.rw + (addr - it->first);
  }
  bool is_device(const void* p) {
    auto addr = reinterpret_cast<std::uintptr_t>(p);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.upper_bound(addr);
    if (it == blocks_.begin()) return false;
    --it;
    return addr <= it->first + it->second.len;
  }
  long live_blocks() {
    std::lock_guard<std::mutex> lock(mu_);
    return live_blocks_;
  }

 private:
  struct Block {
    std::byte* rw = nullptr;
    std::size_t len = 0;
  };
  std::mutex mu_;
  std::map<std::uintptr_t, Block> blocks_;
  long live_blocks_ = 0;
};

class FakeDeviceArena final : public detail::Arena {
 public:
  FakeDeviceArena(DeviceId device, std::size_t capacity, std::string label)
      : Arena(device, capacity, std::move(label), MemoryKind::kCuda) {}

 protected:
  void* obtain_raw(std::size_t nbytes) override { return FakeMemory::instance().allocate(nbytes); }
  void release_raw(void* p, std::size_t) noexcept override { FakeMemory::instance().release(p); }
};

/// Computes on host copies with the public host ops; counts calls per primitive.
class FakeDeviceOps final : public detail::DeviceOps {
 public:
  std::atomic<int> calls{0};
  std::atomic<int> downloads{0};
  std::atomic<int> uploads{0};

  std::string_view name() const override { return "fake"; }

  void copy_rows(DeviceId, detail::CopyKind kind, void* dst, std::size_t dst_pitch, const void* src,
                 std::size_t src_pitch, std::size_t width, std::size_t rows) override {
    auto& mem = FakeMemory::instance();
    std::byte* d = static_cast<std::byte*>(dst);
    const std::byte* s = static_cast<const std::byte*>(src);
    if (kind != detail::CopyKind::kDeviceToHost) d = mem.host_view(dst);
    if (kind != detail::CopyKind::kHostToDevice) s = mem.host_view(src);
    if (kind == detail::CopyKind::kDeviceToHost) ++downloads;
    if (kind == detail::CopyKind::kHostToDevice) ++uploads;
    ++calls;
    for (std::size_t r = 0; r < rows; ++r) std::memcpy(d + r * dst_pitch, s + r * src_pitch, width);
  }

  void fill(DeviceId, detail::Output out, std::int64_t n, double value) override {
    store(out, host([&] { return full({n}, value, out.dtype); }));
  }
  void unary(DeviceId, UnaryOp op, detail::Operand x, detail::Output out, std::int64_t n) override {
    store(out, host([&] { return spmd::unary(op, load(x, {n})); }));
  }
  void binary(DeviceId, BinaryOp op, detail::Operand a, const detail::Strides& as, detail::Operand b,
              const detail::Strides& bs, detail::Output out, const Shape& shape) override {
    store(out, host([&] { return spmd::binary(op, load(a, viewed(shape, as)), load(b, viewed(shape, bs))); }));
  }
  void where(DeviceId, detail::Operand c, const detail::Strides& cs, detail::Operand x, const detail::Strides& xs,
             detail::Operand y, const detail::Strides& ys, detail::Output out, const Shape& shape) override {
    store(out, host([&] {
            return spmd::where(load(c, viewed(shape, cs)), load(x, viewed(shape, xs)), load(y, viewed(shape, ys)));
          }));
  }
  void astype(DeviceId, detail::Operand x, detail::Output out, std::int64_t n) override {
    store(out, host([&] { return spmd::astype(load(x, {n}), out.dtype); }));
  }
  void strided_copy(DeviceId, detail::Operand x, std::int64_t offset, const detail::Strides& strides,
                    detail::Output out, const Shape& shape) override {
    ++calls;
    const std::size_t es = dtype_size(x.dtype);
    const std::byte* src = FakeMemory::instance().host_view(x.data);
    std::byte* dst = FakeMemory::instance().host_view(out.data);
    for_each_index(shape, [&](std::int64_t flat, const std::vector<std::int64_t>& idx) {
      std::int64_t off = offset;
      for (std::size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
      std::memcpy(dst + static_cast<std::size_t>(flat) * es, src + off * static_cast<std::int64_t>(es), es);
    });
  }
  void index_update(DeviceId, detail::Output out, std::int64_t offset, const Shape& shape,
                    const detail::Strides& out_strides, detail::Operand value, const detail::Strides& value_strides,
                    UpdateMode mode) override {
    ++calls;
    const std::byte* vbase = FakeMemory::instance().host_view(value.data);
    std::byte* obase = FakeMemory::instance().host_view(out.data);
    detail::visit_dtype(out.dtype, [&](auto tag) {
      using T = decltype(tag);
      T* o = reinterpret_cast<T*>(obase);
      const T* v = reinterpret_cast<const T*>(vbase);
      for_each_index(shape, [&](std::int64_t, const std::vector<std::int64_t>& idx) {
        std::int64_t oo = offset, vo = 0;
        for (std::size_t d = 0; d < idx.size(); ++d) {
          oo += idx[d] * out_strides[d];
          vo += idx[d] * value_strides[d];
        }
        double a = static_cast<double>(detail::widen(o[oo])), b = static_cast<double>(detail::widen(v[vo]));
        double r = b;
        switch (mode) {
          case UpdateMode::kSet: o[oo] = v[vo]; return;
          case UpdateMode::kAdd: r = a + b; break;
          case UpdateMode::kMultiply: r = a * b; break;
          case UpdateMode::kMin: r = std::isnan(a) ? a : std::isnan(b) ? b : std::min(a, b); break;
          case UpdateMode::kMax: r = std::isnan(a) ? a : std::isnan(b) ? b : std::max(a, b); break;
        }
        o[oo] = detail::narrow<T>(r);
      });
    });
  }
  void take(DeviceId, detail::Operand x, detail::Operand indices, std::int64_t count, detail::Output out,
            std::int64_t outer, std::int64_t n, std::int64_t inner) override {
    store(out, host([&] { return spmd::take(load(x, {outer, n, inner}), load(indices, {count}), 1); }));
  }
  void reduce(DeviceId, ReduceOp op, detail::Operand x, detail::Output out, std::int64_t outer,
              std::int64_t r) override {
    store(out, host([&] {
            Array v = spmd::reduce(op, load(x, {outer, r}), std::vector<int>{1}, false);
            return v;
          }));
  }
  void scan(DeviceId, bool prod, detail::Operand x, detail::Output out, std::int64_t outer, std::int64_t n,
            std::int64_t inner) override {
    store(out, host([&] {
            Array v = load(x, {outer, n, inner});
            return prod ? spmd::cumprod(v, 1) : spmd::cumsum(v, 1);
          }));
  }
  void matmul(DeviceId, detail::Operand a, detail::Operand b, detail::Output out, const detail::Strides& a_off,
              const detail::Strides& b_off, std::int64_t m, std::int64_t k, std::int64_t n) override {
    ++calls;
    auto& mem = FakeMemory::instance();
    const std::size_t oes = dtype_size(out.dtype);
    for (std::size_t i = 0; i < a_off.size(); ++i) {
      Array r;
      {
        detail::PlacementScope h(nullptr);
        Array av = Array::from_raw(mem.host_view(a.data) + a_off[i] * static_cast<std::int64_t>(dtype_size(a.dtype)),
                                   {m, k}, a.dtype);
        Array bv = Array::from_raw(mem.host_view(b.data) + b_off[i] * static_cast<std::int64_t>(dtype_size(b.dtype)),
                                   {k, n}, b.dtype);
        r = spmd::astype(spmd::matmul(av, bv), out.dtype);
      }
      std::memcpy(mem.host_view(out.data) + i * static_cast<std::size_t>(m * n) * oes, r.raw_data(), r.nbytes());
    }
  }

 private:
  template <class F>
  Array host(F&& f) {
    ++calls;
    detail::PlacementScope h(nullptr);
    return f();
  }
  // Under the host placement: a host copy of `count` elements at a device address.
  static Array load(detail::Operand x, const Shape& shape) {
    return Array::from_raw(FakeMemory::instance().host_view(x.data), shape, x.dtype);
  }
  void store(detail::Output out, const Array& v) {
    if (v.dtype() != out.dtype) throw std::logic_error("fake device: result dtype differs from the output's");
    if (v.nbytes()) std::memcpy(FakeMemory::instance().host_view(out.data), v.raw_data(), v.nbytes());
  }
  // The operand's own shape seen from broadcast strides: 1 where the stride is 0.
  static Shape viewed(const Shape& shape, const detail::Strides& s) {
    Shape v = shape;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (s[i] == 0) v[i] = 1;
    }
    return v;
  }
  template <class F>
  static void for_each_index(const Shape& shape, F&& f) {
    std::int64_t total = num_elements(shape);
    std::vector<std::int64_t> idx(shape.size(), 0);
    for (std::int64_t flat = 0; flat < total; ++flat) {
      f(flat, idx);
      for (std::size_t d = shape.size(); d-- > 0;) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
  }
};

/// Installs a FakeDeviceOps for MemoryKind::kCuda for the scope.
class ScopedFakeDeviceOps {
 public:
  ScopedFakeDeviceOps() : previous_(detail::find_device_ops(MemoryKind::kCuda)) {
    detail::register_device_ops(MemoryKind::kCuda, &ops_);
  }
  ~ScopedFakeDeviceOps() { detail::register_device_ops(MemoryKind::kCuda, previous_); }
  FakeDeviceOps& ops() { return ops_; }

 private:
  detail::DeviceOps* previous_;
  FakeDeviceOps ops_;
};

/// Makes the calling thread a fake device (placement on a FakeDeviceArena).
class FakeDevicePlacement {
 public:
  explicit FakeDevicePlacement(DeviceId device = 0, std::size_t capacity = detail::Arena::kUnlimited)
      : placement_{nullptr, std::make_shared<FakeDeviceArena>(device, capacity, "device " + std::to_string(device)),
                   device},
        scope_(&placement_) {}
  const std::shared_ptr<detail::Arena>& arena() const { return placement_.arena; }

 private:
  detail::Placement placement_;
  detail::PlacementScope scope_;
};

/// Moves bytes between fake device buffers on the host, reducing in rank
/// order with the host data plane's accumulation types (as the cuda backend's
/// copy transport does on a GPU).
class FakeTransport final : public detail::Transport {
 public:
  std::atomic<int> calls{0};
  std::string_view name() const override { return "fake"; }
  void all_reduce(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                  const std::vector<const void*>& in, const std::vector<void*>& out) override {
    check(g, in.size());
    for (void* o : out) reduce(op, dtype, count, in, 0, o);
  }
  void all_gather(const detail::TransportGroup& g, std::size_t bytes, const std::vector<const void*>& in,
                  const std::vector<void*>& out) override {
    check(g, in.size());
    auto& mem = FakeMemory::instance();
    for (void* o : out) {
      for (std::size_t s = 0; s < in.size(); ++s) std::memcpy(mem.host_view(o) + s * bytes, mem.host_view(in[s]), bytes);
    }
  }
  void reduce_scatter(const detail::TransportGroup& g, detail::ReduceKind op, DType dtype, std::int64_t count,
                      const std::vector<const void*>& in, const std::vector<void*>& out) override {
    check(g, in.size());
    for (std::size_t r = 0; r < out.size(); ++r) reduce(op, dtype, count, in, static_cast<std::int64_t>(r) * count, out[r]);
  }
  void exchange(const detail::TransportGroup& g, const std::vector<detail::Transfer>& transfers) override {
    record(g);
    ++calls;
    auto& mem = FakeMemory::instance();
    for (const auto& t : transfers) {
      if (t.from < 0 || t.to < 0 || t.from >= static_cast<int>(g.devices.size()) ||
          t.to >= static_cast<int>(g.devices.size())) {
        throw std::logic_error("fake transport: rank out of range");
      }
      std::memcpy(mem.host_view(t.dst), mem.host_view(t.src), t.bytes);
    }
  }
  void complete() override {}

  /// Every group handed to any FakeTransport, in order (tests clear it).
  static std::vector<detail::TransportGroup>& log() {
    static std::vector<detail::TransportGroup> groups;
    return groups;
  }
  static std::mutex& log_mu() {
    static std::mutex mu;
    return mu;
  }

 private:
  static void record(const detail::TransportGroup& g) {
    std::lock_guard<std::mutex> lock(log_mu());
    log().push_back(g);
  }
  void check(const detail::TransportGroup& g, std::size_t n) {
    record(g);
    ++calls;
    if (g.devices.size() != n) throw std::logic_error("fake transport: buffers and group differ in size");
  }
  static void reduce(detail::ReduceKind op, DType dtype, std::int64_t count, const std::vector<const void*>& in,
                     std::int64_t offset, void* out) {
    auto& mem = FakeMemory::instance();
    std::vector<const void*> host;
    for (const void* p : in) host.push_back(mem.host_view(p));
    detail::reduce_in_rank_order(op, dtype, count, host, offset, mem.host_view(out));
  }
};

/// The simulator with fake device arenas; collectives run the device data
/// plane (device_plane.cc) over a FakeTransport.
class FakeGpuBackend final : public detail::Backend {
 public:
  FakeGpuBackend(int devices, int threads, std::uint64_t seed, std::size_t stack)
      : sim_(detail::create_backend("sim", devices, threads, seed, stack)) {}
  std::string_view name() const override { return "fakegpu"; }
  int device_count() const override { return sim_->device_count(); }
  std::shared_ptr<detail::Arena> make_arena(DeviceId device, std::size_t capacity, std::string label) override {
    return std::make_shared<FakeDeviceArena>(device, capacity, std::move(label));
  }
  std::unique_ptr<detail::Parker> make_parker() override { return sim_->make_parker(); }
  void launch(detail::LaunchedRun& run, std::span<detail::DeviceContext* const> devices,
              const detail::DeviceBody& body) override {
    sim_->launch(run, devices, body);
  }
  void yield() override { sim_->yield(); }
  void execute(detail::CollectiveCall& call) override { detail::execute_with_transport(call, transport_); }
  void set_nests(bool nests) { nests_ = nests; }
  /// "fakegpu-flat" cannot nest, like the cuda backend (devices are host threads bound to GPUs).
  std::exception_ptr nested_launch_error() const override {
    if (nests_) return nullptr;
    return std::make_exception_ptr(BackendError(make_report(
        "BackendError", "nested pmap is not supported on the fakegpu-flat backend", "use a mesh instead of nesting")));
  }
  FakeTransport& transport() { return transport_; }

 private:
  std::unique_ptr<detail::Backend> sim_;
  FakeTransport transport_;
  bool nests_ = true;
};

/// Registers "fakegpu" and "fakegpu-flat" (no nested pmap) with create_backend (idempotent).
inline void register_fake_gpu_backend() {
  detail::register_backend_factory("fakegpu", [](int devices, int threads, std::uint64_t seed, std::size_t stack) {
    return std::make_unique<FakeGpuBackend>(devices, threads, seed, stack);
  });
  detail::register_backend_factory("fakegpu-flat", [](int devices, int threads, std::uint64_t seed, std::size_t stack) {
    auto b = std::make_unique<FakeGpuBackend>(devices, threads, seed, stack);
    b->set_nests(false);
    return b;
  });
}

}  // namespace spmd::testing
