#pragma once
// A chain of elementwise ops over one shape, evaluated in one pass over
// memory, as XLA's loop fusion does: blocks of kBlock elements go through
// every op while they are in cache. Only the values marked as outputs become
// arrays (in the calling device's arena, counted as any array is); the others
// live in per-block scratch, outside any arena.
//
// Every op runs the kernel, with the type rules, that unary() / binary() /
// where() / astype() run (elementwise_kernels.h), so a chain's outputs are
// bit-identical to running its ops one at a time.
//
// A chain may end with a sum, max or min over trailing axes of one of its
// values (reduce()): the value is reduced block by block as the chain makes
// it (core/row_reduction.h), in reduce()'s order, so it never becomes an
// array and the result has reduce()'s bits.
//
//   ElementwiseChain c(Shape{64, 256});
//   auto x = c.input(Shape{64, 256}, DType::kFloat32, false);
//   auto b = c.input(Shape{256}, DType::kFloat32, false);          // broadcast
//   auto y = c.unary(UnaryOp::kTanh, c.binary(BinaryOp::kAdd, x, b));
//   c.output(y);
//   std::optional<std::vector<Array>> out = c.run({x_array, b_array}, {});

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/elementwise_kernels.h"
#include "core/strided_walk.h"
#include "spmd/core/array.h"
#include "spmd/core/reduction.h"

namespace spmd::detail {

class ElementwiseChain {
 public:
  using Value = int;
  static constexpr std::int64_t kBlock = 2048;

  explicit ElementwiseChain(Shape shape) : shape_(std::move(shape)) {}

  /// An operand from outside the chain, seen with `view` (its own shape, or
  /// that shape with size-1 axes inserted, as broadcast_in_dim places it),
  /// which must broadcast to the chain's shape.
  Value input(const Shape& view, DType dtype, bool weak);
  /// The ops, with unary()/binary()/where()/astype()'s type rules; operands
  /// whose dtype differs from the op's computation dtype are converted first.
  /// Throw as those functions do for refused types.
  Value unary(UnaryOp op, Value x);
  Value binary(BinaryOp op, Value a, Value b);
  Value select(Value cond, Value on_true, Value on_false);
  Value convert(Value x, DType dtype, bool weak);
  /// `v` becomes an array of the chain's shape: the next of run()'s results
  /// (a copy when `v` is an input or already an output).
  void output(Value v);
  /// Which axes a reduction ending the chain reduces: the trailing ones from
  /// `split` on (a sum, max or min: RowReduction::supports), or the leading
  /// ones before `split` (a sum: ColumnSum).
  enum class Reduced { kTrailing, kLeading };
  /// Ends the chain with reduce(op, v, those axes) (at most one per chain):
  /// run() returns its result after the outputs, shaped as the axes kept,
  /// with reduce()'s dtype, weak type and bits.
  void reduce(ReduceOp op, Value v, Reduced which, int split);
  bool has_reduction() const { return reduction_.has_value(); }
  /// Plans the per-block scratch; call once, after the last op and output.
  void finish();

  const Shape& shape() const { return shape_; }
  DType dtype(Value v) const { return values_.at(static_cast<std::size_t>(v)).dtype; }
  bool weak(Value v) const { return values_.at(static_cast<std::size_t>(v)).weak; }
  std::size_t op_count() const { return steps_.size(); }

  /// Runs the finished chain on `inputs` (one per input(), each of num_elements(view)
  /// elements) and returns the outputs (then the reduction's result). `before_allocating(k)` is called just
  /// before output k's array is made (callers set the source location an
  /// OutOfMemoryError should name). nullopt when the calling device keeps its
  /// arrays in device memory: the caller then runs the ops one at a time.
  std::optional<std::vector<Array>> run(std::span<const Array> inputs,
                                        const std::function<void(std::size_t)>& before_allocating) const;

 private:
  enum class Kind { kInput, kUnary, kBinary, kSelect, kConvert };
  struct ValueInfo {
    DType dtype;
    bool weak = false;
    bool uniform = false;  ///< one value for every element (a scalar input, ops on those only)
    int input = -1;        ///< for inputs: position in run()'s list
    int output = -1;       ///< position among the outputs, or -1
    int slot = -1;         ///< per-block scratch slot, or -1 (read in place / written to its output)
  };
  struct Input {
    Shape view;
    bool full = false;    ///< the chain's own shape: read in place
    bool gather = false;  ///< broadcast along some axes: gathered into a slot per block
    StridedLoop<2> loop;  ///< for a gathered input: chain positions -> its elements
    std::string used_by;  ///< the first op reading it, for placement errors
  };
  struct Reduction {
    ReduceOp op;
    Reduced which = Reduced::kTrailing;
    Value value = -1;
    Shape shape;              ///< the result's: the axes kept
    std::int64_t kept = 1;    ///< elements of the result
    std::int64_t reduced = 1; ///< elements reduced into each
    DType dtype = DType::kFloat32;
    bool weak = false;
  };
  struct Step {
    Kind kind = Kind::kInput;
    Value result = -1;
    Value operands[3] = {-1, -1, -1};
    UnaryKernel unary = nullptr;
    BinaryKernel binary = nullptr;
    SelectKernel select = nullptr;
    ConvertKernel convert = nullptr;
    std::string name;  ///< the op's name, as unary()/binary() charge an array to the arena
  };

  Value add_step(Step step, DType dtype, bool weak);
  Value as_dtype(Value v, DType dtype, const std::string& op);
  Value copy_of(Value v);  ///< a computed copy of `v` (of an input, say)
  void note_use(Value v, const std::string& op);
  const ValueInfo& info(Value v) const { return values_.at(static_cast<std::size_t>(v)); }
  /// One thread's memory for run_block: the chain's per-block scratch
  /// slots, a block of the reduced value (`reduced_elements` of it; none
  /// without a reduction), and each value's pointer and stride in the block.
  struct Workspace {
    Workspace(const ElementwiseChain& chain, std::int64_t reduced_elements);
    std::int64_t slot_bytes;
    std::unique_ptr<std::byte[]> scratch;
    std::unique_ptr<std::byte[]> reduced;
    std::vector<const std::byte*> at;
    std::vector<std::int64_t> stride;
  };
  /// Runs the ops over elements [begin, begin + count). `reduced`: where the
  /// reduction's value goes when it lives in scratch (null without a
  /// reduction); ws.at[value] then points to the block's values, there or in
  /// the output array they were written to.
  void run_block(std::int64_t begin, std::int64_t count, std::span<const Array> inputs, std::vector<Array>& outputs,
                 Workspace& ws, std::byte* reduced) const;
  /// run() with a reduction over trailing axes: blocks follow the rows, as
  /// RowReduction takes them.
  void run_row_reduction(std::span<const Array> inputs, std::vector<Array>& outputs, Array& result) const;
  /// run() with a sum over leading axes: blocks of whole rows or row
  /// segments, each block of ColumnSum's rows on one thread, in order.
  void run_column_sum(std::span<const Array> inputs, std::vector<Array>& outputs, Array& result) const;

  Shape shape_;
  std::vector<ValueInfo> values_;
  std::vector<Input> inputs_;
  std::vector<Step> steps_;
  std::vector<Value> outputs_;
  std::vector<std::string> output_names_;  ///< the op making each output (the arena's "what")
  std::vector<Value> gathered_;  ///< inputs gathered per block
  std::optional<Reduction> reduction_;
  int slot_count_ = 0;
  bool finished_ = false;
};

}  // namespace spmd::detail
