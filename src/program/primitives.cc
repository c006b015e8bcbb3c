// The primitive registry: for each primitive, its abstract evaluation and its
// implementation over the runtime's kernels and collectives.
//
// Elementwise dtype rules are not written twice: abstract evaluation runs the
// kernel itself on one-element operands of the same dtypes and weak types,
// so a traced program promotes exactly as eager code does.

#include "spmd/program/primitive.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "spmd/collectives/all_gather.h"
#include "spmd/collectives/all_to_all.h"
#include "spmd/collectives/axis_index.h"
#include "spmd/collectives/ppermute.h"
#include "spmd/collectives/psum_scatter.h"
#include "spmd/collectives/reduce.h"
#include "spmd/debug/breakpoint.h"
#include "spmd/debug/debug_print.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/format.h"
#include "spmd/core/layout.h"
#include "spmd/core/linalg.h"
#include "spmd/core/reduction.h"
#include "spmd/error.h"
#include "spmd/program/executor.h"
#include "spmd/program/host_callback.h"
#include "program/primitive_rules.h"
#include "rendezvous/collective_layout.h"
#include "spmd/runtime/device.h"
#include "rendezvous/unbound_axis.h"
#include "util/python_format.h"

namespace spmd::program {

namespace {

using Avals = std::vector<Aval>;
using Arrays = std::vector<Array>;

[[noreturn]] void type_error(const Primitive& p, const std::string& message, std::string hint = {}) {
  throw InvalidArgument(make_report("TypeError", p.name + ": " + message, std::move(hint)));
}

void require_arity(const Primitive& p, std::size_t got, std::size_t want) {
  if (got != want) {
    type_error(p, "takes " + std::to_string(want) + " operand" + (want == 1 ? "" : "s") + ", got " +
                      std::to_string(got));
  }
}

// A one-element host array with `a`'s dtype and weak type: what abstract
// evaluation feeds a kernel to learn its result type.
Array probe(const Aval& a) { return Array::scalar(1, a.dtype, a.weak_type); }

Shape to_shape(const std::vector<std::int64_t>& v) { return Shape(v.begin(), v.end()); }

std::vector<int> to_ints(const std::vector<std::int64_t>& v) { return std::vector<int>(v.begin(), v.end()); }

// --- elementwise ------------------------------------------------------------

Avals unary_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  Aval r = Aval::of(unary(rules::unary_op_for(p, params), probe(in[0])));
  r.shape = in[0].shape;
  return {r};
}
Arrays unary_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {unary(rules::unary_op_for(p, params), in[0])};
}

// integer_pow(x; y): x ** y for a static integer y, as repeated
// multiplication (unrolled_power); y == 0 gives ones.
Avals integer_pow_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  const std::int64_t y = params.get<std::int64_t>("y", p.name);
  const Aval& x = in[0];
  if (x.dtype == DType::kBool) {
    throw InvalidArgument(make_report(
        "TypeError", "integer_pow does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
                     "complexfloating.",
        "convert it first: x.astype(jnp.int32) ** y"));
  }
  if (y < 0 && !is_floating(x.dtype)) {
    std::string dims;
    for (std::size_t d = 0; d < x.shape.size(); ++d) dims += (d ? "," : "") + std::to_string(x.shape[d]);
    throw InvalidArgument(make_report("TypeError",
                                      "Integers cannot be raised to negative powers, got integer_pow(" +
                                          std::string(x.weak_type ? "~" : "") + std::string(dtype_name(x.dtype)) +
                                          "[" + dims + "], " + std::to_string(y) + ")",
                                      "a float base takes negative powers: x.astype(jnp.float32) ** " +
                                          std::to_string(y)));
  }
  return {x};
}
Arrays integer_pow_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  const std::int64_t y = params.get<std::int64_t>("y", p.name);
  if (y == 0) return {full(in[0].shape(), 1.0, in[0].dtype()).with_weak_type(in[0].weak_type())};
  auto mul = [](const Array& a, const Array& b) { return binary(BinaryOp::kMultiply, a, b); };
  auto reciprocal = [](const Array& a) { return unary(UnaryOp::kReciprocal, a); };
  return {rules::unrolled_power(in[0], y, mul, reciprocal)};
}

Avals binary_abstract(const Primitive& p, std::span<const Aval> in, const Params&, const AxisEnv&) {
  require_arity(p, in.size(), 2);
  Shape shape = broadcast_shapes(in[0].shape, in[1].shape, p.name);
  Aval r = Aval::of(binary(rules::binary_op_for(p, in[0].dtype), probe(in[0]), probe(in[1])));
  r.shape = std::move(shape);
  return {r};
}
Arrays binary_impl(const Primitive& p, std::span<const Array> in, const Params&, SourceLoc) {
  return {binary(rules::binary_op_for(p, in[0].dtype()), in[0], in[1])};
}

// select_n(pred, on_false, on_true), lax's operand order.
Avals select_abstract(const Primitive& p, std::span<const Aval> in, const Params&, const AxisEnv&) {
  require_arity(p, in.size(), 3);
  Shape shape = broadcast_shapes(broadcast_shapes(in[0].shape, in[1].shape, p.name), in[2].shape, p.name);
  Aval r = Aval::of(where(probe(in[0]), probe(in[2]), probe(in[1])));
  r.shape = std::move(shape);
  return {r};
}
Arrays select_impl(const Primitive&, std::span<const Array> in, const Params&, SourceLoc) {
  return {where(in[0], in[2], in[1])};
}

Avals convert_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  const std::string& name = params.get<std::string>("new_dtype", p.name);
  auto dt = parse_dtype(name);
  if (!dt) type_error(p, "unknown dtype '" + name + "'");
  return {Aval{in[0].shape, *dt, params.get_or<bool>("weak_type", false)}};
}
Arrays convert_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  DType dt = *parse_dtype(params.get<std::string>("new_dtype", p.name));
  return {astype(in[0], dt).with_weak_type(params.get_or<bool>("weak_type", false))};
}

// --- reductions -------------------------------------------------------------

Avals reduce_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  const auto& axes = params.get<std::vector<std::int64_t>>("axes", p.name);
  // argmax / argmin carry JAX's index_dtype; the kernel's indices are int32.
  if (params.has("index_dtype") && params.get<std::string>("index_dtype", p.name) != "int32") {
    type_error(p, "index_dtype " + params.get<std::string>("index_dtype", p.name) + ": spmdsim's indices are int32",
               "leave index_dtype at int32 (jax_enable_x64's int64 indices are not supported)");
  }
  // The kernel on an all-ones shape of the same rank checks the axes and
  // gives the dtype; the real sizes follow.
  Shape ones(in[0].shape.size(), 1);
  Array r = reduce(static_cast<ReduceOp>(p.op), zeros(ones, in[0].dtype), to_ints(axes), false);
  std::vector<bool> reduced(in[0].shape.size(), false);
  for (std::int64_t a : axes) reduced[static_cast<std::size_t>(normalize_axis(a, static_cast<int>(ones.size()), p.name))] = true;
  Shape shape;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) shape.push_back(in[0].shape[d]);
  }
  return {Aval{shape, r.dtype(), false}};
}
Arrays reduce_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {reduce(static_cast<ReduceOp>(p.op), in[0], to_ints(params.get<std::vector<std::int64_t>>("axes", p.name)),
                 false)};
}

// --- layout -----------------------------------------------------------------

Avals reshape_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  Shape shape = to_shape(params.get<std::vector<std::int64_t>>("new_sizes", p.name));
  if (num_elements(shape) != num_elements(in[0].shape)) {
    throw_shape_error("reshape", "cannot reshape array of shape " + shape_to_string(in[0].shape) + " (size " +
                                     std::to_string(num_elements(in[0].shape)) + ") into shape " +
                                     shape_to_string(shape) + " (size " + std::to_string(num_elements(shape)) + ")");
  }
  return {Aval{shape, in[0].dtype, in[0].weak_type}};
}
Arrays reshape_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {reshape(in[0], to_shape(params.get<std::vector<std::int64_t>>("new_sizes", p.name)))};
}

// squeeze(x; dimensions): the named axes, each of size 1, removed (a view,
// as reshape is).
Shape squeezed_shape(const Primitive& p, const Shape& in, const std::vector<std::int64_t>& dimensions) {
  std::vector<bool> gone(in.size(), false);
  for (std::int64_t a : dimensions) {
    const int d = normalize_axis(a, static_cast<int>(in.size()), p.name, "dimensions");
    if (in[static_cast<std::size_t>(d)] != 1) {
      throw_shape_error("squeeze", "cannot select an axis to squeeze out which has size not equal to one, got shape=" +
                                       shape_to_string(in) + " and dimensions=" + shape_to_string(dimensions));
    }
    gone[static_cast<std::size_t>(d)] = true;
  }
  Shape out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (!gone[d]) out.push_back(in[d]);
  }
  return out;
}
Avals squeeze_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  return {Aval{squeezed_shape(p, in[0].shape, params.get<std::vector<std::int64_t>>("dimensions", p.name)),
               in[0].dtype, in[0].weak_type}};
}
Arrays squeeze_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {reshape(in[0], squeezed_shape(p, in[0].shape(), params.get<std::vector<std::int64_t>>("dimensions", p.name)))};
}

Avals transpose_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  const auto& perm = params.get<std::vector<std::int64_t>>("permutation", p.name);
  std::vector<bool> seen(in[0].shape.size(), false);
  Shape shape;
  for (std::int64_t a : perm) {
    int d = normalize_axis(a, static_cast<int>(in[0].shape.size()), p.name, "permutation");
    if (seen[static_cast<std::size_t>(d)]) type_error(p, "permutation repeats axis " + std::to_string(d));
    seen[static_cast<std::size_t>(d)] = true;
    shape.push_back(in[0].shape[static_cast<std::size_t>(d)]);
  }
  if (perm.size() != in[0].shape.size()) {
    type_error(p, "permutation of length " + std::to_string(perm.size()) + " for an array of rank " +
                      std::to_string(in[0].shape.size()));
  }
  return {Aval{shape, in[0].dtype, in[0].weak_type}};
}
Arrays transpose_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {transpose(in[0], to_ints(params.get<std::vector<std::int64_t>>("permutation", p.name)))};
}

// broadcast_in_dim(x; shape, broadcast_dimensions): operand dimension k goes
// to output dimension broadcast_dimensions[k]; the others are new.
Avals broadcast_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  Shape shape = to_shape(params.get<std::vector<std::int64_t>>("shape", p.name));
  const auto& dims = params.get<std::vector<std::int64_t>>("broadcast_dimensions", p.name);
  if (dims.size() != in[0].shape.size()) type_error(p, "broadcast_dimensions must have one entry per operand axis");
  for (std::size_t k = 0; k < dims.size(); ++k) {
    std::int64_t d = dims[k];
    if (d < 0 || d >= static_cast<std::int64_t>(shape.size()) ||
        (in[0].shape[k] != 1 && in[0].shape[k] != shape[static_cast<std::size_t>(d)])) {
      throw_shape_error("broadcast_in_dim", "cannot broadcast an array of shape " + shape_to_string(in[0].shape) +
                                                " to shape " + shape_to_string(shape));
    }
  }
  return {Aval{shape, in[0].dtype, in[0].weak_type}};
}
Arrays broadcast_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  Shape shape = to_shape(params.get<std::vector<std::int64_t>>("shape", p.name));
  const auto& dims = params.get<std::vector<std::int64_t>>("broadcast_dimensions", p.name);
  Shape expanded(shape.size(), 1);
  for (std::size_t k = 0; k < dims.size(); ++k) expanded[static_cast<std::size_t>(dims[k])] = in[0].shape()[k];
  return {broadcast_to(reshape(in[0], expanded), shape)};
}

// iota(; dtype, shape, dimension): no operands; each element is its index
// along `dimension`, made in the arena of the device that runs it.
Avals iota_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 0);
  const std::string& name = params.get<std::string>("dtype", p.name);
  auto dt = parse_dtype(name);
  if (!dt) type_error(p, "unknown dtype '" + name + "'");
  if (*dt == DType::kBool) {
    type_error(p, "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, complexfloating.");
  }
  Shape shape = to_shape(params.get<std::vector<std::int64_t>>("shape", p.name));
  std::int64_t d = params.get<std::int64_t>("dimension", p.name);
  if (d < 0 || d >= static_cast<std::int64_t>(shape.size())) {
    throw_shape_error("iota", "iota dimension must be between 0 and len(shape), got dimension=" + std::to_string(d) +
                                  " for shape=" + shape_to_string(shape));
  }
  return {Aval{shape, *dt, false}};
}
Arrays iota_impl(const Primitive& p, std::span<const Array>, const Params& params, SourceLoc) {
  return {iota(to_shape(params.get<std::vector<std::int64_t>>("shape", p.name)),
               static_cast<int>(params.get<std::int64_t>("dimension", p.name)),
               *parse_dtype(params.get<std::string>("dtype", p.name)))};
}

Avals concatenate_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  if (in.empty()) type_error(p, "needs at least one operand");
  DType dt = in[0].dtype;
  bool weak = in[0].weak_type;
  for (const Aval& a : in.subspan(1)) {
    PromotedType t = promote_weak(dt, weak, a.dtype, a.weak_type);
    dt = t.dtype;
    weak = t.weak;
  }
  int axis = normalize_axis(params.get<std::int64_t>("dimension", p.name), static_cast<int>(in[0].shape.size()), p.name);
  Shape shape = in[0].shape;
  for (const Aval& a : in.subspan(1)) {
    bool same = a.shape.size() == shape.size();
    for (std::size_t d = 0; same && d < shape.size(); ++d) same = static_cast<int>(d) == axis || a.shape[d] == shape[d];
    if (!same) {
      throw_shape_error("concatenate", "all input arrays must have the same shape except along axis " +
                                           std::to_string(axis) + ", got " + shape_to_string(in[0].shape) + " and " +
                                           shape_to_string(a.shape));
    }
    shape[static_cast<std::size_t>(axis)] += a.shape[static_cast<std::size_t>(axis)];
  }
  return {Aval{shape, dt, weak}};
}
Arrays concatenate_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {concatenate(std::vector<Array>(in.begin(), in.end()), static_cast<int>(params.get<std::int64_t>("dimension", p.name)))};
}

// dot_general(lhs, rhs; lhs_contracting, rhs_contracting, lhs_batch,
// rhs_batch, preferred_element_type?, precision?): JAX's dimension_numbers as
// four axis lists. The result has preferred_element_type when given (JAX's
// jnp.matmul always gives it), else the operands' promoted dtype.
DotDimensions dot_dimensions(const Primitive& p, const Params& params) {
  return {to_ints(params.get<std::vector<std::int64_t>>("lhs_contracting", p.name)),
          to_ints(params.get<std::vector<std::int64_t>>("rhs_contracting", p.name)),
          to_ints(params.get<std::vector<std::int64_t>>("lhs_batch", p.name)),
          to_ints(params.get<std::vector<std::int64_t>>("rhs_batch", p.name))};
}
std::optional<DType> preferred_dtype(const Primitive& p, const Params& params) {
  if (!params.has("preferred_element_type")) return std::nullopt;
  const std::string& name = params.get<std::string>("preferred_element_type", p.name);
  std::optional<DType> dt = parse_dtype(name);
  if (!dt) type_error(p, "preferred_element_type '" + name + "' is not a dtype");
  return dt;
}
Avals dot_general_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 2);
  Aval r = Aval::of(binary(BinaryOp::kMultiply, probe(in[0]), probe(in[1])));
  r.shape = dot_general_shape(in[0].shape, in[1].shape, dot_dimensions(p, params));
  r.weak_type = false;
  if (auto dt = preferred_dtype(p, params)) r.dtype = *dt;
  return {r};
}
// The execution plan may add out_permutation: a transpose of the result it
// folded in (see execution_plan.cc).
Arrays dot_general_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  const std::vector<int> out_permutation = to_ints(params.get_or<std::vector<std::int64_t>>("out_permutation", {}));
  Array out = dot_general(in[0], in[1], dot_dimensions(p, params), out_permutation).with_weak_type(false);
  if (auto dt = preferred_dtype(p, params); dt && *dt != out.dtype()) out = astype(out, *dt);
  return {out};
}

// index(x; items): basic indexing with static ints, slices, None and
// Ellipsis. Each item is five numbers: kind (0 int, 1 slice, 2 newaxis,
// 3 ellipsis), index or start, stop, step, and which of start/stop/step are
// given (bits 0, 1, 2).
std::vector<IndexItem> index_items(const Primitive& p, const Params& params) {
  const auto& flat = params.get<std::vector<std::int64_t>>("items", p.name);
  std::vector<IndexItem> items;
  for (std::size_t i = 0; i + 4 < flat.size(); i += 5) {
    std::int64_t mask = flat[i + 4];
    switch (flat[i]) {
      case 0: items.push_back(IndexItem::at(flat[i + 1])); break;
      case 1:
        items.push_back(IndexItem::slice(mask & 1 ? std::optional<std::int64_t>(flat[i + 1]) : std::nullopt,
                                         mask & 2 ? std::optional<std::int64_t>(flat[i + 2]) : std::nullopt,
                                         mask & 4 ? std::optional<std::int64_t>(flat[i + 3]) : std::nullopt));
        break;
      case 2: items.push_back(IndexItem::new_axis()); break;
      default: items.push_back(IndexItem::ellipsis()); break;
    }
  }
  return items;
}

// Python's slice.indices(): the number of elements a slice selects.
std::int64_t slice_length(const IndexItem& it, std::int64_t d) {
  std::int64_t step = it.step.value_or(1);
  if (step == 0) throw_invalid_argument("ValueError", "slice step cannot be zero");
  std::int64_t lower = step > 0 ? 0 : -1;
  std::int64_t upper = step > 0 ? d : d - 1;
  auto bound = [&](std::optional<std::int64_t> v, std::int64_t fallback) {
    if (!v) return fallback;
    std::int64_t x = *v < 0 ? *v + d : *v;
    return std::clamp(x, lower, upper);
  };
  std::int64_t start = bound(it.start, step > 0 ? lower : upper);
  std::int64_t stop = bound(it.stop, step > 0 ? upper : lower);
  if (step > 0) return stop > start ? (stop - start - 1) / step + 1 : 0;
  return start > stop ? (start - stop - 1) / (-step) + 1 : 0;
}

Avals index_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  std::vector<IndexItem> items = index_items(p, params);
  const Shape& shape = in[0].shape;
  std::size_t consuming = 0;
  bool ellipsis = false;
  for (const IndexItem& it : items) {
    if (it.kind == IndexItem::Kind::kInt || it.kind == IndexItem::Kind::kSlice) ++consuming;
    if (it.kind == IndexItem::Kind::kEllipsis) {
      if (ellipsis) throw_invalid_argument("IndexError", "an index can only have a single ellipsis ('...')");
      ellipsis = true;
    }
  }
  if (consuming > shape.size()) {
    throw_invalid_argument("IndexError", "Too many indices: " + std::to_string(shape.size()) +
                                             "-dimensional array indexed with " + std::to_string(consuming) +
                                             " regular indices.");
  }
  Shape out;
  std::size_t d = 0;
  for (const IndexItem& it : items) {
    switch (it.kind) {
      case IndexItem::Kind::kInt: {
        std::int64_t n = shape[d];
        if (it.index < -n || it.index >= n) {
          throw_invalid_argument("IndexError", "index " + std::to_string(it.index) + " is out of bounds for axis " +
                                                   std::to_string(d) + " with size " + std::to_string(n));
        }
        ++d;
        break;
      }
      case IndexItem::Kind::kSlice: out.push_back(slice_length(it, shape[d])); ++d; break;
      case IndexItem::Kind::kNewAxis: out.push_back(1); break;
      case IndexItem::Kind::kEllipsis:
        for (std::size_t k = 0; k < shape.size() - consuming; ++k) out.push_back(shape[d++]);
        break;
    }
  }
  for (; d < shape.size(); ++d) out.push_back(shape[d]);
  return {Aval{out, in[0].dtype, in[0].weak_type}};
}
Arrays index_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {index(in[0], index_items(p, params))};
}

// slice(x; start_indices, limit_indices, strides?): lax.slice, the strided
// window [start, limit) of every axis (a basic index of slices), with
// JAX's TypeErrors; a negative start or a limit list of the wrong length,
// which JAX lets through to XLA, are errors here too.
struct SliceWindow {
  std::vector<std::int64_t> start, limit, strides;
};
SliceWindow slice_window(const Params& params, const Shape& shape) {
  SliceWindow w{params.get<std::vector<std::int64_t>>("start_indices", "slice"),
                params.get<std::vector<std::int64_t>>("limit_indices", "slice"),
                params.get_or<std::vector<std::int64_t>>("strides", {})};
  auto fail = [](const std::string& message,
                 std::string hint = "lax.slice(x, start_indices, limit_indices, strides) takes one window [start, limit) "
                                    "per axis, inside the operand's shape") {
    throw InvalidArgument(make_report("TypeError", message, std::move(hint)));
  };
  const std::string operand = " for operand shape " + shape_to_string(shape) + ".";
  if (w.start.size() != shape.size()) {
    fail("slice start_indices must have length equal to the number of dimensions of the operand, got indices " +
         shape_to_string(w.start) + operand);
  }
  if (w.limit.size() != shape.size()) {
    fail("slice limit_indices must have length equal to the number of dimensions of the operand, got indices " +
         shape_to_string(w.limit) + operand);
  }
  if (!w.strides.empty() && w.strides.size() != shape.size()) {
    fail("slice strides must have length equal to the number of dimensions of the operand, got strides " +
         shape_to_string(w.strides) + operand);
  }
  Shape sizes;
  for (std::size_t d = 0; d < shape.size(); ++d) sizes.push_back(w.limit[d] - w.start[d]);
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (w.start[d] < 0) {
      fail("slice start_indices must be greater than or equal to zero, got start_indices " + shape_to_string(w.start) +
               ".",
           "lax.slice does not count from the end; x[-2:] or lax.slice_in_dim take negative indices");
    }
    if (sizes[d] < 0) {
      fail("slice slice_sizes must be greater than or equal to zero, got slice_sizes of " + shape_to_string(sizes) + ".");
    }
    if (w.limit[d] > shape[d]) {
      fail("slice slice_sizes must be less than or equal to operand shape, got slice_sizes " + shape_to_string(sizes) +
           operand);
    }
    if (!w.strides.empty() && w.strides[d] <= 0) {
      fail("slice strides must be positive, got strides " + shape_to_string(w.strides) + ".");
    }
  }
  return w;
}
std::vector<IndexItem> slice_items(const SliceWindow& w) {
  std::vector<IndexItem> items;
  for (std::size_t d = 0; d < w.start.size(); ++d) {
    items.push_back(IndexItem::slice(w.start[d], w.limit[d], w.strides.empty() ? 1 : w.strides[d]));
  }
  return items;
}
Avals slice_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  const SliceWindow w = slice_window(params, in[0].shape);
  Shape shape;
  for (std::size_t d = 0; d < w.start.size(); ++d) {
    const std::int64_t step = w.strides.empty() ? 1 : w.strides[d];
    shape.push_back((w.limit[d] - w.start[d] + step - 1) / step);
  }
  return {Aval{shape, in[0].dtype, in[0].weak_type}};
}
Arrays slice_impl(const Primitive&, std::span<const Array> in, const Params& params, SourceLoc) {
  return {index(in[0], slice_items(slice_window(params, in[0].shape())))};
}

// index_update(x, values; items, mode): x.at[items].set/add/mul/min/max(values).
UpdateMode update_mode(const Primitive& p, const Params& params) {
  const std::string& m = params.get<std::string>("mode", p.name);
  if (m == "set") return UpdateMode::kSet;
  if (m == "add") return UpdateMode::kAdd;
  if (m == "mul") return UpdateMode::kMultiply;
  if (m == "min") return UpdateMode::kMin;
  if (m == "max") return UpdateMode::kMax;
  type_error(p, "unknown update mode '" + m + "'");
}
Avals index_update_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv& env) {
  require_arity(p, in.size(), 2);
  update_mode(p, params);
  Aval selected = index_abstract(p, in.subspan(0, 1), params, env)[0];
  Shape b = broadcast_shapes(selected.shape, in[1].shape, "x.at[...] update");
  if (b != selected.shape) {
    throw_shape_error("x.at[...] update", "values of shape " + shape_to_string(in[1].shape) +
                                              " do not fit the selected shape " + shape_to_string(selected.shape));
  }
  return {in[0]};
}
Arrays index_update_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {index_update(in[0], index_items(p, params), in[1], update_mode(p, params))};
}

// split(x; sizes, axis): x cut along axis into pieces of the given sizes
// (lax.split), with JAX's ValueErrors.
std::vector<std::int64_t> split_sizes(const Primitive& p, const Params& params, const Shape& shape, int& axis) {
  axis = normalize_axis(params.get<std::int64_t>("axis", p.name), static_cast<int>(shape.size()), p.name);
  const auto& sizes = params.get<std::vector<std::int64_t>>("sizes", p.name);
  auto as_list = [](const std::vector<std::int64_t>& xs) {
    std::string s = "[";
    for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
    return s + "]";
  };
  if (std::any_of(sizes.begin(), sizes.end(), [](std::int64_t n) { return n < 0; })) {
    throw_invalid_argument("ValueError", "Sizes passed to split must be nonnegative, got " + as_list(sizes));
  }
  const std::int64_t total = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  if (total != shape[static_cast<std::size_t>(axis)]) {
    throw_invalid_argument("ValueError",
                           "Sum of sizes " + std::to_string(total) + " must be equal to dimension " +
                               std::to_string(axis) + " of the operand shape " + as_list(shape),
                           "the pieces' sizes must add up to the axis; jnp.split(x, n, axis) cuts n equal pieces");
  }
  return sizes;
}
Avals split_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  int axis = 0;
  Avals out;
  for (std::int64_t n : split_sizes(p, params, in[0].shape, axis)) {
    Aval piece = in[0];
    piece.shape[static_cast<std::size_t>(axis)] = n;
    out.push_back(piece);
  }
  return out;
}
Arrays split_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  int axis = 0;
  Arrays out;
  std::int64_t start = 0;
  for (std::int64_t n : split_sizes(p, params, in[0].shape(), axis)) {
    std::vector<IndexItem> items(static_cast<std::size_t>(in[0].ndim()), IndexItem::slice());
    items[static_cast<std::size_t>(axis)] = IndexItem::slice(start, start + n, 1);
    out.push_back(index(in[0], items));
    start += n;
  }
  return out;
}

// dynamic_slice(x, *starts; slice_sizes) and dynamic_update_slice(x,
// update, *starts): a window at traced start indices (int32 scalars, one
// per axis), each clamped so the window fits, as XLA does; the front end
// has counted negative starts from the end (JAX's allow_negative_indices).
void check_starts(const Primitive& p, std::span<const Aval> starts, std::size_t rank) {
  if (starts.size() != rank) {
    type_error(p, std::to_string(starts.size()) + " start indices for an operand of rank " + std::to_string(rank));
  }
  for (const Aval& s : starts) {
    if (!s.shape.empty() || !is_integer(s.dtype)) type_error(p, "start indices must be integer scalars, got " + s.str());
  }
}
std::vector<IndexItem> window_items(std::span<const Array> starts, const Shape& operand, const Shape& window) {
  std::vector<IndexItem> items;
  for (std::size_t d = 0; d < operand.size(); ++d) {
    const std::int64_t start = std::clamp<std::int64_t>(starts[d].element_as_int64(0), 0, operand[d] - window[d]);
    items.push_back(IndexItem::slice(start, start + window[d], 1));
  }
  return items;
}
Avals dynamic_slice_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  if (in.empty()) require_arity(p, 0, 1);
  const Shape sizes = to_shape(params.get<std::vector<std::int64_t>>("slice_sizes", p.name));
  check_starts(p, in.subspan(1), in[0].shape.size());
  if (sizes.size() != in[0].shape.size()) {
    type_error(p, "slice_sizes " + shape_to_string(sizes) + " for an operand of shape " + shape_to_string(in[0].shape));
  }
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || sizes[d] > in[0].shape[d]) {
      type_error(p, "slice size " + std::to_string(sizes[d]) + " does not fit the operand's size " +
                        std::to_string(in[0].shape[d]) + " along axis " + std::to_string(d));
    }
  }
  return {Aval{sizes, in[0].dtype, in[0].weak_type}};
}
Arrays dynamic_slice_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  const Shape sizes = to_shape(params.get<std::vector<std::int64_t>>("slice_sizes", p.name));
  return {index(in[0], window_items(in.subspan(1), in[0].shape(), sizes))};
}
Avals dynamic_update_slice_abstract(const Primitive& p, std::span<const Aval> in, const Params&, const AxisEnv&) {
  if (in.size() < 2) require_arity(p, in.size(), 2);
  const Aval& x = in[0];
  const Aval& u = in[1];
  check_starts(p, in.subspan(2), x.shape.size());
  if (u.shape.size() != x.shape.size() || u.dtype != x.dtype) {
    type_error(p, "an update of " + u.str() + " for an operand of " + x.str() + " (same rank and dtype)");
  }
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (u.shape[d] > x.shape[d]) {
      type_error(p, "update size " + std::to_string(u.shape[d]) + " exceeds the operand's size " +
                        std::to_string(x.shape[d]) + " along axis " + std::to_string(d));
    }
  }
  return {x};
}
Arrays dynamic_update_slice_impl(const Primitive&, std::span<const Array> in, const Params&, SourceLoc) {
  return {index_update(in[0], window_items(in.subspan(2), in[0].shape(), in[1].shape()), in[1], UpdateMode::kSet)};
}

// take(x, indices; axis): x's slices at integer indices (a traced index).
Avals take_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 2);
  if (!is_integer(in[1].dtype)) type_error(p, "indices must be integers, got " + in[1].str());
  int axis = normalize_axis(params.get<std::int64_t>("axis", p.name), static_cast<int>(in[0].shape.size()), p.name);
  Shape out(in[0].shape.begin(), in[0].shape.begin() + axis);
  out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
  out.insert(out.end(), in[0].shape.begin() + axis + 1, in[0].shape.end());
  return {Aval{out, in[0].dtype, in[0].weak_type}};
}
Arrays take_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return {take(in[0], in[1], static_cast<int>(params.get<std::int64_t>("axis", p.name)))};
}

// cumsum / cumprod(x; axis): running sums and products along one axis.
Avals cumulative_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  normalize_axis(params.get<std::int64_t>("axis", p.name), static_cast<int>(in[0].shape.size()), p.name);
  Shape ones(in[0].shape.size(), 1);
  Aval r = Aval::of(p.op == 0 ? cumsum(zeros(ones, in[0].dtype), 0) : cumprod(zeros(ones, in[0].dtype), 0));
  r.shape = in[0].shape;
  return {r};
}
// cumsum / cumprod(x; axis, reverse): reverse runs from the end of the axis.
Arrays cumulative_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  const int axis = normalize_axis(params.get<std::int64_t>("axis", p.name), in[0].ndim(), p.name);
  const bool reverse = params.get_or<bool>("reverse", false);
  const Array x = reverse ? flip(in[0], axis) : in[0];
  const Array out = p.op == 0 ? cumsum(x, axis) : cumprod(x, axis);
  return {reverse ? flip(out, axis) : out};
}

// rev(x; dimensions): x reversed along each of `dimensions`.
Avals rev_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  for (std::int64_t d : params.get<std::vector<std::int64_t>>("dimensions", p.name)) {
    normalize_axis(d, static_cast<int>(in[0].shape.size()), p.name, "dimension");
  }
  return {in[0]};
}
Arrays rev_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  Array out = in[0];
  for (std::int64_t d : params.get<std::vector<std::int64_t>>("dimensions", p.name)) out = flip(out, static_cast<int>(d));
  return {out};
}

// --- collectives ------------------------------------------------------------

AxisSet axes_of(const Primitive& p, const Params& params) {
  return AxisSet(params.get<std::vector<std::string>>("axes", p.name));
}

// A ppermute pair or an axis_index_groups entry outside the axis would be
// truncated on its way to the runtime's int device indices: say so while
// tracing, with the axis size.
void check_indices_in_range(const Primitive& p, const Params& params, std::int64_t n) {
  auto check = [&](const char* key, const char* what) {
    const auto flat = params.get_or<std::vector<std::int64_t>>(key, {});
    for (std::int64_t i : flat) {
      if (i >= 0 && i < n) continue;
      const std::string axes = axes_of(p, params).to_string();
      throw_invalid_argument("ValueError",
                             p.name + ": " + what + " names index " + std::to_string(i) + ", but the axis " + axes +
                                 " has size " + std::to_string(n),
                             "indices along the axis run from 0 to " + std::to_string(n - 1) +
                                 " (what lax.axis_index returns)");
    }
  };
  check("perm", "the permutation");
  check("axis_index_groups", "axis_index_groups");
}

// The size of the group the axes span, checking each is bound, as JAX does
// when the collective is traced ("unbound axis name: j").
std::int64_t bound_size(const Primitive& p, const Params& params, const AxisEnv& env) {
  std::int64_t n = 1;
  for (const std::string& name : params.get<std::vector<std::string>>("axes", p.name)) {
    auto it = std::find_if(env.rbegin(), env.rend(), [&](const AxisFrame& f) { return f.name == name; });
    if (it == env.rend()) {
      // Names bound with an empty name are anonymous pmaps: not addressable.
      std::vector<std::string> names;
      for (const AxisFrame& f : env) {
        if (!f.name.empty()) names.push_back(f.name);
      }
      throw AxisNameError(detail::unbound_axis_report(p.name, name, env.empty() ? nullptr : &names, {}));
    }
    n *= it->size;
  }
  check_indices_in_range(p, params, n);
  return n;
}

// How many members each group of the collective has: the group size of
// axis_index_groups, else the size of the axes (checked to be bound).
std::int64_t member_count(const Primitive& p, const Params& params, const AxisEnv& env) {
  std::int64_t n = bound_size(p, params, env);
  std::int64_t group_size = params.get_or<std::int64_t>("group_size", 0);
  return group_size > 0 ? group_size : n;
}

AxisIndexGroups groups_of(const Params& params) {
  auto flat = params.get_or<std::vector<std::int64_t>>("axis_index_groups", {});
  std::int64_t group_size = params.get_or<std::int64_t>("group_size", 0);
  AxisIndexGroups groups;
  for (std::size_t i = 0; group_size > 0 && i < flat.size(); i += static_cast<std::size_t>(group_size)) {
    groups.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(i), flat.begin() + static_cast<std::ptrdiff_t>(i) + group_size);
  }
  return groups;
}

Avals reduction_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv& env) {
  bound_size(p, params, env);
  Avals out;
  for (const Aval& a : in) {
    Aval r = a;
    if (p.name == "psum" && a.dtype == DType::kBool) r.dtype = DType::kInt32;
    if (p.name == "pmean" && !is_floating(a.dtype)) r.dtype = kDefaultFloat;
    out.push_back(r);
  }
  return out;
}
Arrays reduction_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  AxisSet axes = axes_of(p, params);
  AxisIndexGroups groups = groups_of(params);
  switch (p.op) {
    case 0: return psum(in, axes, groups, loc);
    case 1: return pmean(in, axes, groups, loc);
    case 2: return pmax(in, axes, groups, loc);
    default: return pmin(in, axes, groups, loc);
  }
}

Avals all_gather_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv& env) {
  require_arity(p, in.size(), 1);
  std::int64_t n = member_count(p, params, env);
  bool tiled = params.get_or<bool>("tiled", false);
  Shape shape = in[0].shape;
  int rank = static_cast<int>(shape.size()) + (tiled ? 0 : 1);
  int axis = normalize_axis(params.get<std::int64_t>("axis", p.name), rank, p.name);
  return {Aval{detail::all_gather_shape(shape, axis, tiled, n), in[0].dtype, in[0].weak_type}};
}
Arrays all_gather_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  return {all_gather(in[0], axes_of(p, params), static_cast<int>(params.get<std::int64_t>("axis", p.name)),
                     params.get_or<bool>("tiled", false), groups_of(params), loc)};
}

Avals same_aval_collective_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                    const AxisEnv& env) {
  require_arity(p, in.size(), 1);
  bound_size(p, params, env);
  return {in[0]};
}

Arrays ppermute_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  const auto& flat = params.get<std::vector<std::int64_t>>("perm", p.name);
  Permutation perm;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) perm.emplace_back(static_cast<int>(flat[i]), static_cast<int>(flat[i + 1]));
  return {ppermute(in[0], axes_of(p, params), perm, loc)};
}

Avals axis_index_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv& env) {
  require_arity(p, in.size(), 0);
  bound_size(p, params, env);
  return {Aval{{}, DType::kInt32, false}};
}
Arrays axis_index_impl(const Primitive& p, std::span<const Array>, const Params& params, SourceLoc loc) {
  return {axis_index(axes_of(p, params), loc)};
}

Avals psum_scatter_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv& env) {
  require_arity(p, in.size(), 1);
  std::int64_t n = member_count(p, params, env);
  bool tiled = params.get_or<bool>("tiled", false);
  Shape shape = in[0].shape;
  int d = normalize_axis(params.get<std::int64_t>("scatter_dimension", p.name), static_cast<int>(shape.size()), p.name);
  std::int64_t size = shape[static_cast<std::size_t>(d)];
  if ((tiled && size % n != 0) || (!tiled && size != n)) {
    throw_shape_error("psum_scatter", "scatter dimension " + std::to_string(d) + " of " + in[0].str() + " must " +
                                          (tiled ? "be divisible by" : "equal") + " the axis size " + std::to_string(n));
  }
  return {Aval{detail::psum_scatter_shape(shape, d, tiled, n), in[0].dtype, in[0].weak_type}};
}
Arrays psum_scatter_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  return {psum_scatter(in[0], axes_of(p, params), static_cast<int>(params.get<std::int64_t>("scatter_dimension", p.name)),
                       params.get_or<bool>("tiled", false), groups_of(params), loc)};
}

Avals all_to_all_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv& env) {
  require_arity(p, in.size(), 1);
  std::int64_t n = member_count(p, params, env);
  bool tiled = params.get_or<bool>("tiled", false);
  Shape shape = in[0].shape;
  int rank = static_cast<int>(shape.size());
  int split = normalize_axis(params.get<std::int64_t>("split_axis", p.name), rank, p.name, "split_axis");
  std::int64_t size = shape[static_cast<std::size_t>(split)];
  if ((tiled && size % n != 0) || (!tiled && size != n)) {
    throw_shape_error("all_to_all", "split_axis " + std::to_string(split) + " of " + in[0].str() + " must " +
                                        (tiled ? "be divisible by" : "equal") + " the axis size " + std::to_string(n));
  }
  // Untiled, concat_axis indexes the result, which has the rank of the input (the split axis is dropped, a new one added).
  int concat = normalize_axis(params.get<std::int64_t>("concat_axis", p.name), rank, p.name, "concat_axis");
  return {Aval{detail::all_to_all_layout(shape, split, concat, tiled, n).out, in[0].dtype, in[0].weak_type}};
}
Arrays all_to_all_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  return {all_to_all(in[0], axes_of(p, params), static_cast<int>(params.get<std::int64_t>("split_axis", p.name)),
                     static_cast<int>(params.get<std::int64_t>("concat_axis", p.name)), params.get_or<bool>("tiled", false),
                     groups_of(params), loc)};
}

// --- debugging ----------------------------------------------------------------

// debug_print(*values; literals, field_args, field_specs, field_conversions):
// a traced jax.debug.print. The format string was split at trace time into
// literal text (Python values already formatted in) and fields, each naming
// an operand, its format spec and its conversion (!r / !s); every device
// renders its own values and hands the text to the ordered print queue.
std::string render_field(const Array& a, const std::string& spec, const std::string& conversion) {
  if (conversion == "r") return format_str_spec(repr(a), spec);
  if (spec.empty()) return to_string(a);
  const char type = format_spec_type(spec);
  const bool text = type == 0 || type == 's';
  if (a.ndim() != 0) {
    if (text) return format_str_spec(to_string(a), spec);
    throw InvalidArgument(make_report("TypeError", "unsupported format string passed to ArrayImpl.__format__ (spec '" +
                                                       spec + "' for an array of shape " + shape_to_string(a.shape()) + ")",
                                      "only 0-d arrays take numeric format specs; format elements one by one"));
  }
  if (a.dtype() == DType::kBool && text) return format_str_spec(a.element_as_bool(0) ? "True" : "False", spec);
  if (is_floating(a.dtype())) return format_float_spec(a.element_as_double(0), spec);
  return format_int_spec(a.element_as_int64(0), spec);
}

Avals debug_print_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  const auto literals = params.get_or<std::vector<std::string>>("literals", {});
  const auto args = params.get_or<std::vector<std::int64_t>>("field_args", {});
  const auto specs = params.get_or<std::vector<std::string>>("field_specs", {});
  if (literals.size() != args.size() + 1 || specs.size() != args.size()) type_error(p, "malformed format parameters");
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k] < 0 || static_cast<std::size_t>(args[k]) >= in.size()) type_error(p, "field refers to a missing value");
    if (!specs[k].empty()) format_spec_type(specs[k]);  // a bad spec fails where it was traced
  }
  return {};
}
Arrays debug_print_impl(const Primitive&, std::span<const Array> in, const Params& params, SourceLoc loc) {
  const auto literals = params.get_or<std::vector<std::string>>("literals", {});
  const auto args = params.get_or<std::vector<std::int64_t>>("field_args", {});
  const auto specs = params.get_or<std::vector<std::string>>("field_specs", {});
  const auto conversions = params.get_or<std::vector<std::string>>("field_conversions", {});
  std::string text = literals.at(0);
  for (std::size_t k = 0; k < args.size(); ++k) {
    text += render_field(in[static_cast<std::size_t>(args[k])], specs[k], k < conversions.size() ? conversions[k] : "");
    text += literals[k + 1];
  }
  debug_print(std::move(text), loc);
  return {};
}

// debug_callback(*operands; callback_id): jax.debug.callback. Each device
// hands host copies of its operands to the front end, which calls the
// Python function once the run is over (host_callback.h).
Avals callback_abstract(const Primitive& p, std::span<const Aval>, const Params& params, const AxisEnv&) {
  params.get<std::int64_t>("callback_id", p.name);
  return {};
}
Arrays callback_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  CallbackCall call;
  call.callback_id = params.get<std::int64_t>("callback_id", p.name);
  call.device = in_device() ? current_device().id : kHost;
  for (const Array& a : in) call.operands.push_back(a.to_host());
  call.loc = loc;
  record_callback(std::move(call));
  return {};
}

// breakpoint(*values; names): jax.debug.breakpoint(); the values are the
// arrays among the caller's local variables when it was traced.
Avals breakpoint_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  if (params.get_or<std::vector<std::string>>("names", {}).size() != in.size()) type_error(p, "one name per value");
  return {};
}
Arrays breakpoint_impl(const Primitive&, std::span<const Array> in, const Params& params, SourceLoc loc) {
  const auto names = params.get_or<std::vector<std::string>>("names", {});
  std::vector<std::pair<std::string, Array>> values;
  for (std::size_t k = 0; k < in.size(); ++k) values.emplace_back(names[k], in[k]);
  breakpoint(std::move(values), loc);
  return {};
}

// decision(; what, outcome): a branch Python took while tracing on a value
// that differs between processes (an `if` on jax.process_index()). The
// programs of two processes then differ; recorded as a decision on every
// device, it is what a cross-process deadlock report (and replay) names.
Avals decision_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  require_arity(p, in.size(), 0);
  (void)params.get<std::string>("what", p.name);
  (void)params.get<std::int64_t>("outcome", p.name);
  return {};
}
Arrays decision_impl(const Primitive& p, std::span<const Array>, const Params& params, SourceLoc loc) {
  record_decision(params.get<std::string>("what", p.name), params.get<std::int64_t>("outcome", p.name), loc);
  return {};
}

// --- control flow -----------------------------------------------------------

// cond(index, *operands; branches): runs branches[clamp(index)] on the operands.
// A cond's results: its branches' (which the front end checked agree but for
// weak types), weak only where every branch's is, as JAX joins them.
Avals cond_outputs(const std::vector<ProgramRef>& branches) {
  Avals out = branches[0]->output_avals();
  for (const ProgramRef& b : branches) {
    const Avals avals = b->output_avals();
    for (std::size_t k = 0; k < out.size() && k < avals.size(); ++k) out[k].weak_type &= avals[k].weak_type;
  }
  return out;
}
Avals cond_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  const auto& branches = params.get<std::vector<ProgramRef>>("branches", p.name);
  if (in.empty() || !in[0].shape.empty() || is_floating(in[0].dtype)) {
    type_error(p, "the branch index must be an integer or boolean scalar");
  }
  if (branches.empty()) type_error(p, "needs at least one branch");
  const auto counts = params.get_or<std::vector<std::int64_t>>("capture_counts", {});
  if (!counts.empty()) {
    const auto slots = params.get<std::vector<std::int64_t>>("capture_slots", p.name);
    if (counts.size() != branches.size()) type_error(p, "one capture count per branch");
    std::size_t total = 0;
    for (std::size_t b = 0; b < branches.size(); ++b) {
      if (counts[b] < 0 || static_cast<std::size_t>(counts[b]) > branches[b]->inputs().size()) {
        type_error(p, "branch " + std::to_string(b) + " captures more values than it has inputs");
      }
      total += static_cast<std::size_t>(counts[b]);
    }
    const std::size_t operands = branches[0]->inputs().size() - static_cast<std::size_t>(counts[0]);
    if (slots.size() != total || 1 + operands > in.size()) type_error(p, "capture slots do not match the operands");
    for (std::size_t b = 0; b < branches.size(); ++b) {
      if (branches[b]->inputs().size() - static_cast<std::size_t>(counts[b]) != operands) {
        type_error(p, "every branch takes the same operands");
      }
    }
    for (std::int64_t slot : slots) {
      if (slot < 0 || 1 + operands + static_cast<std::size_t>(slot) >= in.size()) {
        type_error(p, "a capture slot is out of range");
      }
    }
  }
  return cond_outputs(branches);
}
// The taken branch's results with the cond's weak types.
Arrays as_cond_outputs(const std::vector<ProgramRef>& branches, Arrays out) {
  const Avals avals = cond_outputs(branches);
  for (std::size_t k = 0; k < out.size() && k < avals.size(); ++k) out[k] = out[k].with_weak_type(avals[k].weak_type);
  return out;
}
// Each branch's program takes the operands, then the outer values it
// captured: capture_counts[b] of them, at capture_slots (flat, branch by
// branch) among the captured values that follow the operands.
Arrays cond_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  const auto& branches = params.get<std::vector<ProgramRef>>("branches", p.name);
  std::int64_t i = in[0].element_as_int64(0);
  i = std::clamp<std::int64_t>(i, 0, static_cast<std::int64_t>(branches.size()) - 1);
  record_decision(params.get_or<std::string>("source", "lax.cond"), i, loc);
  const Program& branch = *branches[static_cast<std::size_t>(i)];
  const auto counts = params.get_or<std::vector<std::int64_t>>("capture_counts", {});
  if (counts.empty()) return as_cond_outputs(branches, execute(branch, in.subspan(1)));
  const auto slots = params.get<std::vector<std::int64_t>>("capture_slots", p.name);
  std::size_t first = 0;
  for (std::int64_t b = 0; b < i; ++b) first += static_cast<std::size_t>(counts[static_cast<std::size_t>(b)]);
  const auto own = static_cast<std::size_t>(counts[static_cast<std::size_t>(i)]);
  const std::size_t operands = branch.inputs().size() - own;
  std::vector<Array> args(in.begin() + 1, in.begin() + 1 + static_cast<std::ptrdiff_t>(operands));
  const std::size_t captured_at = 1 + operands;
  for (std::size_t k = 0; k < own; ++k) {
    args.push_back(in[captured_at + static_cast<std::size_t>(slots[first + k])]);
  }
  return as_cond_outputs(branches, execute(branch, args));
}

// while(*cond_consts, *body_consts, *carry; cond_program, body_program, cond_nconsts, body_nconsts)
Avals while_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  const auto& body = params.get<ProgramRef>("body_jaxpr", p.name);
  return body->output_avals();
}
Arrays while_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  const ProgramRef& cond = params.get<ProgramRef>("cond_jaxpr", p.name);
  const ProgramRef& body = params.get<ProgramRef>("body_jaxpr", p.name);
  auto nc = static_cast<std::size_t>(params.get<std::int64_t>("cond_nconsts", p.name));
  auto nb = static_cast<std::size_t>(params.get<std::int64_t>("body_nconsts", p.name));
  const std::string what = params.get_or<std::string>("source", "lax.while_loop");
  std::vector<Array> cond_args(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(nc));
  std::vector<Array> body_args(in.begin() + static_cast<std::ptrdiff_t>(nc), in.begin() + static_cast<std::ptrdiff_t>(nc + nb));
  std::vector<Array> carry(in.begin() + static_cast<std::ptrdiff_t>(nc + nb), in.end());
  // A fori_loop's carry starts (i, upper, ...), as JAX lowers it: its trip
  // count is known on entry and is the one decision recorded. Otherwise each
  // test is a decision, as in a Python loop: devices whose trip counts differ
  // part at the first test with different outcomes, which the deadlock report
  // names even when a device never leaves the loop.
  const bool counted = what == "lax.fori_loop" && carry.size() >= 2;
  if (counted) {
    record_decision(what, std::max<std::int64_t>(carry[1].element_as_int64(0) - carry[0].element_as_int64(0), 0), loc);
  }
  // The programs take the carry, then their captured constants.
  for (;;) {
    std::vector<Array> args = carry;
    args.insert(args.end(), cond_args.begin(), cond_args.end());
    bool go = execute(*cond, args).at(0).element_as_bool(0);
    if (!counted) record_decision(what, go ? 1 : 0, loc);
    if (!go) break;
    args = carry;
    args.insert(args.end(), body_args.begin(), body_args.end());
    carry = execute(*body, args);
  }
  return carry;
}

// stop_gradient(x): x itself at run time; autodiff (in the jax package) sends
// no cotangent through it.
Avals identity_abstract(const Primitive& p, std::span<const Aval> in, const Params&, const AxisEnv&) {
  require_arity(p, in.size(), 1);
  return {in[0]};
}
Arrays identity_impl(const Primitive&, std::span<const Array> in, const Params&, SourceLoc) { return {in[0]}; }

// jit(*args; jaxpr, name): a jax.jit function called inside a trace (JAX's
// names since 0.7; pjit before). custom_jvp_call / custom_vjp_call(*args;
// call_jaxpr, rule): the function as traced. Its differentiation rule lives
// in the jax package (found by `rule`) and matters only to autodiff.
const ProgramRef& called_program(const Primitive& p, const Params& params) {
  return params.get<ProgramRef>(p.name == "jit" ? "jaxpr" : "call_jaxpr", p.name);
}
Avals call_abstract(const Primitive& p, std::span<const Aval> in, const Params& params, const AxisEnv&) {
  const auto& body = called_program(p, params);
  const auto want = body->input_avals();
  if (want.size() != in.size()) {
    type_error(p, "the function takes " + std::to_string(want.size()) + " arguments, got " + std::to_string(in.size()));
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i].shape != want[i].shape || in[i].dtype != want[i].dtype) {
      type_error(p, "argument " + std::to_string(i) + " is " + in[i].str() + " but the function was traced for " +
                        want[i].str());
    }
  }
  return body->output_avals();
}
Arrays call_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  return execute(*called_program(p, params), in);
}

// Nested pmap (a pmap traced inside a pmap-ed function).
Avals pmap_abstract(const Primitive& p, std::span<const Aval>, const Params& params, const AxisEnv&) {
  const auto& body = params.get<ProgramRef>("call_jaxpr", p.name);
  const auto& out_axes = params.get<std::vector<std::int64_t>>("out_axes", p.name);
  std::int64_t n = params.get<std::int64_t>("axis_size", p.name);
  Avals out = body->output_avals();
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (out_axes[k] >= 0) out[k].shape.insert(out[k].shape.begin() + out_axes[k], n);
  }
  return out;
}
Arrays pmap_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  PmapOptions o;
  o.axis_name = params.get<std::string>("axis_name", p.name);
  o.axis_size = static_cast<int>(params.get<std::int64_t>("axis_size", p.name));
  for (std::int64_t a : params.get<std::vector<std::int64_t>>("in_axes", p.name)) o.in_axes.push_back(a < 0 ? kReplicated : MapAxis(a));
  for (std::int64_t a : params.get<std::vector<std::int64_t>>("out_axes", p.name)) o.out_axes.push_back(a < 0 ? kReplicated : MapAxis(a));
  if (params.has("devices")) {
    for (std::int64_t d : params.get<std::vector<std::int64_t>>("devices", p.name)) o.devices.push_back(static_cast<int>(d));
  }
  o.loc = loc;
  return pmap_program(params.get<ProgramRef>("call_jaxpr", p.name), in, o);
}

// --- the table ----------------------------------------------------------------

std::map<std::string, Primitive, std::less<>> build_registry() {
  std::map<std::string, Primitive, std::less<>> r;
  auto add = [&](std::string name, Primitive::AbstractEval a, Primitive::Impl i, int op = 0,
                 Fusion fusion = Fusion::kNone) { r[name] = Primitive{name, a, i, op, fusion}; };
  const std::pair<const char*, UnaryOp> unaries[] = {
      {"neg", UnaryOp::kNegative},     {"abs", UnaryOp::kAbs},         {"sign", UnaryOp::kSign},
      {"exp", UnaryOp::kExp},          {"log", UnaryOp::kLog},         {"log1p", UnaryOp::kLog1p},
      {"expm1", UnaryOp::kExpm1},      {"sqrt", UnaryOp::kSqrt},       {"rsqrt", UnaryOp::kRsqrt},
      {"square", UnaryOp::kSquare},    {"sin", UnaryOp::kSin},         {"cos", UnaryOp::kCos},
      {"tan", UnaryOp::kTan},          {"tanh", UnaryOp::kTanh},       {"sinh", UnaryOp::kSinh},
      {"cosh", UnaryOp::kCosh},        {"asin", UnaryOp::kArcsin},     {"acos", UnaryOp::kArccos},
      {"atan", UnaryOp::kArctan},      {"logistic", UnaryOp::kLogistic}, {"floor", UnaryOp::kFloor},
      {"ceil", UnaryOp::kCeil},        {"round", UnaryOp::kRound},     {"not", UnaryOp::kBitwiseNot},
      {"is_inf", UnaryOp::kIsInf},     {"is_finite", UnaryOp::kIsFinite},
      {"reciprocal", UnaryOp::kReciprocal},
  };
  for (auto [name, op] : unaries) add(name, unary_abstract, unary_impl, static_cast<int>(op), Fusion::kUnary);
  const std::pair<const char*, BinaryOp> binaries[] = {
      {"add", BinaryOp::kAdd},       {"sub", BinaryOp::kSubtract},     {"mul", BinaryOp::kMultiply},
      {"div", BinaryOp::kDivide},    {"floor_div", BinaryOp::kFloorDivide}, {"rem", BinaryOp::kRemainder},
      {"pow", BinaryOp::kPower},     {"max", BinaryOp::kMaximum},      {"min", BinaryOp::kMinimum},
      {"eq", BinaryOp::kEqual},      {"ne", BinaryOp::kNotEqual},      {"lt", BinaryOp::kLess},
      {"le", BinaryOp::kLessEqual},  {"gt", BinaryOp::kGreater},       {"ge", BinaryOp::kGreaterEqual},
      {"and", BinaryOp::kBitwiseAnd}, {"or", BinaryOp::kBitwiseOr},    {"xor", BinaryOp::kBitwiseXor},
      {"atan2", BinaryOp::kArctan2},
  };
  for (auto [name, op] : binaries) add(name, binary_abstract, binary_impl, static_cast<int>(op), Fusion::kBinary);
  add("integer_pow", integer_pow_abstract, integer_pow_impl, 0, Fusion::kIntegerPow);
  add("select_n", select_abstract, select_impl, 0, Fusion::kSelect);
  add("convert_element_type", convert_abstract, convert_impl, 0, Fusion::kConvert);
  const std::pair<const char*, ReduceOp> reductions[] = {
      {"reduce_sum", ReduceOp::kSum}, {"reduce_prod", ReduceOp::kProd}, {"reduce_max", ReduceOp::kMax},
      {"reduce_min", ReduceOp::kMin}, {"reduce_or", ReduceOp::kAny},    {"reduce_and", ReduceOp::kAll},
      {"argmax", ReduceOp::kArgMax},  {"argmin", ReduceOp::kArgMin},
  };
  for (auto [name, op] : reductions) {
    const bool row_reduction = op == ReduceOp::kSum || op == ReduceOp::kMax || op == ReduceOp::kMin;
    add(name, reduce_abstract, reduce_impl, static_cast<int>(op), row_reduction ? Fusion::kReduce : Fusion::kNone);
  }
  add("reshape", reshape_abstract, reshape_impl);
  add("squeeze", squeeze_abstract, squeeze_impl);
  add("transpose", transpose_abstract, transpose_impl);
  add("broadcast_in_dim", broadcast_abstract, broadcast_impl, 0, Fusion::kBroadcast);
  add("iota", iota_abstract, iota_impl);
  add("concatenate", concatenate_abstract, concatenate_impl);
  add("dot_general", dot_general_abstract, dot_general_impl);
  add("index", index_abstract, index_impl);
  add("slice", slice_abstract, slice_impl);
  add("split", split_abstract, split_impl);
  add("dynamic_slice", dynamic_slice_abstract, dynamic_slice_impl);
  add("dynamic_update_slice", dynamic_update_slice_abstract, dynamic_update_slice_impl);
  add("take", take_abstract, take_impl);
  add("cumsum", cumulative_abstract, cumulative_impl, 0);
  add("cumprod", cumulative_abstract, cumulative_impl, 1);
  add("rev", rev_abstract, rev_impl);
  add("sort", rules::sort_abstract, rules::sort_impl);
  add("threefry_split", rules::threefry_split_abstract, rules::threefry_split_impl);
  add("threefry_fold_in", rules::threefry_fold_in_abstract, rules::threefry_fold_in_impl);
  add("threefry_bits", rules::threefry_bits_abstract, rules::threefry_bits_impl);
  add("random_unit", rules::random_unit_abstract, rules::random_unit_impl);
  add("randint_bits", rules::randint_bits_abstract, rules::randint_bits_impl);
  add("erf", rules::erf_abstract, rules::erf_impl);
  add("erf_inv", rules::erf_inv_abstract, rules::erf_inv_impl);
  add("index_update", index_update_abstract, index_update_impl);
  add("psum", reduction_abstract, reduction_impl, 0);
  add("pmean", reduction_abstract, reduction_impl, 1);
  add("pmax", reduction_abstract, reduction_impl, 2);
  add("pmin", reduction_abstract, reduction_impl, 3);
  add("all_gather", all_gather_abstract, all_gather_impl);
  add("ppermute", same_aval_collective_abstract, ppermute_impl);
  add("psum_scatter", psum_scatter_abstract, psum_scatter_impl);
  add("axis_index", axis_index_abstract, axis_index_impl);
  add("all_to_all", all_to_all_abstract, all_to_all_impl);
  add("cond", cond_abstract, cond_impl);
  add("while", while_abstract, while_impl);
  add("xla_pmap", pmap_abstract, pmap_impl);
  add("stop_gradient", identity_abstract, identity_impl);
  // sharding_constraint(x; mesh_ids, mesh_shape, axis_names, spec): the
  // value unchanged; the layout with_sharding_constraint or a shard_map's
  // out_specs gave it, which a jit passes on to its result.
  add("sharding_constraint", identity_abstract, identity_impl);
  add("custom_jvp_call", call_abstract, call_impl);
  add("custom_vjp_call", call_abstract, call_impl);
  add("jit", call_abstract, call_impl);
  add("debug_print", debug_print_abstract, debug_print_impl);
  add("debug_callback", callback_abstract, callback_impl);
  add("debug_breakpoint", breakpoint_abstract, breakpoint_impl);
  add("decision", decision_abstract, decision_impl);

  for (auto& [name, prim] : r) {
    if (prim.fusion != Fusion::kNone) prim.replication = Replication::kPure;  // elementwise
  }
  for (auto [name, op] : reductions) r.at(name).replication = Replication::kPure;
  for (const char* name : {"iota", "reshape", "squeeze", "transpose", "concatenate", "dot_general", "index", "slice", "split", "dynamic_slice", "dynamic_update_slice", "take", "cumsum", "cumprod", "rev",
                           "sort", "threefry_split", "threefry_fold_in", "threefry_bits", "random_unit",
                           "randint_bits", "erf", "erf_inv", "index_update", "stop_gradient", "sharding_constraint"}) {
    r.at(name).replication = Replication::kPure;
  }
  for (const char* name : {"psum", "pmean", "pmax", "pmin", "all_gather"}) {
    r.at(name).replication = Replication::kReplicating;
  }
  // As JAX 0.8.1 records them (jax/_src/lax/lax.py): the shardings of
  // explicit-sharding mode, None in every program spmdsim traces.
  r.at("broadcast_in_dim").unset_params = {"sharding"};
  r.at("iota").unset_params = {"sharding"};
  r.at("reshape").unset_params = {"dimensions", "sharding"};
  r.at("reduce_sum").unset_params = {"out_sharding"};
  r.at("slice").unset_params = {"strides"};  // None unless given
  return r;
}

const std::map<std::string, Primitive, std::less<>>& registry() {
  static const auto r = build_registry();
  return r;
}

}  // namespace

// and/or/xor/not are logical on booleans and bitwise on integers, as in lax.
BinaryOp rules::binary_op_for(const Primitive& p, DType a) {
  auto op = static_cast<BinaryOp>(p.op);
  if (a == DType::kBool) {
    if (op == BinaryOp::kBitwiseAnd) return BinaryOp::kLogicalAnd;
    if (op == BinaryOp::kBitwiseOr) return BinaryOp::kLogicalOr;
    if (op == BinaryOp::kBitwiseXor) return BinaryOp::kLogicalXor;
  }
  return op;
}

UnaryOp rules::unary_op_for(const Primitive& p, const Params& params) {
  auto op = static_cast<UnaryOp>(p.op);
  if (op != UnaryOp::kRound) return op;
  const std::int64_t method = params.get<std::int64_t>("rounding_method", p.name);
  if (method != 0 && method != 1) {
    type_error(p, "rounding_method must be 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN), got " + std::to_string(method));
  }
  return method == 0 ? UnaryOp::kRoundAwayFromZero : UnaryOp::kRound;
}

const Primitive& find_primitive(std::string_view name) {
  auto it = registry().find(name);
  if (it == registry().end()) {
    throw ProgramError(make_report("NotImplementedError", "spmdsim does not implement the primitive '" +
                                                              std::string(name) + "'",
                                   "please report which jax function needed it"));
  }
  return it->second;
}

std::vector<std::string> primitive_names() {
  std::vector<std::string> out;
  for (const auto& [name, p] : registry()) out.push_back(name);
  return out;
}

std::vector<Array> apply(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc loc) {
  return p.impl(p, in, params, loc);
}

}  // namespace spmd::program
