#pragma once
// Where a collective's data goes, defined once: the shape each member gets
// back from all_gather, psum_scatter and all_to_all over a group of `g`
// members, and the blocks each member's input is cut into. The program's
// shape rules (abstract evaluation), the host data plane and the device
// transports all read their layouts here, so the three cannot drift apart.
//
// Axes are normalized (0 <= axis < rank of the shape they index) and sizes
// divide as the collective requires: callers validate first and report
// their own errors.

#include <cstdint>

#include "spmd/core/shape.h"

namespace spmd::detail {

/// all_gather along `axis`: untiled stacks the g inputs on a new axis at
/// `axis` (an axis of the result); tiled concatenates them along `axis`.
Shape all_gather_shape(const Shape& in, int axis, bool tiled, std::int64_t g);

/// psum_scatter of `in` along `axis` (an axis of `in`, whose size is g
/// untiled, or a multiple of g tiled): member k gets block k of the sum; untiled drops the axis.
Shape psum_scatter_shape(const Shape& in, int axis, bool tiled, std::int64_t g);

/// all_to_all: every input is cut into g blocks along `split_axis`; member k
/// receives block k of every member j and places it j-th along `concat_axis`.
struct AllToAllLayout {
  Shape block;     // one of the g blocks of an input (the split axis divided by g)
  Shape received;  // a block as it is placed in the result: untiled, the split axis (size 1) dropped
  Shape out;       // the result: tiled, concat_axis multiplied by g; untiled, a new axis of g at concat_axis
};
/// `concat_axis` is an axis of the result (untiled: after the split axis was dropped).
AllToAllLayout all_to_all_layout(const Shape& in, int split_axis, int concat_axis, bool tiled, std::int64_t g);

}  // namespace spmd::detail
