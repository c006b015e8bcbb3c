#pragma once
// A sum, max or min over the trailing axes, fed one block of a row at a time:
// how a reduction at the end of a fused elementwise chain
// (core/fused_elementwise.h) adds what the chain computes without the
// reduced value ever becoming an array. The blocks, the lanes within them and
// the pairwise combination are reduce()'s (core/reduce_rules.h), so the
// result has reduce()'s bits (and reduction_dtype()'s dtype).
//
//   RowReduction r(ReduceOp::kSum, DType::kFloat32, /*rows=*/64, /*length=*/10);
//   for each row:  r.add_block(row, 0, ten_floats);    // length <= kBlock: one block a row
//   Array out = Array::uninitialized({64}, reduction_dtype(ReduceOp::kSum, DType::kFloat32), "sum");
//   r.finish(out);

#include <cstdint>
#include <memory>

#include "spmd/core/array.h"
#include "spmd/core/reduction.h"

namespace spmd::detail {

class RowReduction {
 public:
  /// reduce()'s block: a row's elements [b * kBlock, min(length, (b + 1) * kBlock)).
  static constexpr std::int64_t kBlock = 4096;
  /// Whether reduce() has this (op, dtype) as a row reduction: sum of any
  /// dtype, max and min of any but bool.
  static bool supports(ReduceOp op, DType dtype);
  /// `rows` rows of `length` elements of `dtype`. std::logic_error where
  /// supports() is false.
  RowReduction(ReduceOp op, DType dtype, std::int64_t rows, std::int64_t length);
  ~RowReduction();
  RowReduction(RowReduction&&) noexcept;
  RowReduction& operator=(RowReduction&&) noexcept;

  std::int64_t blocks_per_row() const { return (length_ + kBlock - 1) / kBlock; }
  /// Block b of `row`: its elements in `dtype`, contiguous. Each (row, b)
  /// once, in any order, from any thread.
  void add_block(std::int64_t row, std::int64_t b, const void* elements);
  /// Every row's result into `out`: reduction_dtype(op, dtype), one element
  /// per row, in host memory. An empty row gets the op's identity.
  void finish(Array& out) const;

  struct Impl;  // per dtype and op, in row_reduction.cc

 private:
  std::unique_ptr<Impl> impl_;
  std::int64_t rows_;
  std::int64_t length_;
  DType output_dtype_;
};

}  // namespace spmd::detail
