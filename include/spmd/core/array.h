#pragma once
/// \file
/// Array: a dense, immutable, row-major n-dimensional array owned by one device.
///
/// Ownership: an Array lives in the memory arena of the device that created it
/// (or on the host, outside any device). Arrays are values: copies share the
/// storage, which is never written after creation. Using an array of device A
/// in an op on device B throws InvalidArgument (kind "DeviceOwnershipError"):
/// data moves between devices only through collectives. Host arrays may be
/// read anywhere (they are constants captured by the device function).
/// In the simulator, a collective whose result is the same on every member
/// (psum, pmean, pmax, pmin, all_gather) gives each member an array of its
/// own device, charged to its own arena, over one shared block of host
/// memory: never write through mutable_raw_data() except into an array you
/// have just created.
///
/// New arrays are placed on the calling fiber's device: inside a pmap-ed
/// function that is the device running it, elsewhere the host.
///
/// Memory kinds: on the cuda backend a device's arrays live in its GPU's
/// memory (memory_kind() == MemoryKind::kCuda). Every op works on them (the
/// backend's kernels compute), and every accessor below that reads elements
/// (element_as_*, to_doubles, to_int64s, identical, printing) copies them to
/// the host first; raw_data()/data<T>() then return device pointers, which
/// the host must not dereference. to_host() gives a host copy explicitly.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/core/device_id.h"
#include "spmd/core/dtype.h"
#include "spmd/core/memory_kind.h"
#include "spmd/core/half.h"
#include "spmd/core/shape.h"

namespace spmd {

namespace detail {
class Buffer;
struct ArrayInternals;
}

class Array {
 public:
  /// A null array: valid() is false; every accessor but valid() throws.
  Array() = default;

  /// Uninitialised storage on the current placement, to be filled through
  /// mutable_raw_data() by the code that creates it and then never written.
  static Array uninitialized(const Shape& shape, DType dtype, std::string_view what = "array");

  /// Copies `count` host elements of `dtype`'s storage type into a new array.
  static Array from_raw(const void* data, const Shape& shape, DType dtype);
  /// Host values converted to `dtype` (rounded for float16/bfloat16).
  static Array from_doubles(std::span<const double> values, const Shape& shape, DType dtype);
  static Array from_int64s(std::span<const std::int64_t> values, const Shape& shape, DType dtype);
  static Array from_bools(const std::vector<bool>& values, const Shape& shape);
  /// A 0-d array. `weak` marks a Python scalar (see promote_weak).
  static Array scalar(double value, DType dtype, bool weak = false);
  static Array scalar_int(std::int64_t value, DType dtype = kDefaultInt, bool weak = false);

  bool valid() const { return buffer_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  std::int64_t size() const;  ///< number of elements
  std::size_t nbytes() const;
  bool weak_type() const { return weak_; }
  DeviceId device() const;  ///< owning device, or kHost
  /// Where the storage lives: MemoryKind::kHost, or kCuda for an array of a
  /// GPU device (cuda backend), which the host cannot dereference.
  MemoryKind memory_kind() const;

  /// A copy in host memory (allocated on the host arena, not on the calling
  /// device), or *this when the array already is in host memory. For a GPU
  /// array this waits for the work producing it and downloads it.
  Array to_host() const;

  /// The same data with the weak flag changed (no copy).
  Array with_weak_type(bool weak) const;
  /// The same data viewed with another shape of equal element count (no copy).
  Array reshaped_view(const Shape& shape) const;

  /// The storage: a host pointer, or for a GPU array (memory_kind() ==
  /// kCuda) a device pointer that only device code may dereference.
  const void* raw_data() const;
  void* mutable_raw_data();  ///< only while filling a freshly created array

  template <class T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }
  template <class T>
  T* mutable_data() {
    return static_cast<T*>(mutable_raw_data());
  }

  /// Element `flat` (row-major) converted; bool as 0/1.
  double element_as_double(std::int64_t flat) const;
  std::int64_t element_as_int64(std::int64_t flat) const;
  bool element_as_bool(std::int64_t flat) const;

  /// All elements converted, row-major.
  std::vector<double> to_doubles() const;
  std::vector<std::int64_t> to_int64s() const;

  /// Byte-wise equality of dtype, shape and contents (any memory kinds).
  bool identical(const Array& other) const;
  /// True when both arrays are over one block of memory: one is a view of
  /// the other (a reshape), or devices share a replicated value's block.
  bool shares_memory_with(const Array& other) const;

  /// "f32[4,10]".
  std::string abstract_type() const;

 private:
  friend struct detail::ArrayInternals;
  Array(std::shared_ptr<detail::Buffer> buffer, Shape shape, DType dtype, bool weak)
      : buffer_(std::move(buffer)), shape_(std::move(shape)), dtype_(dtype), weak_(weak) {}
  void require_valid(std::string_view what) const;

  std::shared_ptr<detail::Buffer> buffer_;
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  bool weak_ = false;
};

/// Throws InvalidArgument (kind "DeviceOwnershipError") if `a` belongs to a
/// device other than the calling one; `op` names the operation for the report.
void check_placement(const Array& a, std::string_view op);

}  // namespace spmd
