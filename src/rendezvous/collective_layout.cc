#include "rendezvous/collective_layout.h"

namespace spmd::detail {

namespace {
std::size_t at(int axis) { return static_cast<std::size_t>(axis); }
}  // namespace

Shape all_gather_shape(const Shape& in, int axis, bool tiled, std::int64_t g) {
  Shape out = in;
  if (tiled) {
    out[at(axis)] *= g;
  } else {
    out.insert(out.begin() + axis, g);
  }
  return out;
}

Shape psum_scatter_shape(const Shape& in, int axis, bool tiled, std::int64_t g) {
  Shape out = in;
  if (tiled) {
    out[at(axis)] /= g;
  } else {
    out.erase(out.begin() + axis);
  }
  return out;
}

AllToAllLayout all_to_all_layout(const Shape& in, int split_axis, int concat_axis, bool tiled, std::int64_t g) {
  AllToAllLayout l;
  l.block = in;
  l.block[at(split_axis)] /= g;
  l.received = l.block;
  if (tiled) {
    l.out = l.block;
    l.out[at(concat_axis)] *= g;
  } else {
    l.received.erase(l.received.begin() + split_axis);
    l.out = l.received;
    l.out.insert(l.out.begin() + concat_axis, g);
  }
  return l;
}

}  // namespace spmd::detail
