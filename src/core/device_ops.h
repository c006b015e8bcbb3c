#pragma once
// The primitives the public array ops are built on, for memory the host must
// not dereference (MemoryKind::kCuda). Every public op validates its operands
// and computes result shapes and dtypes on the host, exactly as for host
// arrays; when the result is placed in device memory (the calling device's
// arena is not host memory) it hands the data work to the DeviceOps
// registered for that memory kind. There is no silent host fallback: an op
// whose placement has no registered DeviceOps throws BackendError.
//
// The contract of each primitive is the host implementation's (see
// elementwise.cc, reduction.cc, ...): results must be bit-identical to it
// wherever the math is exact (integer ops, comparisons, min/max, copies,
// IEEE-rounded +-*/ and sqrt, float sums in the host's blocking order);
// transcendental functions may differ by the device library's ulp error.
//
// Pointers are raw storage (device pointers for kCuda); element offsets and
// strides count elements. `device` is the device whose memory and stream the
// call uses: the calling placement's device for compute, the array's owner
// for memory moves (the host may download a device's array after a run).
// Calls are ordered per device; a download returns once the data is on the
// host. Implementations must be safe to call from several host threads for
// different devices at once.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/placement.h"
#include "spmd/core/array.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"
#include "spmd/core/memory_kind.h"
#include "spmd/core/reduction.h"

namespace spmd::detail {

/// An input of a primitive: storage and element type.
struct Operand {
  const void* data = nullptr;
  DType dtype = DType::kFloat32;
};
/// The output of a primitive, freshly allocated in the placement's arena.
struct Output {
  void* data = nullptr;
  DType dtype = DType::kFloat32;
};
inline Operand operand(const Array& a) { return {a.raw_data(), a.dtype()}; }
inline Output output(Array& a) { return {a.mutable_raw_data(), a.dtype()}; }

using Strides = std::vector<std::int64_t>;

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  virtual std::string_view name() const = 0;

  // --- memory moves ---------------------------------------------------------
  /// `rows` rows of `width` bytes from src (row pitch src_pitch bytes) to dst
  /// (row pitch dst_pitch). kDeviceToHost returns when the host has the data.
  virtual void copy_rows(DeviceId device, CopyKind kind, void* dst, std::size_t dst_pitch, const void* src,
                         std::size_t src_pitch, std::size_t width, std::size_t rows) = 0;
  /// out[i] = narrow<T>(value) for i < n (creation ops: zeros, ones, full).
  virtual void fill(DeviceId device, Output out, std::int64_t n, double value) = 0;

  // --- elementwise ----------------------------------------------------------
  /// x already has the compute dtype; out has x's dtype, or bool for
  /// predicates (isnan, logical_not, ...).
  virtual void unary(DeviceId device, UnaryOp op, Operand x, Output out, std::int64_t n) = 0;
  /// a and b have the compute dtype; as/bs are their element strides in the
  /// result's index space (0 on broadcast axes); out is row-major `shape`,
  /// of a's dtype or bool for comparisons.
  virtual void binary(DeviceId device, BinaryOp op, Operand a, const Strides& as, Operand b, const Strides& bs,
                      Output out, const Shape& shape) = 0;
  /// out = c ? x : y; c is bool, x, y and out share a dtype.
  virtual void where(DeviceId device, Operand c, const Strides& cs, Operand x, const Strides& xs, Operand y,
                     const Strides& ys, Output out, const Shape& shape) = 0;
  /// out[i] = narrow<Out>(widen(x[i])) (saturating float -> int, NaN -> 0).
  virtual void astype(DeviceId device, Operand x, Output out, std::int64_t n) = 0;

  // --- layout ---------------------------------------------------------------
  /// out (row-major `shape`, x's dtype) element (i0, i1, ...) = x[offset + sum(i_k * strides[k])].
  virtual void strided_copy(DeviceId device, Operand x, std::int64_t offset, const Strides& strides, Output out,
                            const Shape& shape) = 0;
  /// For each index of `shape`: out[offset + i.out_strides] =
  /// combine(mode, out[...], value[i.value_strides]); out and value share a
  /// dtype; the selected elements are distinct.
  virtual void index_update(DeviceId device, Output out, std::int64_t offset, const Shape& shape,
                            const Strides& out_strides, Operand value, const Strides& value_strides,
                            UpdateMode mode) = 0;
  /// x viewed as (outer, n, inner); indices (int32 or int64, `count` of them,
  /// negative from the end, clamped to [0, n)); out is (outer, count, inner).
  virtual void take(DeviceId device, Operand x, Operand indices, std::int64_t count, Output out, std::int64_t outer,
                    std::int64_t n, std::int64_t inner) = 0;

  // --- reductions and linear algebra ----------------------------------------
  /// Reduces each row of x viewed as (outer, r) into out[outer] (dtype as
  /// reduction.cc decides). Float sums use the host's blocking: 4096-element
  /// blocks summed in order in double, block partials combined pairwise.
  virtual void reduce(DeviceId device, ReduceOp op, Operand x, Output out, std::int64_t outer, std::int64_t r) = 0;
  /// cumsum/cumprod along the middle axis of x viewed as (outer, n, inner).
  virtual void scan(DeviceId device, bool prod, Operand x, Output out, std::int64_t outer, std::int64_t n,
                    std::int64_t inner) = 0;
  /// out[b, i, j] = sum over kk ascending of a[a_off[b] + i*k + kk] * b[b_off[b] + kk*n + j],
  /// accumulated in double (floats) or wrapping int64 (ints, bools), then
  /// narrowed to out's dtype.
  virtual void matmul(DeviceId device, Operand a, Operand b, Output out, const Strides& a_off, const Strides& b_off,
                      std::int64_t m, std::int64_t k, std::int64_t n) = 0;
};

/// Registers `ops` for `kind` (nullptr removes it). Backends register theirs
/// when created; tests may install a fake. Not thread-safe against running ops.
void register_device_ops(MemoryKind kind, DeviceOps* ops);
/// The registered ops, or nullptr.
DeviceOps* find_device_ops(MemoryKind kind);
/// The registered ops; throws BackendError naming `what` when there are none.
DeviceOps& device_ops(MemoryKind kind, std::string_view what);

/// Memory kind of the calling placement's arena.
MemoryKind placement_memory_kind();
/// The ops computing results placed on the calling device, or nullptr when
/// they go to host memory (the host implementation runs). Throws
/// BackendError when the placement is device memory without registered ops.
DeviceOps* placement_ops(std::string_view what);
/// `x` in the calling placement's memory kind: x itself, or a copy in the
/// calling placement's arena (a host constant used inside a GPU device is
/// uploaded; a device array read on the host is downloaded).
Array in_placement_memory(const Array& x, std::string_view what);
/// The calling placement's device (the `device` argument of compute calls).
DeviceId placement_device();

/// Builds an array in host memory with `build()`, then places it on the
/// calling device (an upload when its memory is not host memory). For
/// creation ops computed on the host (arange, linspace, eye, from data).
template <class F>
Array built_on_host(F&& build, std::string_view what) {
  if (placement_memory_kind() == MemoryKind::kHost) return build();
  Array h;
  {
    PlacementScope host(nullptr);
    h = build();
  }
  return in_placement_memory(h, what);
}

/// Byte copy between any two memory kinds (the device side names the ops).
void copy_bytes(void* dst, MemoryKind dst_kind, DeviceId dst_device, const void* src, MemoryKind src_kind,
                DeviceId src_device, std::size_t nbytes, std::string_view what);
/// Strided row copy between any two memory kinds: `rows` rows of `width` bytes.
void copy_rows_between(void* dst, MemoryKind dst_kind, DeviceId dst_device, std::size_t dst_pitch, const void* src,
                       MemoryKind src_kind, DeviceId src_device, std::size_t src_pitch, std::size_t width,
                       std::size_t rows, std::string_view what);

}  // namespace spmd::detail
