// reduce, scan, integer matmul and the copy transport's group reduction: the
// host's accumulation types and orders (reduction.cc, linalg.cc,
// data_plane.cc), so results match it bit for bit. Float products are
// cuBLAS's (cuda_ops.cc).

#include "backend/cuda/kernels/dispatch.cuh"
#include "spmd/core/reduction.h"

namespace spmd::cuda::kernels {

namespace {

using namespace spmd::cuda::dev;

// reduction.cc: rows are reduced in blocks of kBlock elements; block
// partials are combined pairwise (combine_pairwise). A float sum within a
// block runs in kLanes lanes, element i in lane (i - block start) % kLanes,
// the lanes added pairwise at the block's end (lane_sum); other reductions
// run in order.
constexpr std::int64_t kBlock = 4096;
constexpr int kLanes = 8;

template <class Value>
__device__ __forceinline__ double lane_sum(std::int64_t b, std::int64_t e, Value value) {
  double lane[kLanes] = {};
  std::int64_t i = b;
  for (; i + kLanes <= e; i += kLanes) {
#pragma unroll
    for (int l = 0; l < kLanes; ++l) lane[l] = __dadd_rn(lane[l], value(i + l));
  }
  for (int l = 0; i < e; ++i, ++l) lane[l] = __dadd_rn(lane[l], value(i));
  return __dadd_rn(__dadd_rn(__dadd_rn(lane[0], lane[1]), __dadd_rn(lane[2], lane[3])),
                   __dadd_rn(__dadd_rn(lane[4], lane[5]), __dadd_rn(lane[6], lane[7])));
}

__host__ __device__ inline std::int64_t nblocks_of(std::int64_t r) { return (r + kBlock - 1) / kBlock; }

__device__ __forceinline__ std::int64_t wrap_add64(std::int64_t a, std::int64_t b) { return rules::wrap_add(a, b); }
__device__ __forceinline__ std::int64_t wrap_mul64(std::int64_t a, std::int64_t b) { return rules::wrap_mul(a, b); }

template <class T>
inline constexpr bool kFloatT = std::is_floating_point_v<Compute<T>>;

enum class Kind { kSum, kProd, kMax, kMin, kAny, kAll, kMomentSum, kMomentSq };

template <class T, Kind K>
struct Traits {
  using C = Compute<T>;
  using Acc = std::conditional_t<K == Kind::kMax || K == Kind::kMin, C,
                                 std::conditional_t<K == Kind::kAny || K == Kind::kAll, int,
                                                    std::conditional_t<K == Kind::kMomentSum || K == Kind::kMomentSq,
                                                                       double,
                                                                       std::conditional_t<kFloatT<T>, double,
                                                                                          std::int64_t>>>>;
  static __device__ __forceinline__ bool better(C a, C b) {  // b replaces a
    return K == Kind::kMax ? b > a : b < a;
  }
  static __device__ __forceinline__ Acc leaf(const T* q, std::int64_t b, std::int64_t e, double mean) {
    if constexpr (K == Kind::kSum && kFloatT<T>) {
      return lane_sum(b, e, [q](std::int64_t i) { return static_cast<double>(widen(q[i])); });
    } else if constexpr (K == Kind::kSum || K == Kind::kProd) {
      Acc s = K == Kind::kSum ? Acc{0} : Acc{1};
      for (std::int64_t i = b; i < e; ++i) {
        if constexpr (kFloatT<T>) {
          double v = static_cast<double>(widen(q[i]));
          s = K == Kind::kSum ? __dadd_rn(s, v) : __dmul_rn(s, v);
        } else {
          auto v = static_cast<std::int64_t>(q[i]);
          s = K == Kind::kSum ? wrap_add64(s, v) : wrap_mul64(s, v);
        }
      }
      return s;
    } else if constexpr (K == Kind::kMax || K == Kind::kMin) {
      C m = widen(q[b]);
      if constexpr (kFloatT<T>) {
        if (m_isnan(m)) return m;
      }
      for (std::int64_t i = b + 1; i < e; ++i) {
        C v = widen(q[i]);
        if constexpr (kFloatT<T>) {
          if (m_isnan(v)) return v;
        }
        if (better(m, v)) m = v;
      }
      return m;
    } else if constexpr (K == Kind::kAny || K == Kind::kAll) {
      const bool any = K == Kind::kAny;
      for (std::int64_t i = b; i < e; ++i) {
        bool nz = widen(q[i]) != C{};
        if (nz == any) return static_cast<int>(any);
      }
      return static_cast<int>(!any);
    } else if constexpr (K == Kind::kMomentSum) {
      return lane_sum(b, e, [q](std::int64_t i) { return static_cast<double>(widen(q[i])); });
    } else {
      return lane_sum(b, e, [q, mean](std::int64_t i) {
        double d = __dsub_rn(static_cast<double>(widen(q[i])), mean);
        return __dmul_rn(d, d);
      });
    }
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    if constexpr (K == Kind::kSum || K == Kind::kMomentSum || K == Kind::kMomentSq) {
      if constexpr (std::is_same_v<Acc, double>) return __dadd_rn(a, b);
      else return wrap_add64(a, b);
    } else if constexpr (K == Kind::kProd) {
      if constexpr (std::is_same_v<Acc, double>) return __dmul_rn(a, b);
      else return wrap_mul64(a, b);
    } else if constexpr (K == Kind::kMax || K == Kind::kMin) {
      if constexpr (kFloatT<T>) {
        if (m_isnan(a)) return a;
        if (m_isnan(b)) return b;
      }
      return better(a, b) ? b : a;
    } else if constexpr (K == Kind::kAny) {
      return a | b;
    } else {
      return a & b;
    }
  }
  static __device__ __forceinline__ Acc identity() {
    if constexpr (K == Kind::kProd || K == Kind::kAll) return Acc{1};
    return Acc{};
  }
};

template <class T, Kind K>
__global__ void leaf_kernel(const T* x, std::int64_t outer, std::int64_t r, const double* means, void* partial) {
  using Tr = Traits<T, K>;
  const std::int64_t nb = nblocks_of(r);
  auto* p = static_cast<typename Tr::Acc*>(partial);
  SPMD_GRID_LOOP(e, outer * nb) {
    std::int64_t row = e / nb, b = e % nb;
    std::int64_t end = (b + 1) * kBlock < r ? (b + 1) * kBlock : r;
    p[e] = Tr::leaf(x + row * r, b * kBlock, end, means ? means[row] : 0.0);
  }
}

// combine_pairwise over each row's partials, then store(row, acc).
template <class T, Kind K, class Store>
__global__ void combine_kernel(std::int64_t outer, std::int64_t r, void* partial, Store store) {
  using Tr = Traits<T, K>;
  using Acc = typename Tr::Acc;
  const std::int64_t nb = nblocks_of(r);
  SPMD_GRID_LOOP(row, outer) {
    Acc v;
    if (nb == 0) {
      v = Tr::identity();
    } else {
      Acc* p = static_cast<Acc*>(partial) + row * nb;
      std::int64_t n = nb;
      while (n > 1) {
        std::int64_t half = n / 2;
        for (std::int64_t i = 0; i < half; ++i) p[i] = Tr::combine(p[2 * i], p[2 * i + 1]);
        if (n % 2 != 0) {
          p[half] = p[n - 1];
          n = half + 1;
        } else {
          n = half;
        }
      }
      v = p[0];
    }
    store(row, v);
  }
}

template <class O>
struct StoreNarrow {
  O* out;
  template <class Acc>
  __device__ void operator()(std::int64_t row, Acc v) const {
    out[row] = narrow<O>(v);
  }
};
struct StoreBool {
  bool* out;
  __device__ void operator()(std::int64_t row, int v) const { out[row] = v != 0; }
};
template <class O>
struct StoreMean {
  double* means;
  O* out;  // null unless the op is mean
  double count;
  __device__ void operator()(std::int64_t row, double s) const {
    means[row] = s / count;
    if (out) out[row] = narrow<O>(means[row]);
  }
};
template <class O>
struct StoreVar {
  O* out;
  double count;
  bool std_dev;
  __device__ void operator()(std::int64_t row, double s) const {
    double var = s / count;
    out[row] = narrow<O>(std_dev ? ::sqrt(var) : var);
  }
};

template <class T, Kind K, class Store>
void reduce_rows(cudaStream_t s, const T* x, std::int64_t outer, std::int64_t r, const double* means, void* partial,
                 Store store) {
  const std::int64_t nb = nblocks_of(r);
  if (nb > 0) leaf_kernel<T, K><<<grid_for(outer * nb), kThreads, 0, s>>>(x, outer, r, means, partial);
  combine_kernel<T, K, Store><<<grid_for(outer), kThreads, 0, s>>>(outer, r, partial, store);
}

// First occurrence; a NaN counts as the extreme (reduction.cc arg_extreme).
template <class T>
__global__ void arg_kernel(bool is_max, const T* p, std::int32_t* out, std::int64_t outer, std::int64_t r) {
  using C = Compute<T>;
  SPMD_GRID_LOOP(row, outer) {
    const T* q = p + row * r;
    auto load = [q](std::int64_t i) { return widen(q[i]); };
    out[row] = static_cast<std::int32_t>(rules::arg_extreme<C>(load, r, is_max));
  }
}

template <class T, class O>
__global__ void scan_kernel(bool prod, const T* p, O* out, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  using Acc = std::conditional_t<kFloatT<T>, double, std::int64_t>;
  SPMD_GRID_LOOP(line, outer * inner) {
    std::int64_t o = line / inner, i = line % inner;
    Acc a = prod ? Acc{1} : Acc{0};
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t at = (o * n + k) * inner + i;
      if constexpr (kFloatT<T>) {
        double v = static_cast<double>(widen(p[at]));
        a = prod ? __dmul_rn(a, v) : __dadd_rn(a, v);
      } else {
        auto v = static_cast<std::int64_t>(p[at]);
        a = prod ? wrap_mul64(a, v) : wrap_add64(a, v);
      }
      out[at] = narrow<O>(a);
    }
  }
}

__global__ void matmul_int64_kernel(const std::int64_t* a, const std::int64_t* b, std::int64_t* c,
                                    const std::int64_t* a_off, const std::int64_t* b_off, std::int64_t batches,
                                    std::int64_t m, std::int64_t k, std::int64_t n) {
  SPMD_GRID_LOOP(e, batches * m * n) {
    std::int64_t j = e % n;
    std::int64_t rest = e / n;
    std::int64_t i = rest % m;
    std::int64_t bi = rest / m;
    const std::int64_t* pa = a + a_off[bi] + i * k;
    const std::int64_t* pb = b + b_off[bi] + j;
    std::uint64_t acc = 0;  // wrapping, as the host's int64 accumulation
    for (std::int64_t kk = 0; kk < k; ++kk) {
      acc += static_cast<std::uint64_t>(pa[kk]) * static_cast<std::uint64_t>(pb[kk * n]);
    }
    c[e] = static_cast<std::int64_t>(acc);
  }
}

// data_plane.cc accumulation: halves in float, ints as unsigned (wrapping).
template <class T>
using GroupAcc = std::conditional_t<
    std::is_same_v<T, h16> || std::is_same_v<T, bf16>, float,
    std::conditional_t<std::is_same_v<T, std::int32_t>, std::uint32_t,
                       std::conditional_t<std::is_same_v<T, std::int64_t>, std::uint64_t, T>>>;

template <class A>
__device__ __forceinline__ A quiet_nan() {
  if constexpr (std::is_same_v<A, float>) return __int_as_float(0x7fc00000);
  else return __longlong_as_double(0x7ff8000000000000LL);
}

template <class T>
__global__ void group_reduce_kernel(int op, const void* const* inputs, int g, std::int64_t offset, T* out,
                                    std::int64_t count) {
  using A = GroupAcc<T>;
  constexpr bool wraps = std::is_same_v<A, std::uint32_t> || std::is_same_v<A, std::uint64_t>;
  SPMD_GRID_LOOP(i, count) {
    auto at = [&](int s) -> A {
      T v = static_cast<const T*>(inputs[s])[offset + i];
      if constexpr (std::is_same_v<T, h16> || std::is_same_v<T, bf16>) return widen(v);
      else return static_cast<A>(v);
    };
    A acc = at(0);
    for (int s = 1; s < g; ++s) {
      A b = at(s);
      if (op == 0) {
        acc = static_cast<A>(acc + b);
      } else if constexpr (std::is_same_v<A, bool>) {
        acc = op == 1 ? (acc || b) : (acc && b);
      } else if constexpr (wraps) {
        using S = std::make_signed_t<A>;
        acc = op == 1 ? (static_cast<S>(acc) > static_cast<S>(b) ? acc : b)
                      : (static_cast<S>(acc) < static_cast<S>(b) ? acc : b);
      } else {
        if (m_isnan(acc) || m_isnan(b)) {
          acc = quiet_nan<A>();
        } else {
          acc = op == 1 ? (acc > b ? acc : b) : (acc < b ? acc : b);
        }
      }
    }
    if constexpr (wraps) {
      out[i] = static_cast<T>(static_cast<std::make_signed_t<A>>(acc));
    } else {
      out[i] = narrow<T>(acc);
    }
  }
}

__global__ void spin_kernel(const volatile int* flag) {
  while (*flag == 0) __nanosleep(100000);
}

__global__ void fault_kernel(int* p) { *p = 1; }

}  // namespace

std::size_t reduce_scratch_bytes(std::int64_t outer, std::int64_t r) {
  const std::int64_t nb = nblocks_of(r);
  return static_cast<std::size_t>(outer * (nb > 0 ? nb : 1) + outer) * 8;
}

void reduce(cudaStream_t s, int op_int, DType in, const void* x, DType out_dtype, void* out, std::int64_t outer,
            std::int64_t r, void* scratch) {
  const auto op = static_cast<ReduceOp>(op_int);
  const std::int64_t nb = nblocks_of(r);
  void* partial = scratch;
  double* means = reinterpret_cast<double*>(static_cast<char*>(scratch) + outer * (nb > 0 ? nb : 1) * 8);
  SPMD_DISPATCH_DTYPE(in, T, {
    const T* p = static_cast<const T*>(x);
    using SumOut = std::conditional_t<std::is_same_v<T, bool>, std::int32_t, T>;
    using MomentOut = std::conditional_t<kFloatT<T>, T, float>;
    switch (op) {
      case ReduceOp::kSum:
        reduce_rows<T, Kind::kSum>(s, p, outer, r, nullptr, partial, StoreNarrow<SumOut>{static_cast<SumOut*>(out)});
        break;
      case ReduceOp::kProd:
        reduce_rows<T, Kind::kProd>(s, p, outer, r, nullptr, partial, StoreNarrow<SumOut>{static_cast<SumOut*>(out)});
        break;
      case ReduceOp::kMax:
        reduce_rows<T, Kind::kMax>(s, p, outer, r, nullptr, partial, StoreNarrow<T>{static_cast<T*>(out)});
        break;
      case ReduceOp::kMin:
        reduce_rows<T, Kind::kMin>(s, p, outer, r, nullptr, partial, StoreNarrow<T>{static_cast<T*>(out)});
        break;
      case ReduceOp::kAny:
        reduce_rows<T, Kind::kAny>(s, p, outer, r, nullptr, partial, StoreBool{static_cast<bool*>(out)});
        break;
      case ReduceOp::kAll:
        reduce_rows<T, Kind::kAll>(s, p, outer, r, nullptr, partial, StoreBool{static_cast<bool*>(out)});
        break;
      case ReduceOp::kMean:
      case ReduceOp::kVar:
      case ReduceOp::kStd: {
        const double count = static_cast<double>(r);
        auto* o = static_cast<MomentOut*>(out);
        reduce_rows<T, Kind::kMomentSum>(s, p, outer, r, nullptr, partial,
                                         StoreMean<MomentOut>{means, op == ReduceOp::kMean ? o : nullptr, count});
        if (op != ReduceOp::kMean) {
          reduce_rows<T, Kind::kMomentSq>(s, p, outer, r, means, partial,
                                          StoreVar<MomentOut>{o, count, op == ReduceOp::kStd});
        }
        break;
      }
      case ReduceOp::kArgMax:
      case ReduceOp::kArgMin:
        arg_kernel<T><<<grid_for(outer), kThreads, 0, s>>>(op == ReduceOp::kArgMax, p, static_cast<std::int32_t*>(out),
                                                           outer, r);
        break;
    }
  });
  (void)out_dtype;
}

void scan(cudaStream_t s, bool prod, DType in, const void* x, DType out_dtype, void* out, std::int64_t outer,
          std::int64_t n, std::int64_t inner) {
  SPMD_DISPATCH_DTYPE(in, T, {
    using O = std::conditional_t<std::is_same_v<T, bool>, std::int32_t, T>;
    scan_kernel<T, O><<<grid_for(outer * inner), kThreads, 0, s>>>(prod, static_cast<const T*>(x),
                                                                    static_cast<O*>(out), outer, n, inner);
  });
  (void)out_dtype;
}

void matmul_int64(cudaStream_t s, const std::int64_t* a, const std::int64_t* b, std::int64_t* c,
                  const std::int64_t* a_off, const std::int64_t* b_off, std::int64_t batches, std::int64_t m,
                  std::int64_t k, std::int64_t n) {
  matmul_int64_kernel<<<grid_for(batches * m * n), kThreads, 0, s>>>(a, b, c, a_off, b_off, batches, m, k, n);
}

void group_reduce(cudaStream_t s, int op, DType dtype, const void* const* inputs, int g, std::int64_t offset,
                  void* out, std::int64_t count) {
  SPMD_DISPATCH_DTYPE(dtype, T,
                      group_reduce_kernel<T><<<grid_for(count), kThreads, 0, s>>>(op, inputs, g, offset,
                                                                                   static_cast<T*>(out), count));
}

void spin_until(cudaStream_t s, const volatile int* flag) { spin_kernel<<<1, 1, 0, s>>>(flag); }

void fault(cudaStream_t s) { fault_kernel<<<1, 1, 0, s>>>(reinterpret_cast<int*>(16)); }

}  // namespace spmd::cuda::kernels
