#include "spmd/core/array.h"

#include <cstring>

#include "core/arena.h"
#include "core/device_ops.h"
#include "core/element_access.h"
#include "core/placement.h"
#include "spmd/detail/buffer.h"
#include "spmd/error.h"

namespace spmd {

Array Array::uninitialized(const Shape& shape, DType dtype, std::string_view what) {
  for (auto d : shape) {
    if (d < 0) {
      throw_invalid_argument("ShapeError", std::string(what) + ": negative dimension in shape " + shape_to_string(shape),
                             "every dimension must be >= 0");
    }
  }
  std::size_t nbytes = byte_count(shape, dtype);
  return Array(detail::Buffer::allocate(nbytes, what), shape, dtype, false);
}

Array Array::from_raw(const void* data, const Shape& shape, DType dtype) {
  Array a = uninitialized(shape, dtype, "array from host data");
  detail::copy_bytes(a.mutable_raw_data(), a.memory_kind(), a.device(), data, MemoryKind::kHost, kHost, a.nbytes(),
                     "array from host data");
  return a;
}

namespace {
// Values converted element by element into a new array of `dtype`.
template <class T, class Store>
Array from_values(std::span<const T> values, const Shape& shape, DType dtype, Store store) {
  if (static_cast<std::int64_t>(values.size()) != num_elements(shape)) {
    throw_invalid_argument("ShapeError",
                           "array: " + std::to_string(values.size()) + " values do not fill shape " +
                               shape_to_string(shape),
                           "give exactly as many values as the shape's element count");
  }
  return detail::built_on_host([&] {
    Array a = Array::uninitialized(shape, dtype, "array from host data");
    for (std::size_t i = 0; i < values.size(); ++i) store(a, static_cast<std::int64_t>(i), values[i]);
    return a;
  }, "array from host data");
}
}  // namespace

Array Array::from_doubles(std::span<const double> values, const Shape& shape, DType dtype) {
  return from_values(values, shape, dtype, detail::store_double);
}

Array Array::from_int64s(std::span<const std::int64_t> values, const Shape& shape, DType dtype) {
  return from_values(values, shape, dtype, detail::store_int64);
}

Array Array::from_bools(const std::vector<bool>& values, const Shape& shape) {
  std::vector<std::int64_t> ints(values.begin(), values.end());
  return from_int64s(ints, shape, DType::kBool);
}

Array Array::scalar(double value, DType dtype, bool weak) {
  return detail::built_on_host([&] {
    Array a = uninitialized({}, dtype, "scalar");
    detail::store_double(a, 0, value);
    a.weak_ = weak;
    return a;
  }, "array from host data");
}

Array Array::scalar_int(std::int64_t value, DType dtype, bool weak) {
  return detail::built_on_host([&] {
    Array a = uninitialized({}, dtype, "scalar");
    detail::store_int64(a, 0, value);
    a.weak_ = weak;
    return a;
  }, "array from host data");
}

void Array::require_valid(std::string_view what) const {
  if (!buffer_) {
    throw_invalid_argument("InvalidArgument", "Array::" + std::string(what) + " called on a null Array",
                           "a default-constructed Array holds no data; create one with zeros(), arange(), ...");
  }
}

DType Array::dtype() const {
  require_valid("dtype");
  return dtype_;
}
const Shape& Array::shape() const {
  require_valid("shape");
  return shape_;
}
std::int64_t Array::size() const { return num_elements(shape()); }
std::size_t Array::nbytes() const { return static_cast<std::size_t>(size()) * dtype_size(dtype()); }
DeviceId Array::device() const {
  require_valid("device");
  return buffer_->device();
}

MemoryKind Array::memory_kind() const {
  require_valid("memory_kind");
  return buffer_->memory_kind();
}

Array Array::to_host() const {
  require_valid("to_host");
  if (buffer_->memory_kind() == MemoryKind::kHost) return *this;
  auto buffer = detail::Buffer::allocate_on(detail::Arena::host(), nbytes(), "host copy");
  detail::copy_bytes(buffer->data(), MemoryKind::kHost, kHost, buffer_->data(), buffer_->memory_kind(),
                     buffer_->device(), nbytes(), "to_host");
  return Array(std::move(buffer), shape_, dtype_, weak_);
}

Array Array::with_weak_type(bool weak) const {
  require_valid("with_weak_type");
  Array a = *this;
  a.weak_ = weak;
  return a;
}

Array Array::reshaped_view(const Shape& shape) const {
  require_valid("reshaped_view");
  if (num_elements(shape) != size()) {
    throw_invalid_argument("ShapeError",
                           "reshape: cannot view " + shape_to_string(shape_) + " as " + shape_to_string(shape),
                           "the element counts must match");
  }
  return Array(buffer_, shape, dtype_, weak_);
}

const void* Array::raw_data() const {
  require_valid("raw_data");
  return buffer_->data();
}
void* Array::mutable_raw_data() {
  require_valid("mutable_raw_data");
  return buffer_->data();
}

namespace {
// Element `flat` of a device array as a one-element host array.
Array element_on_host(const Array& a, std::int64_t flat) {
  const std::size_t es = dtype_size(a.dtype());
  Array h;
  {
    detail::PlacementScope host(nullptr);
    h = Array::uninitialized({}, a.dtype(), "element copy");
  }
  detail::copy_bytes(h.mutable_raw_data(), MemoryKind::kHost, kHost,
                     static_cast<const std::byte*>(a.raw_data()) + static_cast<std::size_t>(flat) * es,
                     a.memory_kind(), a.device(), es, "element read");
  return h;
}
}  // namespace

double Array::element_as_double(std::int64_t flat) const {
  if (memory_kind() != MemoryKind::kHost) return detail::load_double(element_on_host(*this, flat), 0);
  return detail::load_double(*this, flat);
}
std::int64_t Array::element_as_int64(std::int64_t flat) const {
  if (memory_kind() != MemoryKind::kHost) return detail::load_int64(element_on_host(*this, flat), 0);
  return detail::load_int64(*this, flat);
}
bool Array::element_as_bool(std::int64_t flat) const { return element_as_double(flat) != 0.0; }

std::vector<double> Array::to_doubles() const {
  Array h = to_host();
  std::vector<double> out(static_cast<std::size_t>(h.size()));
  for (std::int64_t i = 0; i < h.size(); ++i) out[static_cast<std::size_t>(i)] = detail::load_double(h, i);
  return out;
}

std::vector<std::int64_t> Array::to_int64s() const {
  Array h = to_host();
  std::vector<std::int64_t> out(static_cast<std::size_t>(h.size()));
  for (std::int64_t i = 0; i < h.size(); ++i) out[static_cast<std::size_t>(i)] = detail::load_int64(h, i);
  return out;
}

bool Array::identical(const Array& other) const {
  if (!valid() || !other.valid()) return valid() == other.valid();
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (nbytes() == 0) return true;
  // Over one block (a replicated value devices share): equal without reading it.
  if (shares_memory_with(other)) return true;
  Array a = to_host();
  Array b = other.to_host();
  return std::memcmp(a.raw_data(), b.raw_data(), nbytes()) == 0;
}

bool Array::shares_memory_with(const Array& other) const {
  return valid() && other.valid() && buffer_->data() != nullptr && buffer_->data() == other.buffer_->data();
}

std::string Array::abstract_type() const { return spmd::abstract_type(dtype(), shape()); }

void check_placement(const Array& a, std::string_view op) {
  DeviceId owner = a.device();
  if (owner == kHost) return;
  DeviceId here = detail::current_placement()->device;
  if (owner == here) return;
  std::string where = here == kHost ? "on the host" : "on device " + std::to_string(here);
  Report r = make_report(
      "DeviceOwnershipError",
      std::string(op) + ": array " + a.abstract_type() + " lives on device " + std::to_string(owner) +
          " but is used " + where,
      here == kHost
          ? "a value computed inside the pmap-ed function escaped it (a side effect such as appending to "
            "an outer list, or a global); return it from the function instead"
          : "devices cannot read each other's memory; move data with a collective (all_gather, ppermute) or "
            "pass it as a pmap argument (in_axes=None replicates it)");
  r.device = here;
  r.op = std::string(op);
  throw InvalidArgument(std::move(r));
}

}  // namespace spmd
