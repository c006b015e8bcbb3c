// The reductions below are this file's hot loops; GCC's -O2 cost model
// declines to vectorize them (measured: psum 1.8-2x faster with -O3).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include "dataplane/data_plane.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/element_access.h"
#include "core/parallel.h"
#include "core/placement.h"
#include "core/replicas.h"
#include "rendezvous/collective_layout.h"

namespace spmd::detail {

namespace {

// Elements per chunk: reductions accumulate a chunk in a small buffer, then
// write it to every member; chunks run in parallel when the work is large.
constexpr std::int64_t kChunk = 4096;
constexpr std::int64_t kParallelBytes = std::int64_t{1} << 20;

template <class F>
void for_chunks(std::int64_t n, std::int64_t chunk, std::int64_t total_bytes, F&& f) {
  std::int64_t chunks = (n + chunk - 1) / chunk;
  if (total_bytes >= kParallelBytes && chunks > 1) {
    // work = bytes (> kParallelThreshold here), so the chunks always go parallel.
    parallel_ranges(chunks, total_bytes, 1, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t c = first; c < last; ++c) f(c * chunk, std::min(n, (c + 1) * chunk));
    });
  } else {
    for (std::int64_t c = 0; c < chunks; ++c) f(c * chunk, std::min(n, (c + 1) * chunk));
  }
}

Array allocate_for(const CollectiveMember& m, const Shape& shape, DType dtype, CollectiveKind kind) {
  PlacementScope scope(m.placement);
  return Array::uninitialized(shape, dtype, std::string(collective_name(kind)) + " output");
}

// The outputs of a group whose members all get the same result: one block of
// host memory for all of them, each charged to its own arena (see replicas.h).
// Writing the result once instead of once per member halves a psum's memory
// traffic and divides an all_gather's by the group size.
std::vector<Array> allocate_replicated(const CollectiveCall& call, const std::vector<int>& group, const Shape& shape,
                                       DType dtype, CollectiveKind kind) {
  std::vector<std::shared_ptr<Arena>> arenas;
  arenas.reserve(group.size());
  for (int r : group) arenas.push_back(call.members[static_cast<std::size_t>(r)].placement->arena);
  return uninitialized_replicas(arenas, shape, dtype, std::string(collective_name(kind)) + " output");
}

// Accumulation type: halves in float, ints as unsigned (wrap-around like XLA).
template <class T>
using Acc = std::conditional_t<
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>, float,
    std::conditional_t<std::is_same_v<T, std::int32_t>, std::uint32_t,
                       std::conditional_t<std::is_same_v<T, std::int64_t>, std::uint64_t, T>>>;

// Ints are accumulated as unsigned so that overflow wraps (defined behaviour).
template <class A>
inline constexpr bool kWraps = std::is_same_v<A, std::uint32_t> || std::is_same_v<A, std::uint64_t>;

template <class T>
inline Acc<T> to_acc(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return static_cast<float>(v);
  } else {
    return static_cast<Acc<T>>(v);
  }
}

template <class A>
inline A combine_max(A a, A b) {
  if constexpr (std::is_same_v<A, bool>) {
    return a || b;
  } else if constexpr (kWraps<A>) {  // compare as the signed ints they carry
    using S = std::make_signed_t<A>;
    return static_cast<S>(a) > static_cast<S>(b) ? a : b;
  } else {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<A>::quiet_NaN();
    return a > b ? a : b;
  }
}

template <class A>
inline A combine_min(A a, A b) {
  if constexpr (std::is_same_v<A, bool>) {
    return a && b;
  } else if constexpr (kWraps<A>) {
    using S = std::make_signed_t<A>;
    return static_cast<S>(a) < static_cast<S>(b) ? a : b;
  } else {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<A>::quiet_NaN();
    return a < b ? a : b;
  }
}

template <class Out, class A>
inline Out from_acc(A a) {
  if constexpr (kWraps<A>) {
    return static_cast<Out>(static_cast<std::make_signed_t<A>>(a));
  } else {
    return narrow<Out>(a);
  }
}

// acc[i] = op(acc[i], src[i]). The main loop's trip count is a multiple of 16
// so that GCC's -O2 vectorizer (which refuses loops needing an epilogue) takes it.
template <class A, class T, class Op>
inline void combine_into(A* __restrict acc, const T* __restrict src, std::int64_t len, Op op) {
  const std::int64_t main = len & ~std::int64_t{15};
  for (std::int64_t i = 0; i < main; ++i) acc[i] = op(acc[i], to_acc(src[i]));
  for (std::int64_t i = main; i < len; ++i) acc[i] = op(acc[i], to_acc(src[i]));
}

// Four members at once, in the same order per element as four combine_into
// calls (so the result is bit-identical): the accumulator stays in a register
// across the four, which saves three loads and stores of it per element and
// keeps four input streams in flight. At 1024 devices x 1 MiB this takes a
// psum from ~16 to ~24 GB/s on two cores (tools/bench/HISTORY.md).
template <class A, class T, class Op>
inline void combine4_into(A* __restrict acc, const T* __restrict s0, const T* __restrict s1, const T* __restrict s2,
                          const T* __restrict s3, std::int64_t len, Op op) {
  const std::int64_t main = len & ~std::int64_t{15};
  auto step = [&](std::int64_t i) {
    acc[i] = op(op(op(op(acc[i], to_acc(s0[i])), to_acc(s1[i])), to_acc(s2[i])), to_acc(s3[i]));
  };
  for (std::int64_t i = 0; i < main; ++i) step(i);
  for (std::int64_t i = main; i < len; ++i) step(i);
}

// acc[i] = op(...op(acc[i], in[1][lo + i])..., in[last][lo + i]), members in order.
template <class A, class T, class Op>
void fold_members(A* acc, const std::vector<const T*>& in, std::int64_t lo, std::int64_t len, Op op) {
  std::size_t r = 1;
  for (; r + 4 <= in.size(); r += 4) combine4_into(acc, in[r] + lo, in[r + 1] + lo, in[r + 2] + lo, in[r + 3] + lo, len, op);
  for (; r < in.size(); ++r) combine_into(acc, in[r] + lo, len, op);
}

// Above this many output bytes per collective the outputs cannot stay in the
// caches anyway: outputs copied straight from the accumulator (the output type
// is the accumulation type: f32, f64) are written with non-temporal stores,
// which skip the read a normal store does first (a third of the traffic); the
// converting paths (halves, pmean of ints) store normally. Below it everything
// is copied normally, so a small psum's result is still in cache when read.
constexpr std::int64_t kStreamingOutputBytes = std::int64_t{16} << 20;

// memcpy that bypasses the caches where SSE2 allows; fence_streamed() must
// follow before another thread reads the destination.
void copy_streaming(void* dst, const void* src, std::size_t bytes) {
#if defined(__SSE2__)
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  const std::size_t head = std::min(bytes, (16 - reinterpret_cast<std::uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  const std::size_t body = bytes & ~std::size_t{63};
  for (std::size_t i = 0; i < body; i += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + body, s + body, bytes - body);
#else
  std::memcpy(dst, src, bytes);
#endif
}

void fence_streamed() {
#if defined(__SSE2__)
  _mm_sfence();  // non-temporal stores are weakly ordered
#endif
}

// Reduces `in` (one pointer per group member, in group order) into `out`,
// which every member's output shares.
template <class T, class Out>
void reduce_into(CollectiveKind kind, const std::vector<const T*>& in, Out* out, std::int64_t n) {
  using A = Acc<T>;
  const double count = static_cast<double>(in.size());
  std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(T) * in.size() + sizeof(Out));
  const bool stream = n * static_cast<std::int64_t>(sizeof(Out)) >= kStreamingOutputBytes;
  for_chunks(n, kChunk, bytes, [&](std::int64_t lo, std::int64_t hi) {
    // Per thread, not on the stack: a chunk of doubles is larger than a small fiber stack.
    thread_local std::unique_ptr<A[]> acc_buffer(new A[kChunk]);
    A* acc = acc_buffer.get();
    const std::int64_t len = hi - lo;
    for (std::int64_t i = 0; i < len; ++i) acc[i] = to_acc(in[0][lo + i]);
    switch (kind) {
      case CollectiveKind::kPmax: fold_members(acc, in, lo, len, [](A a, A b) { return combine_max(a, b); }); break;
      case CollectiveKind::kPmin: fold_members(acc, in, lo, len, [](A a, A b) { return combine_min(a, b); }); break;
      default: fold_members(acc, in, lo, len, [](A a, A b) { return static_cast<A>(a + b); });
    }
    if (kind == CollectiveKind::kPmean) {
      for (std::int64_t i = 0; i < len; ++i) {
        if constexpr (kWraps<A>) {
          acc[i] = static_cast<A>(acc[i]);  // ints: divided below in double
        } else if constexpr (!std::is_same_v<A, T>) {
          // Halves: JAX's pmean is psum, then a divide in the operand's type,
          // so a sum past the type's range is inf before it is divided. A
          // float quotient of two halves rounds to the half one exactly.
          acc[i] = to_acc(narrow<T>(acc[i])) / static_cast<A>(count);
        } else {
          acc[i] = static_cast<A>(acc[i] / static_cast<A>(count));
        }
      }
    }
    Out* d = out + lo;
    if constexpr (std::is_same_v<Out, T> && std::is_same_v<A, T>) {
      if (stream) {
        copy_streaming(d, acc, static_cast<std::size_t>(len) * sizeof(T));
        fence_streamed();
      } else {
        std::memcpy(d, acc, static_cast<std::size_t>(len) * sizeof(T));
      }
    } else if constexpr (kWraps<A> && std::is_floating_point_v<Out>) {
      for (std::int64_t i = 0; i < len; ++i) {
        d[i] = static_cast<Out>(static_cast<double>(static_cast<std::make_signed_t<A>>(acc[i])) / count);
      }
    } else {
      for (std::int64_t i = 0; i < len; ++i) d[i] = from_acc<Out>(acc[i]);
    }
  });
}

// Copies `rows` rows of `row_bytes` from src (stride src_stride) to dst (stride dst_stride).
void copy_rows(std::byte* dst, std::int64_t dst_stride, const std::byte* src, std::int64_t src_stride,
               std::int64_t rows, std::int64_t row_bytes) {
  if (row_bytes == 0) return;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * dst_stride, src + r * src_stride, static_cast<std::size_t>(row_bytes));
  }
}

struct Split {
  std::int64_t outer;       // product of dims before the axis
  std::int64_t dim;         // size of the axis
  std::int64_t inner_bytes; // bytes of one index along the axis
};

Split split_at(const Shape& s, int axis, DType dtype) {
  Split sp{1, s.empty() ? 1 : s[static_cast<std::size_t>(axis)], static_cast<std::int64_t>(dtype_size(dtype))};
  for (int i = 0; i < axis; ++i) sp.outer *= s[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < s.size(); ++i) sp.inner_bytes *= s[i];
  return sp;
}

const std::byte* bytes(const Array& a) { return static_cast<const std::byte*>(a.raw_data()); }
std::byte* bytes(Array& a) { return static_cast<std::byte*>(a.mutable_raw_data()); }

// Groups of members (by position in call.members, which is rank order).
std::vector<std::vector<int>> member_groups(const CollectiveCall& call) {
  return effective_groups(call.sig->groups, static_cast<int>(call.members.size()));
}

void run_reduction(CollectiveCall& call) {
  const CollectiveSignature& sig = *call.sig;
  const std::vector<std::vector<int>> groups = member_groups(call);
  // Every group's outputs first, so that a device over capacity fails before
  // any data moves; then one result per group, shared by its members.
  for (auto& m : call.members) m.outputs->clear();
  for (const auto& op : sig.operands) {
    for (const auto& group : groups) {
      std::vector<Array> replicas =
          allocate_replicated(call, group, op.shape, reduction_result_dtype(sig.kind, op.dtype), sig.kind);
      for (std::size_t i = 0; i < group.size(); ++i) {
        call.members[static_cast<std::size_t>(group[i])].outputs->push_back(std::move(replicas[i]));
      }
    }
  }
  for (std::size_t k = 0; k < sig.operands.size(); ++k) {
    DType in_dtype = sig.operands[k].dtype;
    DType out_dtype = reduction_result_dtype(sig.kind, in_dtype);
    std::int64_t n = num_elements(sig.operands[k].shape);
    // psum/pmean of bool count the trues: widen to int32 first.
    std::vector<Array> widened;
    if (in_dtype == DType::kBool && out_dtype != DType::kBool) {
      for (auto& m : call.members) {
        PlacementScope scope(m.placement);
        Array w = Array::uninitialized(sig.operands[k].shape, DType::kInt32, "psum of bool");
        const bool* src = m.inputs[k].data<bool>();
        auto* dst = w.mutable_data<std::int32_t>();
        for (std::int64_t i = 0; i < n; ++i) dst[i] = src[i] ? 1 : 0;
        widened.push_back(std::move(w));
      }
      in_dtype = DType::kInt32;
    }
    auto input = [&](std::size_t member) -> const Array& {
      return widened.empty() ? call.members[member].inputs[k] : widened[member];
    };
    for (const auto& group : groups) {
      visit_dtype(in_dtype, [&](auto in_tag) {
        using T = decltype(in_tag);
        std::vector<const T*> in;
        for (int r : group) in.push_back(input(static_cast<std::size_t>(r)).template data<T>());
        visit_dtype(out_dtype, [&](auto out_tag) {
          using Out = decltype(out_tag);
          if constexpr (std::is_same_v<Out, T> || (std::is_same_v<Out, float> && std::is_integral_v<T>)) {
            Array& shared = (*call.members[static_cast<std::size_t>(group.front())].outputs)[k];
            reduce_into<T, Out>(sig.kind, in, shared.template mutable_data<Out>(), n);
          }
        });
      });
    }
  }
}

void run_all_gather(CollectiveCall& call) {
  const CollectiveSignature& sig = *call.sig;
  const OperandType& op = sig.operands[0];
  for (const auto& group : member_groups(call)) {
    const std::int64_t g = static_cast<std::int64_t>(group.size());
    const Shape out_shape = all_gather_shape(op.shape, sig.axis, sig.tiled, g);
    // Each member's input lands as a block of the output rows around `axis`.
    std::int64_t outer = 1, block_bytes = static_cast<std::int64_t>(dtype_size(op.dtype));
    for (int i = 0; i < sig.axis; ++i) outer *= op.shape[static_cast<std::size_t>(i)];
    for (std::size_t i = static_cast<std::size_t>(sig.axis); i < op.shape.size(); ++i) block_bytes *= op.shape[i];
    std::vector<Array> replicas = allocate_replicated(call, group, out_shape, op.dtype, sig.kind);
    std::byte* dst = bytes(replicas.front());
    for (std::int64_t j = 0; j < g; ++j) {
      const Array& src = call.members[static_cast<std::size_t>(group[static_cast<std::size_t>(j)])].inputs[0];
      copy_rows(dst + j * block_bytes, g * block_bytes, bytes(src), block_bytes, outer, block_bytes);
    }
    for (std::size_t i = 0; i < group.size(); ++i) {
      call.members[static_cast<std::size_t>(group[i])].outputs->assign(1, std::move(replicas[i]));
    }
  }
}

void run_psum_scatter(CollectiveCall& call) {
  const CollectiveSignature& sig = *call.sig;
  const OperandType& op = sig.operands[0];
  // Sum first (into scratch arrays of the full shape), then cut blocks.
  CollectiveSignature sum_sig = sig;
  sum_sig.kind = CollectiveKind::kPsum;
  std::vector<std::vector<Array>> sums(call.members.size());
  CollectiveCall sum_call;
  sum_call.sig = &sum_sig;
  for (std::size_t i = 0; i < call.members.size(); ++i) {
    CollectiveMember sum = call.members[i];
    sum.outputs = &sums[i];
    sum_call.members.push_back(sum);
  }
  run_reduction(sum_call);
  DType dtype = reduction_result_dtype(CollectiveKind::kPsum, op.dtype);
  for (const auto& group : member_groups(call)) {
    const std::int64_t g = static_cast<std::int64_t>(group.size());
    Split sp = split_at(op.shape, sig.axis, dtype);
    std::int64_t block = sp.dim / g;  // indices along the axis per member
    const Shape out_shape = psum_scatter_shape(op.shape, sig.axis, sig.tiled, g);
    for (std::int64_t j = 0; j < g; ++j) {
      CollectiveMember& m = call.members[static_cast<std::size_t>(group[static_cast<std::size_t>(j)])];
      Array out = allocate_for(m, out_shape, dtype, sig.kind);
      const Array& total = sums[static_cast<std::size_t>(group[static_cast<std::size_t>(j)])][0];
      copy_rows(bytes(out), block * sp.inner_bytes, bytes(total) + j * block * sp.inner_bytes, sp.dim * sp.inner_bytes,
                sp.outer, block * sp.inner_bytes);
      m.outputs->assign(1, std::move(out));
    }
  }
}

void run_all_to_all(CollectiveCall& call) {
  const CollectiveSignature& sig = *call.sig;
  const OperandType& op = sig.operands[0];
  for (const auto& group : member_groups(call)) {
    const std::int64_t g = static_cast<std::int64_t>(group.size());
    // Block j of an input: index range [j*b, (j+1)*b) along split_axis.
    Split in_sp = split_at(op.shape, sig.axis, op.dtype);
    std::int64_t b = in_sp.dim / g;
    // Each received block is viewed in the untiled case with the split axis
    // (size 1) removed: its bytes are the same.
    const AllToAllLayout layout = all_to_all_layout(op.shape, sig.axis, sig.concat_axis, sig.tiled, g);
    const Shape& block_shape = layout.block;
    const Shape& out_shape = layout.out;
    const Shape& recv_shape = layout.received;
    Split out_sp = split_at(recv_shape, sig.tiled ? sig.concat_axis : 0, op.dtype);
    std::int64_t outer = 1, piece_bytes = static_cast<std::int64_t>(dtype_size(op.dtype));
    for (int i = 0; i < sig.concat_axis && !sig.tiled; ++i) outer *= recv_shape[static_cast<std::size_t>(i)];
    for (std::size_t i = static_cast<std::size_t>(sig.concat_axis); i < recv_shape.size() && !sig.tiled; ++i) piece_bytes *= recv_shape[i];
    if (sig.tiled) {
      outer = out_sp.outer;
      piece_bytes = out_sp.dim * out_sp.inner_bytes;
    }
    for (std::int64_t k = 0; k < g; ++k) {
      CollectiveMember& m = call.members[static_cast<std::size_t>(group[static_cast<std::size_t>(k)])];
      Array out = allocate_for(m, out_shape, op.dtype, sig.kind);
      for (std::int64_t j = 0; j < g; ++j) {
        const Array& src = call.members[static_cast<std::size_t>(group[static_cast<std::size_t>(j)])].inputs[0];
        // Gather block k of member j into a contiguous scratch, then place it.
        std::vector<std::byte> block(static_cast<std::size_t>(num_elements(block_shape)) * dtype_size(op.dtype));
        copy_rows(block.data(), b * in_sp.inner_bytes, bytes(src) + k * b * in_sp.inner_bytes,
                  in_sp.dim * in_sp.inner_bytes, in_sp.outer, b * in_sp.inner_bytes);
        copy_rows(bytes(out) + j * piece_bytes, g * piece_bytes, block.data(), piece_bytes, outer, piece_bytes);
      }
      m.outputs->assign(1, std::move(out));
    }
  }
}

void run_ppermute(CollectiveCall& call) {
  const CollectiveSignature& sig = *call.sig;
  const OperandType& op = sig.operands[0];
  std::vector<int> source(call.members.size(), -1);
  for (auto [src, dst] : sig.perm) source[static_cast<std::size_t>(dst)] = src;
  for (std::size_t r = 0; r < call.members.size(); ++r) {
    CollectiveMember& m = call.members[r];
    Array out = allocate_for(m, op.shape, op.dtype, sig.kind);
    if (out.nbytes() > 0) {
      if (source[r] >= 0) {
        std::memcpy(out.mutable_raw_data(), call.members[static_cast<std::size_t>(source[r])].inputs[0].raw_data(),
                    out.nbytes());
      } else {
        std::memset(out.mutable_raw_data(), 0, out.nbytes());
      }
    }
    m.outputs->assign(1, std::move(out));
  }
}

}  // namespace

DType reduction_result_dtype(CollectiveKind kind, DType operand) {
  if (kind == CollectiveKind::kPsum && operand == DType::kBool) return DType::kInt32;
  if (kind == CollectiveKind::kPsumScatter && operand == DType::kBool) return DType::kInt32;
  if (kind == CollectiveKind::kPmean && (operand == DType::kBool || is_integer(operand))) return DType::kFloat32;
  return operand;
}

std::vector<std::vector<int>> effective_groups(const std::vector<std::vector<int>>& groups, int n) {
  if (!groups.empty()) return groups;
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  return {all};
}

void execute_on_host(CollectiveCall& call) {
  switch (call.sig->kind) {
    case CollectiveKind::kPsum:
    case CollectiveKind::kPmean:
    case CollectiveKind::kPmax:
    case CollectiveKind::kPmin: run_reduction(call); break;
    case CollectiveKind::kAllGather: run_all_gather(call); break;
    case CollectiveKind::kPsumScatter: run_psum_scatter(call); break;
    case CollectiveKind::kAllToAll: run_all_to_all(call); break;
    case CollectiveKind::kPpermute: run_ppermute(call); break;
    case CollectiveKind::kBarrier: break;  // no data, no outputs
  }
}

}  // namespace spmd::detail
