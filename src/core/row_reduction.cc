// Built as reduction.cc is, so lane_sum vectorizes alike (reduce_rules.h).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include "core/row_reduction.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/element_access.h"
#include "core/reduce_rules.h"

namespace spmd::detail {

using namespace reduce_rules;

// The partials of every (row, block), combined per row at the end.
struct RowReduction::Impl {
  virtual ~Impl() = default;
  virtual void add_block(std::int64_t row, std::int64_t b, const void* elements) = 0;
  virtual void finish(void* out, std::int64_t rows) const = 0;
};

namespace {

template <class T, class O, class Rule>
class RowReductionOf final : public RowReduction::Impl {
 public:
  using Acc = typename Rule::Acc;
  RowReductionOf(Rule rule, std::int64_t rows, std::int64_t length)
      : rule_(rule), length_(length), blocks_((length + RowReduction::kBlock - 1) / RowReduction::kBlock),
        partial_(static_cast<std::size_t>(rows * blocks_)) {}

  void add_block(std::int64_t row, std::int64_t b, const void* elements) override {
    const std::int64_t n = std::min(length_ - b * RowReduction::kBlock, RowReduction::kBlock);
    partial_[static_cast<std::size_t>(row * blocks_ + b)] = rule_.leaf(static_cast<const T*>(elements), 0, n);
  }

  void finish(void* out, std::int64_t rows) const override {
    O* o = static_cast<O*>(out);
    std::vector<Acc> row_partials(static_cast<std::size_t>(blocks_));
    for (std::int64_t row = 0; row < rows; ++row) {
      for (std::int64_t b = 0; b < blocks_; ++b) {
        row_partials[static_cast<std::size_t>(b)] = partial_[static_cast<std::size_t>(row * blocks_ + b)];
      }
      o[row] = narrow<O>(combine_pairwise(row_partials, [this](Acc a, Acc c) { return rule_.combine(a, c); }));
    }
  }

 private:
  Rule rule_;
  std::int64_t length_;
  std::int64_t blocks_;
  std::vector<Acc> partial_;
};

}  // namespace

bool RowReduction::supports(ReduceOp op, DType dtype) {
  if (op == ReduceOp::kSum) return true;
  return (op == ReduceOp::kMax || op == ReduceOp::kMin) && dtype != DType::kBool;
}

RowReduction::RowReduction(ReduceOp op, DType dtype, std::int64_t rows, std::int64_t length)
    : rows_(rows), length_(length), output_dtype_(reduction_dtype(op, dtype)) {
  if (!supports(op, dtype)) throw std::logic_error("RowReduction: not a sum, max or min reduce() has");
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      impl_ = std::make_unique<RowReductionOf<T, std::int32_t, SumRule<T>>>(SumRule<T>{}, rows, length);
    } else if (op == ReduceOp::kSum) {
      impl_ = std::make_unique<RowReductionOf<T, T, SumRule<T>>>(SumRule<T>{}, rows, length);
    } else {
      impl_ = std::make_unique<RowReductionOf<T, T, ExtremeRule<T>>>(ExtremeRule<T>{op == ReduceOp::kMax}, rows,
                                                                     length);
    }
  });
}

RowReduction::~RowReduction() = default;
RowReduction::RowReduction(RowReduction&&) noexcept = default;
RowReduction& RowReduction::operator=(RowReduction&&) noexcept = default;

void RowReduction::add_block(std::int64_t row, std::int64_t b, const void* elements) {
  impl_->add_block(row, b, elements);
}

void RowReduction::finish(Array& out) const {
  if (out.dtype() != output_dtype_ || out.size() != rows_) throw std::logic_error("RowReduction::finish: wrong output");
  if (length_ == 0) {
    // An empty sum is zero (reduce() refuses an empty max or min).
    std::memset(out.mutable_raw_data(), 0, out.nbytes());
    return;
  }
  impl_->finish(out.mutable_raw_data(), rows_);
}

}  // namespace spmd::detail
