// Built as reduction.cc is: the row loop vectorizes across columns.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include "core/column_sum.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/element_access.h"
#include "core/reduce_rules.h"
#include "spmd/core/reduction.h"

namespace spmd::detail {

using namespace reduce_rules;

struct ColumnSum::Impl {
  virtual ~Impl() = default;
  virtual void add_rows(std::int64_t row, std::int64_t count, std::int64_t column, std::int64_t width,
                        const void* data, std::int64_t stride) = 0;
  virtual void finish(void* out) const = 0;
};

namespace {

template <class T, class O>
class ColumnSumOf final : public ColumnSum::Impl {
 public:
  using Acc = std::conditional_t<kFloatT<T>, double, std::int64_t>;
  ColumnSumOf(std::int64_t rows, std::int64_t columns)
      : columns_(columns),
        // Floats: a lane per row of a block, at most kLanes; with fewer rows
        // the lanes past them stay zero and need no memory. Integer sums wrap,
        // so their order does not matter: one lane.
        lanes_(kFloatT<T> ? std::min<std::int64_t>(kLanes, std::max<std::int64_t>(rows, 1)) : 1),
        blocks_(std::max<std::int64_t>(1, (rows + ColumnSum::kBlock - 1) / ColumnSum::kBlock)),
        partial_(static_cast<std::size_t>(blocks_ * lanes_ * columns), Acc{0}) {}

  void add_rows(std::int64_t row, std::int64_t count, std::int64_t column, std::int64_t width, const void* data,
                std::int64_t stride) override {
    const T* p = static_cast<const T*>(data);
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int64_t r = row + i;
      const std::int64_t b = r / ColumnSum::kBlock;
      // partial[(b * lanes + lane) * columns + j]: column j's running sum in one lane of block b.
      Acc* acc = partial_.data() + (b * lanes_ + (r - b * ColumnSum::kBlock) % lanes_) * columns_ + column;
      const T* src = p + i * stride;
      for (std::int64_t j = 0; j < width; ++j) {
        if constexpr (kFloatT<T>) acc[j] += static_cast<double>(widen(src[j]));
        else acc[j] = wrap_add64(acc[j], static_cast<std::int64_t>(src[j]));
      }
    }
  }

  void finish(void* out) const override {
    O* o = static_cast<O*>(out);
    std::vector<Acc> column(static_cast<std::size_t>(blocks_));
    for (std::int64_t j = 0; j < columns_; ++j) {
      for (std::int64_t b = 0; b < blocks_; ++b) {
        const Acc* block = partial_.data() + b * lanes_ * columns_ + j;
        if constexpr (kFloatT<T>) {
          double lane[kLanes] = {};
          for (std::int64_t l = 0; l < lanes_; ++l) lane[l] = block[l * columns_];
          column[static_cast<std::size_t>(b)] = combine_lanes(lane);
        } else {
          column[static_cast<std::size_t>(b)] = block[0];
        }
      }
      const Acc total = combine_pairwise(column, [](Acc a, Acc c) {
        if constexpr (kFloatT<T>) return a + c;
        else return wrap_add64(a, c);
      });
      o[j] = narrow<O>(total);
    }
  }

 private:
  std::int64_t columns_;
  std::int64_t lanes_;
  std::int64_t blocks_;
  std::vector<Acc> partial_;
};

}  // namespace

ColumnSum::ColumnSum(DType dtype, std::int64_t rows, std::int64_t columns)
    : columns_(columns), output_dtype_(reduction_dtype(ReduceOp::kSum, dtype)) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      impl_ = std::make_unique<ColumnSumOf<T, std::int32_t>>(rows, columns);
    } else {
      impl_ = std::make_unique<ColumnSumOf<T, T>>(rows, columns);
    }
  });
}

ColumnSum::~ColumnSum() = default;
ColumnSum::ColumnSum(ColumnSum&&) noexcept = default;
ColumnSum& ColumnSum::operator=(ColumnSum&&) noexcept = default;

void ColumnSum::add_rows(std::int64_t row, std::int64_t count, std::int64_t column, std::int64_t width,
                         const void* data, std::int64_t stride) {
  impl_->add_rows(row, count, column, width, data, stride);
}

void ColumnSum::finish(Array& out) const {
  if (out.dtype() != output_dtype_ || out.size() != columns_) throw std::logic_error("ColumnSum::finish: wrong output");
  impl_->finish(out.mutable_raw_data());
}

}  // namespace spmd::detail
