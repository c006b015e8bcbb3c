#pragma once
// A sum over the leading axes, read row by row: the (rows, columns) matrix's
// column sums, in reduce()'s order for them (core/reduce_rules.h): rows in
// blocks of RowReduction's kBlock, within a block row i in lane i % 8 (floats;
// integers wrap, one lane), lanes added pairwise, blocks pairwise. reduce()
// sums leading axes this way (no transposed copy), and so does a fused
// elementwise chain ending in such a sum (core/fused_elementwise.h), so both
// give the bits a sum over the transposed rows gives.
//
//   ColumnSum s(DType::kFloat32, /*rows=*/64, /*columns=*/256);
//   s.add_rows(0, 64, 0, 256, data, 256);   // all of it, rows 256 elements apart
//   Array out = Array::uninitialized({256}, reduction_dtype(ReduceOp::kSum, DType::kFloat32), "sum");
//   s.finish(out);

#include <cstdint>
#include <memory>

#include "spmd/core/array.h"

namespace spmd::detail {

class ColumnSum {
 public:
  static constexpr std::int64_t kBlock = 4096;  ///< rows per block (RowReduction::kBlock)
  ColumnSum(DType dtype, std::int64_t rows, std::int64_t columns);
  ~ColumnSum();
  ColumnSum(ColumnSum&&) noexcept;
  ColumnSum& operator=(ColumnSum&&) noexcept;

  /// Adds rows [row, row + count) of columns [column, column + width):
  /// element (i, j) at data[i * stride + j], in the input dtype. Calls over
  /// one block of rows and overlapping columns come from one thread, rows in
  /// increasing order; others may run at once.
  void add_rows(std::int64_t row, std::int64_t count, std::int64_t column, std::int64_t width, const void* data,
                std::int64_t stride);
  /// The column sums into `out` (reduction_dtype(kSum, dtype), one element
  /// per column, host memory).
  void finish(Array& out) const;

  struct Impl;  // per dtype, in column_sum.cc

 private:
  std::unique_ptr<Impl> impl_;
  std::int64_t columns_;
  DType output_dtype_;
};

}  // namespace spmd::detail
