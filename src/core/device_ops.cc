#include "core/device_ops.h"

#include <array>
#include <atomic>
#include <cstring>

#include "core/arena.h"
#include "core/placement.h"
#include "spmd/detail/buffer.h"
#include "spmd/error.h"

namespace spmd {

std::string_view memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kCuda: return "cuda";
  }
  return "unknown";
}

}  // namespace spmd

namespace spmd::detail {

namespace {
std::array<std::atomic<DeviceOps*>, 2> g_ops{};

std::atomic<DeviceOps*>& slot(MemoryKind kind) { return g_ops[static_cast<std::size_t>(kind)]; }
}  // namespace

void register_device_ops(MemoryKind kind, DeviceOps* ops) { slot(kind).store(ops, std::memory_order_release); }

DeviceOps* find_device_ops(MemoryKind kind) {
  if (kind == MemoryKind::kHost) return nullptr;
  return slot(kind).load(std::memory_order_acquire);
}

DeviceOps& device_ops(MemoryKind kind, std::string_view what) {
  DeviceOps* ops = find_device_ops(kind);
  if (ops == nullptr) {
    Report r = make_report("BackendError",
                           std::string(what) + ": no operations are registered for " +
                               std::string(memory_kind_name(kind)) + " memory",
                           "arrays in " + std::string(memory_kind_name(kind)) +
                               " memory exist only while the backend that created them is alive");
    r.op = std::string(what);
    throw BackendError(std::move(r));
  }
  return *ops;
}

MemoryKind placement_memory_kind() { return current_placement()->arena->memory_kind(); }

DeviceId placement_device() { return current_placement()->device; }

DeviceOps* placement_ops(std::string_view what) {
  MemoryKind kind = placement_memory_kind();
  if (kind == MemoryKind::kHost) return nullptr;
  return &device_ops(kind, what);
}

void copy_rows_between(void* dst, MemoryKind dst_kind, DeviceId dst_device, std::size_t dst_pitch, const void* src,
                       MemoryKind src_kind, DeviceId src_device, std::size_t src_pitch, std::size_t width,
                       std::size_t rows, std::string_view what) {
  if (width == 0 || rows == 0) return;
  if (dst_kind == MemoryKind::kHost && src_kind == MemoryKind::kHost) {
    auto* d = static_cast<std::byte*>(dst);
    const auto* s = static_cast<const std::byte*>(src);
    if (dst_pitch == width && src_pitch == width) {
      std::memcpy(d, s, width * rows);
      return;
    }
    for (std::size_t r = 0; r < rows; ++r) std::memcpy(d + r * dst_pitch, s + r * src_pitch, width);
    return;
  }
  if (dst_kind == MemoryKind::kHost) {
    device_ops(src_kind, what).copy_rows(src_device, CopyKind::kDeviceToHost, dst, dst_pitch, src, src_pitch, width,
                                         rows);
  } else if (src_kind == MemoryKind::kHost) {
    device_ops(dst_kind, what).copy_rows(dst_device, CopyKind::kHostToDevice, dst, dst_pitch, src, src_pitch, width,
                                         rows);
  } else {
    if (dst_kind != src_kind) {
      Report r = make_report("BackendError", std::string(what) + ": cannot copy between " +
                                                 std::string(memory_kind_name(src_kind)) + " and " +
                                                 std::string(memory_kind_name(dst_kind)) + " memory directly");
      throw BackendError(std::move(r));
    }
    device_ops(dst_kind, what).copy_rows(dst_device, CopyKind::kDeviceToDevice, dst, dst_pitch, src, src_pitch,
                                         width, rows);
  }
}

void copy_bytes(void* dst, MemoryKind dst_kind, DeviceId dst_device, const void* src, MemoryKind src_kind,
                DeviceId src_device, std::size_t nbytes, std::string_view what) {
  copy_rows_between(dst, dst_kind, dst_device, nbytes, src, src_kind, src_device, nbytes, nbytes, 1, what);
}

Array in_placement_memory(const Array& x, std::string_view what) {
  MemoryKind want = placement_memory_kind();
  if (x.memory_kind() == want) return x;
  Array out = Array::uninitialized(x.shape(), x.dtype(), what).with_weak_type(x.weak_type());
  copy_bytes(out.mutable_raw_data(), want, placement_device(), x.raw_data(), x.memory_kind(), x.device(), x.nbytes(),
             what);
  return out;
}

}  // namespace spmd::detail
