// Elementwise ops of a chain are cheap next to the memory traffic of running
// them one array at a time; a block of kBlock elements passes through all of
// them while it is in cache. See fused_elementwise.h.

#include "core/fused_elementwise.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "core/device_ops.h"
#include "core/column_sum.h"
#include "core/parallel.h"
#include "core/row_reduction.h"
#include "spmd/error.h"

namespace spmd::detail {

namespace {

void copy_strided(std::size_t size, const std::byte* src, std::int64_t stride, std::byte* dst, std::int64_t n) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* s = reinterpret_cast<const T*>(src);
    T* d = reinterpret_cast<T*>(dst);
    if (stride == 1) {
      std::memcpy(d, s, static_cast<std::size_t>(n) * sizeof(T));
    } else {
      for (std::int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
    }
  };
  switch (size) {
    case 1: run(std::uint8_t{}); break;
    case 2: run(std::uint16_t{}); break;
    case 4: run(std::uint32_t{}); break;
    default: run(std::uint64_t{}); break;
  }
}

[[noreturn]] void chain_bug(const std::string& what) {
  throw std::logic_error("ElementwiseChain: " + what);
}

}  // namespace

ElementwiseChain::Value ElementwiseChain::input(const Shape& view, DType dtype, bool weak) {
  if (finished_) chain_bug("input() after finish()");
  const Shape broadcast = broadcast_shapes(view, shape_, "fused elementwise chain");
  if (broadcast != shape_) chain_bug("an input of shape " + shape_to_string(view) + " is larger than the chain");
  Input in;
  in.view = view;
  const bool uniform = num_elements(view) == 1;
  in.full = !uniform && view == shape_;
  in.gather = !uniform && !in.full;
  inputs_.push_back(std::move(in));
  values_.push_back(ValueInfo{dtype, weak, uniform, static_cast<int>(inputs_.size()) - 1});
  return static_cast<Value>(values_.size()) - 1;
}

void ElementwiseChain::note_use(Value v, const std::string& op) {
  const ValueInfo& vi = info(v);
  if (vi.input >= 0 && inputs_[static_cast<std::size_t>(vi.input)].used_by.empty()) {
    inputs_[static_cast<std::size_t>(vi.input)].used_by = op;
  }
}

ElementwiseChain::Value ElementwiseChain::add_step(Step step, DType dtype, bool weak) {
  if (finished_) chain_bug("an op after finish()");
  bool uniform = true;
  for (Value v : step.operands) {
    if (v < 0) continue;
    uniform = uniform && info(v).uniform;
    note_use(v, step.name);
  }
  values_.push_back(ValueInfo{dtype, weak, uniform});
  step.result = static_cast<Value>(values_.size()) - 1;
  steps_.push_back(std::move(step));
  return steps_.back().result;
}

ElementwiseChain::Value ElementwiseChain::as_dtype(Value v, DType dtype, const std::string& op) {
  if (info(v).dtype == dtype) return v;
  Step s;
  s.kind = Kind::kConvert;
  s.operands[0] = v;
  s.convert = convert_kernel(info(v).dtype, dtype);
  s.name = op;
  return add_step(std::move(s), dtype, info(v).weak);
}

ElementwiseChain::Value ElementwiseChain::unary(UnaryOp op, Value x) {
  const std::string name(op_name(op));
  const ElementwiseTypes t = unary_types(op, info(x).dtype, info(x).weak, shape_);
  Step s;
  s.kind = Kind::kUnary;
  s.operands[0] = as_dtype(x, t.compute, name);
  s.unary = unary_kernel(op, t.compute);
  s.name = name;
  return add_step(std::move(s), t.out, t.weak);
}

ElementwiseChain::Value ElementwiseChain::binary(BinaryOp op, Value a, Value b) {
  const std::string name(op_name(op));
  const ElementwiseTypes t = binary_types(op, info(a).dtype, info(a).weak, info(b).dtype, info(b).weak);
  Step s;
  s.kind = Kind::kBinary;
  s.operands[0] = as_dtype(a, t.compute, name);
  s.operands[1] = as_dtype(b, t.compute, name);
  s.binary = binary_kernel(op, t.compute);
  s.name = name;
  return add_step(std::move(s), t.out, t.weak);
}

ElementwiseChain::Value ElementwiseChain::select(Value cond, Value on_true, Value on_false) {
  const ElementwiseTypes t = select_types(info(on_true).dtype, info(on_true).weak, info(on_false).dtype,
                                          info(on_false).weak);
  Step s;
  s.kind = Kind::kSelect;
  s.operands[0] = as_dtype(cond, DType::kBool, "where");
  s.operands[1] = as_dtype(on_true, t.compute, "where");
  s.operands[2] = as_dtype(on_false, t.compute, "where");
  s.select = select_kernel(t.compute);
  s.name = "where";
  return add_step(std::move(s), t.out, t.weak);
}

ElementwiseChain::Value ElementwiseChain::convert(Value x, DType dtype, bool weak) {
  if (info(x).dtype == dtype && info(x).weak == weak) return x;
  Step s;
  s.kind = Kind::kConvert;
  s.operands[0] = x;
  s.convert = convert_kernel(info(x).dtype, dtype);
  s.name = "astype";
  return add_step(std::move(s), dtype, weak);
}

ElementwiseChain::Value ElementwiseChain::copy_of(Value v) {
  Step copy;
  copy.kind = Kind::kConvert;
  copy.operands[0] = v;
  copy.convert = convert_kernel(info(v).dtype, info(v).dtype);
  copy.name = "copy";
  return add_step(std::move(copy), info(v).dtype, info(v).weak);
}

void ElementwiseChain::output(Value v) {
  if (finished_) chain_bug("output() after finish()");
  // An input passed through (an identity broadcast), or one value under two
  // names: each output is an array of its own, as unfused ops make.
  if (info(v).input >= 0 || info(v).output >= 0) v = copy_of(v);
  ValueInfo& vi = values_.at(static_cast<std::size_t>(v));
  vi.output = static_cast<int>(outputs_.size());
  outputs_.push_back(v);
  const auto producer = std::find_if(steps_.begin(), steps_.end(), [v](const Step& s) { return s.result == v; });
  output_names_.push_back(producer->name);
}

void ElementwiseChain::reduce(ReduceOp op, Value v, Reduced which, int split) {
  if (finished_) chain_bug("reduce() after finish()");
  if (reduction_) chain_bug("a second reduction");
  // An input passed through (a broadcast, an identity conversion): the
  // reduction reads a computed copy, block by block.
  if (info(v).input >= 0) v = copy_of(v);
  const ValueInfo& vi = info(v);
  if (split < 0 || split > static_cast<int>(shape_.size())) chain_bug("reduced axes out of range");
  const Shape leading(shape_.begin(), shape_.begin() + split);
  const Shape trailing(shape_.begin() + split, shape_.end());
  if (which == Reduced::kTrailing && !RowReduction::supports(op, vi.dtype)) {
    chain_bug("a reduction RowReduction does not have");
  }
  if (which == Reduced::kLeading && op != ReduceOp::kSum) chain_bug("a reduction over leading axes that is not a sum");
  Reduction r;
  r.op = op;
  r.which = which;
  r.value = v;
  r.shape = which == Reduced::kTrailing ? leading : trailing;
  r.dtype = reduction_dtype(op, vi.dtype);
  r.weak = vi.weak;  // a sum, max or min keeps its operand's weak type, as reduce()'s do
  r.kept = num_elements(r.shape);
  r.reduced = num_elements(which == Reduced::kTrailing ? trailing : leading);
  reduction_ = std::move(r);
}

void ElementwiseChain::finish() {
  if (finished_) chain_bug("finish() twice");
  finished_ = true;
  // A gathered input keeps its slot for the whole block.
  for (std::size_t v = 0; v < values_.size(); ++v) {
    ValueInfo& vi = values_[v];
    if (vi.input < 0) continue;
    Input& in = inputs_[static_cast<std::size_t>(vi.input)];
    if (!in.gather) continue;
    in.loop = make_strided_loop<2>(shape_, {row_major_strides(shape_), broadcast_strides(in.view, shape_)});
    vi.slot = slot_count_++;
    gathered_.push_back(static_cast<Value>(v));
  }
  // Computed values that are not outputs live in slots from their step to
  // their last reader. A result never shares its operands' slot: the
  // kernels' loops vectorize only when they see no overlap.
  std::vector<int> last_use(values_.size(), -1);
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    for (Value v : steps_[k].operands) {
      if (v >= 0) last_use[static_cast<std::size_t>(v)] = static_cast<int>(k);
    }
  }
  std::vector<int> free_slots;
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    ValueInfo& r = values_[static_cast<std::size_t>(steps_[k].result)];
    if (r.output < 0) {
      if (free_slots.empty()) {
        r.slot = slot_count_++;
      } else {
        r.slot = free_slots.back();
        free_slots.pop_back();
      }
    }
    for (Value v : steps_[k].operands) {
      if (v < 0) continue;
      const ValueInfo& o = values_[static_cast<std::size_t>(v)];
      const bool dies_here = last_use[static_cast<std::size_t>(v)] == static_cast<int>(k);
      if (dies_here && o.input < 0 && o.slot >= 0 &&
          std::find(free_slots.begin(), free_slots.end(), o.slot) == free_slots.end()) {
        free_slots.push_back(o.slot);
      }
    }
  }
}

ElementwiseChain::Workspace::Workspace(const ElementwiseChain& chain, std::int64_t reduced_elements)
    // A slot holds a block of the widest dtype (a small chain's block is its size).
    : slot_bytes(std::min(num_elements(chain.shape_), kBlock) * 8),
      scratch(new std::byte[static_cast<std::size_t>(std::max(chain.slot_count_, 1) * slot_bytes)]),
      reduced(reduced_elements > 0 ? new std::byte[static_cast<std::size_t>(
                                         reduced_elements * static_cast<std::int64_t>(
                                                                dtype_size(chain.info(chain.reduction_->value).dtype)))]
                                   : nullptr),
      at(chain.values_.size()),
      stride(chain.values_.size()) {}

void ElementwiseChain::run_block(std::int64_t begin, std::int64_t count, std::span<const Array> inputs,
                                 std::vector<Array>& outputs, Workspace& ws, std::byte* reduced) const {
  std::vector<const std::byte*>& at = ws.at;
  std::vector<std::int64_t>& stride = ws.stride;
  auto slot = [&](int s) { return ws.scratch.get() + static_cast<std::ptrdiff_t>(s) * ws.slot_bytes; };
  for (std::size_t v = 0; v < values_.size(); ++v) {
    const ValueInfo& vi = values_[v];
    if (vi.input < 0) continue;
    const Input& in = inputs_[static_cast<std::size_t>(vi.input)];
    const auto* base = static_cast<const std::byte*>(inputs[static_cast<std::size_t>(vi.input)].raw_data());
    const auto size = static_cast<std::int64_t>(dtype_size(vi.dtype));
    if (vi.uniform) {
      at[v] = base;
      stride[v] = 0;
    } else if (in.full) {
      at[v] = base + begin * size;
      stride[v] = 1;
    } else {
      std::byte* dst = slot(vi.slot);
      walk_strided<2>(in.loop, {0, 0}, begin, begin + count,
                      [&](const std::array<std::int64_t, 2>& off, std::int64_t n,
                          const std::array<std::int64_t, 2>& s) {
                        copy_strided(static_cast<std::size_t>(size), base + off[1] * size, s[1],
                                     dst + (off[0] - begin) * size, n);
                      });
      at[v] = dst;
      stride[v] = 1;
    }
  }
  for (const Step& s : steps_) {
    const ValueInfo& r = values_[static_cast<std::size_t>(s.result)];
    std::byte* out;
    std::int64_t n;
    if (r.output >= 0) {
      out = static_cast<std::byte*>(outputs[static_cast<std::size_t>(r.output)].mutable_raw_data()) +
            begin * static_cast<std::int64_t>(dtype_size(r.dtype));
      n = count;
      stride[static_cast<std::size_t>(s.result)] = 1;
    } else if (reduced != nullptr && s.result == reduction_->value && !r.uniform) {
      out = reduced;  // straight where the reduction reads it
      n = count;
      stride[static_cast<std::size_t>(s.result)] = 1;
    } else {
      out = slot(r.slot);
      n = r.uniform ? 1 : count;
      stride[static_cast<std::size_t>(s.result)] = r.uniform ? 0 : 1;
    }
    at[static_cast<std::size_t>(s.result)] = out;
    auto op = [&](int k) { return at[static_cast<std::size_t>(s.operands[k])]; };
    auto st = [&](int k) { return stride[static_cast<std::size_t>(s.operands[k])]; };
    switch (s.kind) {
      case Kind::kUnary: s.unary(op(0), st(0), out, n); break;
      case Kind::kBinary: s.binary(op(0), st(0), op(1), st(1), out, n); break;
      case Kind::kSelect:
        s.select(reinterpret_cast<const bool*>(op(0)), st(0), op(1), st(1), op(2), st(2), out, n);
        break;
      case Kind::kConvert: s.convert(op(0), st(0), out, n); break;
      case Kind::kInput: break;
    }
  }
  if (reduced != nullptr) {
    // One value for the whole block: broadcast to where the reduction reads.
    // (An output is read in its array.)
    const auto v = static_cast<std::size_t>(reduction_->value);
    if (stride[v] == 0) {
      copy_strided(dtype_size(values_[v].dtype), at[v], 0, reduced, count);
      at[v] = reduced;
      stride[v] = 1;
    }
  }
}

void ElementwiseChain::run_row_reduction(std::span<const Array> inputs, std::vector<Array>& outputs,
                                         Array& result) const {
  const Reduction& red = *reduction_;
  RowReduction reduction(red.op, info(red.value).dtype, red.kept, red.reduced);
  const auto sink = static_cast<std::size_t>(red.value);
  const std::int64_t n = num_elements(shape_);
  if (n > 0) {
    const auto esize = static_cast<std::int64_t>(dtype_size(info(red.value).dtype));
    // Per thread, with one RowReduction block of the reduced value (at most
    // kBlock elements of it when rows are short).
    const std::int64_t block_elements = std::min(n, RowReduction::kBlock);
    const std::int64_t r = red.reduced;
    if (r <= kBlock) {
      // Whole rows per chain block; each row is one RowReduction block.
      const std::int64_t rows_per_block = kBlock / r;
      parallel_ranges(red.kept, n, std::max<std::int64_t>(rows_per_block, (std::int64_t{1} << 14) / r),
                      [&](std::int64_t r0, std::int64_t r1) {
                        Workspace ws(*this, block_elements);
                        for (std::int64_t row = r0; row < r1; row += rows_per_block) {
                          const std::int64_t rows = std::min(rows_per_block, r1 - row);
                          run_block(row * r, rows * r, inputs, outputs, ws, ws.reduced.get());
                          const std::byte* data = ws.at[sink];  // the block, or the output it was written to
                          for (std::int64_t k = 0; k < rows; ++k) reduction.add_block(row + k, 0, data + k * r * esize);
                        }
                      });
    } else {
      // Long rows: each RowReduction block of each row in up to two chain blocks.
      const std::int64_t per_row = reduction.blocks_per_row();
      parallel_ranges(red.kept * per_row, n, 4, [&](std::int64_t u0, std::int64_t u1) {
        Workspace ws(*this, block_elements);
        for (std::int64_t u = u0; u < u1; ++u) {
          const std::int64_t row = u / per_row, b = u % per_row;
          const std::int64_t first = row * r + b * RowReduction::kBlock;
          const std::int64_t end = row * r + std::min(r, (b + 1) * RowReduction::kBlock);
          const std::byte* data = nullptr;  // the RowReduction block: in ws.reduced, or in an output
          for (std::int64_t s = first; s < end; s += kBlock) {
            run_block(s, std::min(kBlock, end - s), inputs, outputs, ws, ws.reduced.get() + (s - first) * esize);
            if (s == first) data = ws.at[sink];
          }
          reduction.add_block(row, b, data);
        }
      });
    }
  }
  reduction.finish(result);
}

void ElementwiseChain::run_column_sum(std::span<const Array> inputs, std::vector<Array>& outputs, Array& result) const {
  const Reduction& red = *reduction_;
  const std::int64_t rows = red.reduced, columns = red.kept;
  ColumnSum sum(info(red.value).dtype, rows, columns);
  const auto sink = static_cast<std::size_t>(red.value);
  const std::int64_t n = num_elements(shape_);
  if (n > 0) {
    // Work items: a block of ColumnSum's rows by a range of columns, its
    // rows in order on one thread; different items touch different sums.
    const std::int64_t row_blocks = (rows + ColumnSum::kBlock - 1) / ColumnSum::kBlock;
    const std::int64_t width = std::min(columns, kBlock);  // columns per item
    const std::int64_t column_ranges = (columns + width - 1) / width;
    const std::int64_t rows_per_block = kBlock / width;      // rows per chain block
    parallel_ranges(row_blocks * column_ranges, n, 1, [&](std::int64_t w0, std::int64_t w1) {
      Workspace ws(*this, std::min(n, kBlock));
      for (std::int64_t w = w0; w < w1; ++w) {
        const std::int64_t rb = w / column_ranges;
        const std::int64_t c0 = (w % column_ranges) * width;
        const std::int64_t cw = std::min(width, columns - c0);
        const std::int64_t row_end = std::min(rows, (rb + 1) * ColumnSum::kBlock);
        if (cw == columns) {
          // Whole rows: several per chain block.
          for (std::int64_t row = rb * ColumnSum::kBlock; row < row_end; row += rows_per_block) {
            const std::int64_t count = std::min(rows_per_block, row_end - row);
            run_block(row * columns, count * columns, inputs, outputs, ws, ws.reduced.get());
            sum.add_rows(row, count, 0, columns, ws.at[sink], columns);
          }
        } else {
          // Long rows: one segment of one row per chain block.
          for (std::int64_t row = rb * ColumnSum::kBlock; row < row_end; ++row) {
            run_block(row * columns + c0, cw, inputs, outputs, ws, ws.reduced.get());
            sum.add_rows(row, 1, c0, cw, ws.at[sink], cw);
          }
        }
      }
    });
  }
  sum.finish(result);
}

std::optional<std::vector<Array>> ElementwiseChain::run(
    std::span<const Array> inputs, const std::function<void(std::size_t)>& before_allocating) const {
  if (!finished_) chain_bug("run() before finish()");
  if (placement_ops("fused elementwise chain") != nullptr) return std::nullopt;
  if (inputs.size() != inputs_.size()) chain_bug("run() got the wrong number of inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    check_placement(inputs[i], inputs_[i].used_by);
    if (inputs[i].size() != num_elements(inputs_[i].view)) chain_bug("an input of the wrong size");
  }
  for (std::size_t v = 0; v < values_.size(); ++v) {
    const ValueInfo& vi = values_[v];
    if (vi.input >= 0 && inputs[static_cast<std::size_t>(vi.input)].dtype() != vi.dtype) {
      chain_bug("an input of the wrong dtype");
    }
  }
  std::vector<Array> outputs;
  outputs.reserve(outputs_.size() + 1);
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    const ValueInfo& vi = info(outputs_[k]);
    if (before_allocating) before_allocating(k);
    outputs.push_back(Array::uninitialized(shape_, vi.dtype, output_names_[k]).with_weak_type(vi.weak));
  }
  if (reduction_) {
    if (before_allocating) before_allocating(outputs_.size());
    Array result = Array::uninitialized(reduction_->shape, reduction_->dtype, op_name(reduction_->op));
    if (reduction_->which == Reduced::kTrailing) {
      run_row_reduction(inputs, outputs, result);
    } else {
      run_column_sum(inputs, outputs, result);
    }
    outputs.push_back(result.with_weak_type(reduction_->weak));
    return outputs;
  }
  const std::int64_t n = num_elements(shape_);
  if (n == 0) return outputs;
  parallel_elements(n, [&](std::int64_t begin, std::int64_t end) {
    Workspace ws(*this, 0);
    for (std::int64_t b = begin; b < end; b += kBlock) run_block(b, std::min(kBlock, end - b), inputs, outputs, ws, nullptr);
  });
  return outputs;
}

}  // namespace spmd::detail
