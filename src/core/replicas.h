#pragma once
// Arrays of equal contents on several devices over one block of host memory.
//
// A collective whose result is the same on every member (psum, all_gather)
// need not write that result once per device: the members' arrays may share
// one block, since arrays are never written after they are filled. Each
// array still belongs to its own device (ownership checks, device()) and is
// charged to its own arena (capacity, live and peak bytes), exactly as a copy
// would be; only the host's memory traffic and footprint shrink.

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "spmd/core/array.h"

namespace spmd::detail {

class Arena;

/// One uninitialised array per arena, all over one block: fill the first
/// (every array's mutable_raw_data() is the same pointer), then use them all.
/// Host-memory arenas only (std::logic_error otherwise): GPU memory is not
/// shared between devices.
std::vector<Array> uninitialized_replicas(const std::vector<std::shared_ptr<Arena>>& arenas, const Shape& shape,
                                          DType dtype, std::string_view what);

/// A filled host array's contents, held for other devices without charging
/// any arena: a replicated pmap argument, a mapped one's rows, or a value one
/// device computed for all (program/shared_results.h). Each device takes an array over the same
/// block, charged to its own arena as its own copy would be. The original
/// array stays as it was (its arena is still charged while it lives).
class SharedContents {
 public:
  /// The contents of `a`; nullopt when `a` lives in device memory, which
  /// devices do not share.
  static std::optional<SharedContents> of(const Array& a);
  /// An array equal to the original (shape, dtype, weak type) over the same
  /// block, belonging to `arena`'s device and charged to it: the
  /// OutOfMemoryError of a copy when the arena is over capacity. `arena`
  /// must be a host-memory one (std::logic_error otherwise).
  Array on(const std::shared_ptr<Arena>& arena, std::string_view what) const;
  /// Entry i along the first axis (the shape without that axis), over the
  /// same block: a mapped pmap argument's shard, read in place. Requires a
  /// first axis, with 0 <= i < its size (std::out_of_range otherwise).
  SharedContents row(std::int64_t i) const;

 private:
  SharedContents(std::shared_ptr<void> block, std::size_t nbytes, Shape shape, DType dtype, bool weak)
      : block_(std::move(block)), nbytes_(nbytes), shape_(std::move(shape)), dtype_(dtype), weak_(weak) {}
  std::shared_ptr<void> block_;
  std::size_t nbytes_;
  Shape shape_;
  DType dtype_;
  bool weak_;
};

}  // namespace spmd::detail
