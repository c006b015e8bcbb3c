#include "backend/cuda/cuda_ops.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cuda/cublas_library.h"
#include "backend/cuda/device_resources.h"
#include "backend/cuda/kernels/kernels.h"
#include "backend/cuda/nccl_check.h"
#include "backend/cuda/watchdog.h"
#include "core/element_access.h"
#include "core/strided_walk.h"
#include "spmd/error.h"

namespace spmd::cuda {

namespace {

using detail::Operand;
using detail::Output;
using detail::Strides;

static_assert(kernels::kMaxOperands >= 4);

// The device's resources, current on this thread for the scope.
class On {
 public:
  On(DeviceId device, std::string op) : res_(DeviceTable::instance().at(device)), guard_(res_->ordinal), op_(std::move(op)) {}
  cudaStream_t stream() const { return res_->stream; }
  ErrorSite site() const { return ErrorSite{res_->device, op_}; }
  const DeviceResources& res() const { return *res_; }
  /// The device's cuBLAS handle (made at the first product), on this op's stream.
  cublasHandle_t blas() {
    const CublasLibrary& lib = cublas(op_);
    std::call_once(res_->blas_once, [&] {
      SPMD_CUBLAS_CHECK(lib.create(&res_->blas), site());
      // Products in true float32 (no TF32 tensor-core rounding), as the host
      // computes them.
      SPMD_CUBLAS_CHECK(lib.set_math_mode(res_->blas, CUBLAS_DEFAULT_MATH), site());
    });
    SPMD_CUBLAS_CHECK(lib.set_stream(res_->blas, res_->stream), site());
    return res_->blas;
  }
  // Checks the launches just made.
  void check_launch() const { SPMD_CUDA_CHECK(cudaGetLastError(), site()); }
  void* scratch(std::size_t bytes) {
    void* p = nullptr;
    SPMD_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes == 0 ? 256 : bytes, res_->pool, res_->stream), site());
    scratch_.push_back(p);
    return p;
  }
  ~On() {
    for (void* p : scratch_) cudaFreeAsync(p, res_->stream);
  }

 private:
  std::shared_ptr<DeviceResources> res_;
  DeviceGuard guard_;
  std::string op_;
  std::vector<void*> scratch_;
};

template <std::size_t N>
kernels::StridedDims dims_of(const Shape& shape, const std::array<std::vector<std::int64_t>, N>& strides,
                             std::string_view op) {
  auto loop = detail::make_strided_loop<N>(shape, strides);
  if (loop.shape.size() > static_cast<std::size_t>(kernels::kMaxDims)) {
    Report r = make_report("BackendError",
                           std::string(op) + ": " + std::to_string(loop.shape.size()) +
                               " non-contiguous dimensions remain after merging; the cuda kernels take at most " +
                               std::to_string(kernels::kMaxDims),
                           "reshape the operands to fewer dimensions");
    r.op = std::string(op);
    throw BackendError(std::move(r));
  }
  kernels::StridedDims d;
  d.ndim = static_cast<int>(loop.shape.size());
  for (int i = 0; i < d.ndim; ++i) {
    d.shape[i] = loop.shape[static_cast<std::size_t>(i)];
    for (std::size_t k = 0; k < N; ++k) d.strides[k][i] = loop.strides[k][static_cast<std::size_t>(i)];
  }
  return d;
}

bool is_predicate(UnaryOp op) {
  return op == UnaryOp::kLogicalNot || op == UnaryOp::kIsNan || op == UnaryOp::kIsInf || op == UnaryOp::kIsFinite;
}

void wait_for(const On& on, std::string_view what) {
  auto policy = DeviceTable::instance().policy();
  WaitPolicy fallback;
  wait_streams({StreamRef{on.res().device, on.res().ordinal, on.stream()}}, {}, what, policy ? *policy : fallback);
}

class CudaDeviceOps final : public detail::DeviceOps {
 public:
  std::string_view name() const override { return "cuda"; }

  void copy_rows(DeviceId device, detail::CopyKind kind, void* dst, std::size_t dst_pitch, const void* src,
                 std::size_t src_pitch, std::size_t width, std::size_t rows) override {
    if (width == 0 || rows == 0) return;
    On on(device, kind == detail::CopyKind::kDeviceToHost   ? "download to the host"
                  : kind == detail::CopyKind::kHostToDevice ? "upload from the host"
                                                            : "device copy");
    // A download waits for the stream's work first, under the watchdog, so
    // the copy itself cannot block on a stuck kernel.
    if (kind == detail::CopyKind::kDeviceToHost) wait_for(on, "download to the host");
    if (rows == 1 || (dst_pitch == width && src_pitch == width)) {
      SPMD_CUDA_CHECK(cudaMemcpyAsync(dst, src, width * rows, cudaMemcpyDefault, on.stream()), on.site());
    } else {
      SPMD_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDefault, on.stream()),
                      on.site());
    }
    if (kind == detail::CopyKind::kDeviceToHost) wait_for(on, "download to the host");
  }

  void fill(DeviceId device, Output out, std::int64_t n, double value) override {
    On on(device, "fill");
    std::uint64_t bits = 0;
    detail::visit_dtype(out.dtype, [&](auto tag) {
      using T = decltype(tag);
      T v = detail::narrow<T>(value);
      std::memcpy(&bits, &v, sizeof v);
    });
    kernels::fill(on.stream(), dtype_size(out.dtype), out.data, n, bits);
    on.check_launch();
  }

  void unary(DeviceId device, UnaryOp op, Operand x, Output out, std::int64_t n) override {
    On on(device, std::string(op_name(op)));
    kernels::unary(on.stream(), static_cast<int>(op), x.dtype, x.data, out.data, is_predicate(op), n);
    on.check_launch();
  }

  void binary(DeviceId device, BinaryOp op, Operand a, const Strides& as, Operand b, const Strides& bs, Output out,
              const Shape& shape) override {
    On on(device, std::string(op_name(op)));
    auto d = dims_of<3>(shape, {row_major_strides(shape), as, bs}, op_name(op));
    kernels::binary(on.stream(), static_cast<int>(op), a.dtype, a.data, b.data, out.data,
                    out.dtype == DType::kBool, d, num_elements(shape));
    on.check_launch();
  }

  void where(DeviceId device, Operand c, const Strides& cs, Operand x, const Strides& xs, Operand y, const Strides& ys,
             Output out, const Shape& shape) override {
    On on(device, "where");
    auto d = dims_of<4>(shape, {row_major_strides(shape), cs, xs, ys}, "where");
    kernels::where(on.stream(), out.dtype, c.data, x.data, y.data, out.data, d, num_elements(shape));
    on.check_launch();
  }

  void astype(DeviceId device, Operand x, Output out, std::int64_t n) override {
    On on(device, "astype");
    kernels::astype(on.stream(), x.dtype, x.data, out.dtype, out.data, n);
    on.check_launch();
  }

  void strided_copy(DeviceId device, Operand x, std::int64_t offset, const Strides& strides, Output out,
                    const Shape& shape) override {
    On on(device, "strided copy");
    auto d = dims_of<2>(shape, {row_major_strides(shape), strides}, "strided copy");
    kernels::strided_copy(on.stream(), dtype_size(x.dtype), x.data, offset, out.data, d, num_elements(shape));
    on.check_launch();
  }

  void index_update(DeviceId device, Output out, std::int64_t offset, const Shape& shape, const Strides& out_strides,
                    Operand value, const Strides& value_strides, UpdateMode mode) override {
    On on(device, "index update");
    auto d = dims_of<2>(shape, {out_strides, value_strides}, "index update");
    kernels::index_update(on.stream(), out.dtype, out.data, offset, value.data, static_cast<int>(mode), d,
                          num_elements(shape));
    on.check_launch();
  }

  void take(DeviceId device, Operand x, Operand indices, std::int64_t count, Output out, std::int64_t outer,
            std::int64_t n, std::int64_t inner) override {
    On on(device, "take");
    kernels::take(on.stream(), dtype_size(x.dtype), x.data, indices.dtype, indices.data, count, out.data, outer, n,
                  inner);
    on.check_launch();
  }

  void reduce(DeviceId device, ReduceOp op, Operand x, Output out, std::int64_t outer, std::int64_t r) override {
    On on(device, std::string(op_name(op)));
    void* scratch = on.scratch(kernels::reduce_scratch_bytes(outer, r));
    kernels::reduce(on.stream(), static_cast<int>(op), x.dtype, x.data, out.dtype, out.data, outer, r, scratch);
    on.check_launch();
  }

  void scan(DeviceId device, bool prod, Operand x, Output out, std::int64_t outer, std::int64_t n,
            std::int64_t inner) override {
    On on(device, prod ? "cumprod" : "cumsum");
    kernels::scan(on.stream(), prod, x.dtype, x.data, out.dtype, out.data, outer, n, inner);
    on.check_launch();
  }

  void matmul(DeviceId device, Operand a, Operand b, Output out, const Strides& a_off, const Strides& b_off,
              std::int64_t m, std::int64_t k, std::int64_t n) override {
    On on(device, "matmul");
    const auto batches = static_cast<std::int64_t>(a_off.size());
    std::int64_t a_count = 0, b_count = 0;
    for (std::size_t i = 0; i < a_off.size(); ++i) {
      a_count = std::max(a_count, a_off[i] + m * k);
      b_count = std::max(b_count, b_off[i] + k * n);
    }
    if (batches == 0 || m == 0 || n == 0) return;
    if (is_floating(out.dtype)) {
      float_matmul(on, a, b, out, a_off, b_off, a_count, b_count, m, k, n);
    } else {
      integer_matmul(on, a, b, out, a_off, b_off, a_count, b_count, m, k, n);
    }
    on.check_launch();
  }

 private:
  // Floats on cuBLAS in the result's precision, as JAX computes on a GPU:
  // float32 in float32 (float16 and bfloat16 through float32, as on the
  // host), float64 in float64. The summation order is cuBLAS's, so results
  // agree with the host's OpenBLAS within float32 rounding, not bit for bit;
  // run to run on one GPU they are the same (one handle and stream per device).
  static void float_matmul(On& on, Operand a, Operand b, Output out, const Strides& a_off, const Strides& b_off,
                           std::int64_t a_count, std::int64_t b_count, std::int64_t m, std::int64_t k,
                           std::int64_t n) {
    const auto batches = static_cast<std::int64_t>(a_off.size());
    const std::int64_t limit = std::numeric_limits<int>::max();
    if (m > limit || k > limit || n > limit || batches > limit) {
      Report r = make_report("BackendError",
                             "matmul: " + std::to_string(batches) + " products of " + std::to_string(m) + "x" +
                                 std::to_string(k) + " by " + std::to_string(k) + "x" + std::to_string(n) +
                                 " exceed cuBLAS's int dimensions",
                             "split the product into smaller ones");
      r.op = "matmul";
      throw BackendError(std::move(r));
    }
    const DType compute = out.dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    const std::size_t width = dtype_size(compute);
    auto in_compute_dtype = [&](Operand x, std::int64_t count) -> const char* {
      if (x.dtype == compute) return static_cast<const char*>(x.data);
      void* w = on.scratch(static_cast<std::size_t>(count) * width);
      if (count > 0) kernels::astype(on.stream(), x.dtype, x.data, compute, w, count);
      return static_cast<const char*>(w);
    };
    const char* pa = in_compute_dtype(a, a_count);
    const char* pb = in_compute_dtype(b, b_count);
    const std::size_t out_bytes = static_cast<std::size_t>(batches * m * n) * width;
    char* pc = static_cast<char*>(out.dtype == compute ? out.data : on.scratch(out_bytes));
    if (k == 0) {
      SPMD_CUDA_CHECK(cudaMemsetAsync(pc, 0, out_bytes, on.stream()), on.site());
    } else {
      // cuBLAS is column-major: the row-major C = A B is C^T = B^T A^T there,
      // with B's rows as its leading dimension. One pointer triple per batch
      // (broadcast operands repeat their offsets).
      std::vector<const void*> pointers(static_cast<std::size_t>(3 * batches));
      for (std::int64_t i = 0; i < batches; ++i) {
        pointers[static_cast<std::size_t>(i)] = pb + static_cast<std::size_t>(b_off[static_cast<std::size_t>(i)]) * width;
        pointers[static_cast<std::size_t>(batches + i)] =
            pa + static_cast<std::size_t>(a_off[static_cast<std::size_t>(i)]) * width;
        pointers[static_cast<std::size_t>(2 * batches + i)] = pc + static_cast<std::size_t>(i * m * n) * width;
      }
      auto* device_pointers = static_cast<const void**>(on.scratch(pointers.size() * sizeof(void*)));
      SPMD_CUDA_CHECK(cudaMemcpyAsync(device_pointers, pointers.data(), pointers.size() * sizeof(void*),
                                      cudaMemcpyHostToDevice, on.stream()),
                      on.site());
      const void** bs = device_pointers;
      const void** as = device_pointers + batches;
      void** cs = const_cast<void**>(device_pointers + 2 * batches);
      cublasHandle_t h = on.blas();
      const CublasLibrary& lib = cublas("matmul");
      const int im = static_cast<int>(m), ik = static_cast<int>(k), in = static_cast<int>(n);
      const int count = static_cast<int>(batches);
      if (compute == DType::kFloat32) {
        const float one = 1, zero = 0;
        SPMD_CUBLAS_CHECK(lib.sgemm_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &one,
                                             reinterpret_cast<const float* const*>(bs), in,
                                             reinterpret_cast<const float* const*>(as), ik, &zero,
                                             reinterpret_cast<float* const*>(cs), in, count),
                          on.site());
      } else {
        const double one = 1, zero = 0;
        SPMD_CUBLAS_CHECK(lib.dgemm_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &one,
                                             reinterpret_cast<const double* const*>(bs), in,
                                             reinterpret_cast<const double* const*>(as), ik, &zero,
                                             reinterpret_cast<double* const*>(cs), in, count),
                          on.site());
      }
    }
    if (out.dtype != compute) kernels::astype(on.stream(), compute, pc, out.dtype, out.data, batches * m * n);
  }

  // Integers (and booleans): exact, widened to int64, k ascending, then
  // narrowed, as on the host.
  static void integer_matmul(On& on, Operand a, Operand b, Output out, const Strides& a_off, const Strides& b_off,
                             std::int64_t a_count, std::int64_t b_count, std::int64_t m, std::int64_t k,
                             std::int64_t n) {
    const auto batches = static_cast<std::int64_t>(a_off.size());
    const DType acc = DType::kInt64;
    void* wa = on.scratch(static_cast<std::size_t>(a_count) * 8);
    void* wb = on.scratch(static_cast<std::size_t>(b_count) * 8);
    void* wc = on.scratch(static_cast<std::size_t>(batches * m * n) * 8);
    auto* offs = static_cast<std::int64_t*>(on.scratch(static_cast<std::size_t>(2 * batches) * 8));
    std::vector<std::int64_t> host_offs(a_off.begin(), a_off.end());
    host_offs.insert(host_offs.end(), b_off.begin(), b_off.end());
    SPMD_CUDA_CHECK(cudaMemcpyAsync(offs, host_offs.data(), host_offs.size() * 8, cudaMemcpyHostToDevice, on.stream()),
                    on.site());
    if (a_count > 0) kernels::astype(on.stream(), a.dtype, a.data, acc, wa, a_count);
    if (b_count > 0) kernels::astype(on.stream(), b.dtype, b.data, acc, wb, b_count);
    kernels::matmul_int64(on.stream(), static_cast<const std::int64_t*>(wa), static_cast<const std::int64_t*>(wb),
                          static_cast<std::int64_t*>(wc), offs, offs + batches, batches, m, k, n);
    kernels::astype(on.stream(), acc, wc, out.dtype, out.data, batches * m * n);
  }
};

}  // namespace

detail::DeviceOps& cuda_device_ops() {
  static CudaDeviceOps ops;
  return ops;
}

}  // namespace spmd::cuda
