#pragma once
/// \file
/// Matrix products with numpy semantics. The result has the promoted dtype
/// (bool products are `or` of `and`s); sums accumulate in double for floats
/// and wrapping int64 for ints, k ascending for every element, so results do
/// not depend on the thread count.

#include <vector>

#include "spmd/core/array.h"

namespace spmd {

/// jnp.dot: 1-D x 1-D inner product, 2-D x 2-D matmul, N-D x 1-D sums over the
/// last axis, N-D x M-D sums over a's last and b's second-to-last axis.
Array dot(const Array& a, const Array& b);
/// jnp.matmul / @: batched over leading axes with broadcasting; 1-D operands
/// are promoted and the added axis removed. Throws ShapeError with both shapes.
Array matmul(const Array& a, const Array& b);
/// matmul(a, b) of the operands with their last two axes swapped where
/// transpose_a / transpose_b say so (JAX's dot_general contracting a's or b's
/// other axis), read in place: no transposed copy is made on the host. An
/// operand to transpose must have at least two dimensions.
Array matmul(const Array& a, const Array& b, bool transpose_a, bool transpose_b);
/// The axes lax.dot_general contracts and batches, as JAX's
/// dimension_numbers ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)):
/// the i-th axis of each list on the left pairs with the i-th on the right.
struct DotDimensions {
  std::vector<int> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};
/// The shape dot_general gives: the batch axes, then lhs's other axes, then
/// rhs's, each in its operand's order. Throws InvalidArgument (TypeError, with
/// JAX's text) for axes out of range, repeated, both batch and contracting, or
/// paired with axes of another size.
Shape dot_general_shape(const Shape& lhs, const Shape& rhs, const DotDimensions& dims);
/// lax.dot_general, as one (batched) BLAS product: an operand whose axes are
/// in the order the product reads them, or that order with its free and
/// contracted axes swapped, is read in place; any other order is copied once.
/// The result has the promoted dtype, as matmul's.
///
/// With `out_permutation`, the result is transpose(dot_general(...),
/// out_permutation), made in that order where the product can make it
/// without a copy (the execution plan folds a transpose of a product into
/// it): the free blocks swapped (the product the other way round), or rhs's
/// leading free axes first (an outer batch the lhs is broadcast over, as
/// jnp.matmul(w, x) of a stack x records it).
Array dot_general(const Array& lhs, const Array& rhs, const DotDimensions& dims,
                  const std::vector<int>& out_permutation = {});
/// jnp.outer of the flattened operands.
Array outer(const Array& a, const Array& b);

}  // namespace spmd
