#pragma once
// The host elementwise kernels, as function pointers chosen by op and dtype,
// and the type rules that choose them. unary() / binary() / where() /
// astype() run these over whole arrays; a fused chain (fused_elementwise.h)
// runs the same ones block by block, so both give bit-identical results.
//
// A kernel computes n results into contiguous `out`. Each operand has an
// element stride: 1 (contiguous), 0 (one value for all n) or, for the binary
// and select kernels that broadcasting walks call, any stride.

#include <cstdint>

#include "spmd/core/dtype.h"
#include "spmd/core/elementwise.h"

namespace spmd::detail {

/// The dtype an op computes in (its operands are converted to it first), the
/// dtype it stores, and whether the result is weakly typed.
struct ElementwiseTypes {
  DType compute;
  DType out;
  bool weak;
};

/// JAX's rules (see elementwise.h); throw InvalidArgument (kind "TypeError")
/// for the combinations unary() / binary() refuse (`x_shape` for its message).
ElementwiseTypes unary_types(UnaryOp op, DType x, bool x_weak, const Shape& x_shape);
ElementwiseTypes binary_types(BinaryOp op, DType a, bool a_weak, DType b, bool b_weak);
/// where(cond, x, y): cond becomes bool; x and y are promoted together.
ElementwiseTypes select_types(DType x, bool x_weak, DType y, bool y_weak);

using UnaryKernel = void (*)(const void* x, std::int64_t x_stride, void* out, std::int64_t n);
using BinaryKernel = void (*)(const void* a, std::int64_t a_stride, const void* b, std::int64_t b_stride, void* out,
                              std::int64_t n);
using SelectKernel = void (*)(const bool* cond, std::int64_t cond_stride, const void* x, std::int64_t x_stride,
                              const void* y, std::int64_t y_stride, void* out, std::int64_t n);
using ConvertKernel = void (*)(const void* x, std::int64_t x_stride, void* out, std::int64_t n);

/// The kernel computing in `compute` (operands already of that dtype); its
/// output dtype is ElementwiseTypes::out. nullptr where the types above
/// refuse the combination.
UnaryKernel unary_kernel(UnaryOp op, DType compute);
BinaryKernel binary_kernel(BinaryOp op, DType compute);
SelectKernel select_kernel(DType dtype);
ConvertKernel convert_kernel(DType from, DType to);

}  // namespace spmd::detail
