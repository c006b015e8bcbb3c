// psum / pmean / pmax / pmin against a plain sequential reference.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "support/spawn.h"

using namespace spmd;
using namespace spmd::testing;

namespace {

// Value of element k on device d: distinct, not exactly representable sums.
double value(int d, std::int64_t k) { return 0.1 * (d + 1) + 0.37 * static_cast<double>(k) - 1.5 * (d % 3); }

Array inputs(int n, std::int64_t per, DType dtype) {
  std::vector<double> v;
  for (int d = 0; d < n; ++d) {
    for (std::int64_t k = 0; k < per; ++k) {
      double x = value(d, k);
      v.push_back(is_floating(dtype) ? x : std::floor(x * 10));
    }
  }
  return Array::from_doubles(v, {n, per}, dtype);
}

// Sequential reference in the dtype's accumulation type (float for float32
// and the halves, double for float64, wrapping ints).
std::vector<double> reference(CollectiveKind kind, const Array& x, int n, std::int64_t per) {
  std::vector<double> out;
  auto in = x.to_doubles();
  for (std::int64_t k = 0; k < per; ++k) {
    if (x.dtype() == DType::kFloat64) {
      double acc = in[static_cast<std::size_t>(k)];
      for (int d = 1; d < n; ++d) {
        double v = in[static_cast<std::size_t>(d * per + k)];
        acc = kind == CollectiveKind::kPmax ? std::max(acc, v) : kind == CollectiveKind::kPmin ? std::min(acc, v) : acc + v;
      }
      out.push_back(kind == CollectiveKind::kPmean ? acc / n : acc);
    } else if (is_floating(x.dtype())) {
      float acc = static_cast<float>(in[static_cast<std::size_t>(k)]);
      for (int d = 1; d < n; ++d) {
        float v = static_cast<float>(in[static_cast<std::size_t>(d * per + k)]);
        acc = kind == CollectiveKind::kPmax ? std::max(acc, v) : kind == CollectiveKind::kPmin ? std::min(acc, v) : acc + v;
      }
      if (kind == CollectiveKind::kPmean) {
        // Halves, as JAX: the sum rounded to the operand's type, then divided.
        if (x.dtype() != DType::kFloat32) acc = static_cast<float>(Array::scalar(acc, x.dtype()).element_as_double(0));
        acc = acc / static_cast<float>(n);
      }
      // Round to the storage type as the runtime does.
      out.push_back(Array::scalar(acc, x.dtype()).element_as_double(0));
    } else {
      std::int64_t acc = static_cast<std::int64_t>(in[static_cast<std::size_t>(k)]);
      for (int d = 1; d < n; ++d) {
        std::int64_t v = static_cast<std::int64_t>(in[static_cast<std::size_t>(d * per + k)]);
        acc = kind == CollectiveKind::kPmax ? std::max(acc, v) : kind == CollectiveKind::kPmin ? std::min(acc, v) : acc + v;
      }
      out.push_back(kind == CollectiveKind::kPmean ? static_cast<double>(static_cast<float>(static_cast<double>(acc) / n))
                                                   : static_cast<double>(acc));
    }
  }
  return out;
}

Array call(CollectiveKind kind, const Array& x) {
  switch (kind) {
    case CollectiveKind::kPsum: return psum(x, "i");
    case CollectiveKind::kPmean: return pmean(x, "i");
    case CollectiveKind::kPmax: return pmax(x, "i");
    default: return pmin(x, "i");
  }
}

}  // namespace

TEST_CASE("collectives::reduce: every reduction matches the sequential reference", "[collectives]") {
  auto kind = GENERATE(CollectiveKind::kPsum, CollectiveKind::kPmean, CollectiveKind::kPmax, CollectiveKind::kPmin);
  auto dtype = GENERATE(DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64);
  // The data plane folds members four at a time and the rest one by one:
  // 5 and 13 are whole blocks after the first member, 8 a block and a tail.
  auto n = GENERATE(1, 2, 3, 5, 8, 13);
  auto per = GENERATE(std::int64_t{0}, std::int64_t{1}, std::int64_t{4}, std::int64_t{1000});
  Runtime rt({.devices = 16});
  Array x = inputs(n, per, dtype);
  auto out = run_on(rt, n, {x}, [&](std::span<const Array> a) { return std::vector<Array>{call(kind, a[0])}; });
  INFO(collective_name(kind) << " " << dtype_name(dtype) << " n=" << n << " per=" << per);
  DType expected_dtype = (kind == CollectiveKind::kPmean && is_integer(dtype)) ? DType::kFloat32 : dtype;
  REQUIRE(out[0].dtype() == expected_dtype);
  REQUIRE(out[0].shape() == Shape{n, per});
  auto ref = reference(kind, x, n, per);
  for (int d = 0; d < n; ++d) REQUIRE(row(out[0], d) == ref);
}

TEST_CASE("collectives::reduce: psum of bool counts trues as int32, pmax of bool is any", "[collectives]") {
  Runtime rt({.devices = 4});
  Array x = Array::from_bools(std::vector<bool>{true, false, true, true, false, false, true, false}, {4, 2});
  auto out = run_on(rt, 4, {x}, [](std::span<const Array> a) {
    return std::vector<Array>{psum(a[0], "i"), pmax(a[0], "i"), pmin(a[0], "i")};
  });
  REQUIRE(out[0].dtype() == DType::kInt32);
  REQUIRE(row(out[0], 2) == std::vector<double>{3, 1});
  REQUIRE(out[1].dtype() == DType::kBool);
  REQUIRE(row(out[1], 0) == std::vector<double>{1, 1});
  REQUIRE(row(out[2], 3) == std::vector<double>{0, 0});
}

TEST_CASE("collectives::reduce: large psum (parallel path) equals the serial reference bit for bit", "[collectives]") {
  Runtime rt({.devices = 4});
  const std::int64_t per = 1 << 18;  // 1 MiB of float32 per device
  Array x = inputs(4, per, DType::kFloat32);
  auto out = run_on(rt, 4, {x}, [](std::span<const Array> a) { return std::vector<Array>{psum(a[0], "i")}; });
  auto ref = reference(CollectiveKind::kPsum, x, 4, per);
  REQUIRE(row(out[0], 0) == ref);
  REQUIRE(row(out[0], 3) == ref);
}

TEST_CASE("collectives::reduce: outputs written past the caches (>= 16 MiB in all) are exact", "[collectives]") {
  // 4 outputs of a little over 4 MiB each: the data plane writes them with
  // non-temporal stores; an odd length covers the unaligned tail.
  auto kind = GENERATE(CollectiveKind::kPsum, CollectiveKind::kPmax);
  auto dtype = GENERATE(DType::kFloat32, DType::kFloat64);
  const std::int64_t per = (std::int64_t{4} << 20) / static_cast<std::int64_t>(dtype_size(dtype)) + 13;
  Runtime rt({.devices = 4});
  Array x = inputs(4, per, dtype);
  auto out = run_on(rt, 4, {x}, [&](std::span<const Array> a) { return std::vector<Array>{call(kind, a[0])}; });
  INFO(collective_name(kind) << " " << dtype_name(dtype));
  auto ref = reference(kind, x, 4, per);
  for (int d = 0; d < 4; ++d) {
    // The first differing element, not a million-element dump, on failure.
    auto got = row(out[0], d);
    REQUIRE(got.size() == ref.size());
    auto diff = std::mismatch(got.begin(), got.end(), ref.begin());
    INFO("device " << d << ", first difference at element " << (diff.first - got.begin()));
    REQUIRE(diff.first == got.end());
  }
}

TEST_CASE("collectives::reduce: pmean of halves overflows where their psum does, as in JAX", "[collectives]") {
  // Real JAX 0.8.1 on 2 CPU devices: pmean of [[60000, 1], [60000, 2]] in
  // float16 is [inf, 1.5] (psum, then a divide in float16); bfloat16's range
  // ends near 3.39e38.
  auto dtype = GENERATE(DType::kFloat16, DType::kBFloat16);
  const double big = dtype == DType::kFloat16 ? 60000 : 2e38;
  Runtime rt({.devices = 2});
  const std::vector<double> values{big, 1, big, 2};
  Array x = Array::from_doubles(values, {2, 2}, dtype);
  auto out = run_on(rt, 2, {x}, [](std::span<const Array> a) { return std::vector<Array>{pmean(a[0], "i")}; });
  INFO(dtype_name(dtype));
  REQUIRE(out[0].dtype() == dtype);
  for (int d = 0; d < 2; ++d) {
    auto r = row(out[0], d);
    REQUIRE(std::isinf(r[0]));
    REQUIRE(r[0] > 0);
    REQUIRE(r[1] == 1.5);
  }
}

TEST_CASE("collectives::reduce: integer psum wraps around like XLA", "[collectives]") {
  Runtime rt({.devices = 2});
  Array x = Array::from_int64s(std::vector<std::int64_t>{2147483647, 1}, {2}, DType::kInt32);
  auto out = run_on(rt, 2, {x}, [](std::span<const Array> a) { return std::vector<Array>{psum(a[0], "i")}; });
  REQUIRE(out[0].to_int64s() == std::vector<std::int64_t>{-2147483648LL, -2147483648LL});
}

TEST_CASE("collectives::reduce: pytree psum meets once and keeps weak types", "[collectives]") {
  Runtime rt({.devices = 3});
  auto out = run_on(rt, 3, {}, [](std::span<const Array>) {
    std::vector<Array> xs = {axis_index("i"), Array::scalar(1.5, DType::kFloat32, /*weak=*/true)};
    return psum(std::span<const Array>(xs), "i", {}, SourceLoc{});
  });
  REQUIRE(out[0].to_doubles() == std::vector<double>{3, 3, 3});
  REQUIRE(out[1].to_doubles() == std::vector<double>{4.5, 4.5, 4.5});
  REQUIRE(out[1].weak_type());
  REQUIRE_FALSE(out[0].weak_type());
}

TEST_CASE("collectives::reduce: axis_index_groups reduce within each group", "[collectives]") {
  Runtime rt({.devices = 4});
  Array x = f32({1, 2, 3, 4}, {4});
  auto out = run_on(rt, 4, {x}, [](std::span<const Array> a) {
    return std::vector<Array>{psum(a[0], "i", {{0, 2}, {1, 3}})};
  });
  REQUIRE(out[0].to_doubles() == std::vector<double>{4, 6, 4, 6});
}
