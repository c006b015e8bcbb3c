#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/format.h"
#include "spmd/core/layout.h"
#include "unit/core/core_test_util.h"

using namespace spmd;
using namespace spmd::test;

namespace {
const double kFormatNan = std::numeric_limits<double>::quiet_NaN();
const double kFormatInf = std::numeric_limits<double>::infinity();
std::string str_f32(std::vector<double> v) { return to_string(arr(std::move(v))); }
std::string str_f64(std::vector<double> v) { return to_string(arr(std::move(v), DType::kFloat64)); }
}  // namespace

TEST_CASE("core::format: integers pad to a common width", "[format]") {
  REQUIRE(to_string(iarr({6, 8, 10})) == "[ 6  8 10]");
  REQUIRE(to_string(reshape(arange(6), {2, 3})) == "[[0 1 2]\n [3 4 5]]");
  REQUIRE(to_string(iarr({-1, 10, 200}, DType::kInt64)) == "[ -1  10 200]");
  REQUIRE(to_string(iarr({-100, 5})) == "[-100    5]");
  REQUIRE(to_string(reshape(arange(8), {2, 2, 2})) == "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
}

TEST_CASE("core::format: floats use the shortest digits, padded alike", "[format]") {
  REQUIRE(str_f32({0, 0.5, 1}) == "[0.  0.5 1. ]");
  REQUIRE(str_f32({1, 2.5}) == "[1.  2.5]");
  REQUIRE(str_f32({0.1, 0.2}) == "[0.1 0.2]");
  REQUIRE(str_f32({0.5, 0.25}) == "[0.5  0.25]");
  REQUIRE(str_f32({1.0 / 3}) == "[0.33333334]");
  REQUIRE(str_f64({1.0 / 3, 2.0 / 3}) == "[0.33333333 0.66666667]");
  REQUIRE(str_f64({0.1 + 0.2}) == "[0.3]");
  REQUIRE(str_f64({1.23456789012, 2.0}) == "[1.23456789 2.        ]");
  REQUIRE(str_f32({-1, 2}) == "[-1.  2.]");
  REQUIRE(str_f32({-0.0, 1}) == "[-0.  1.]");
  REQUIRE(str_f32({12345678}) == "[12345678.]");
  REQUIRE(to_string(eye(3)) == "[[1. 0. 0.]\n [0. 1. 0.]\n [0. 0. 1.]]");
  REQUIRE(to_string(reshape(arr({1.5, -2, 3.25, 4}), {2, 2})) == "[[ 1.5  -2.  ]\n [ 3.25  4.  ]]");
}

TEST_CASE("core::format: scientific notation when magnitudes span too far", "[format]") {
  REQUIRE(str_f32({1e-5, 1}) == "[1.e-05 1.e+00]");
  REQUIRE(str_f32({1.5e-5, 1}) == "[1.5e-05 1.0e+00]");
  REQUIRE(str_f64({1e8}) == "[1.e+08]");
  REQUIRE(str_f64({0.001, 10}) == "[1.e-03 1.e+01]");
  REQUIRE(str_f64({0.001, 1}) == "[0.001 1.   ]");  // ratio exactly 1000 stays positional
  REQUIRE(str_f32({-1e-5, 1}) == "[-1.e-05  1.e+00]");
  REQUIRE(str_f64({1e100, 1}) == "[1.e+100 1.e+000]");
  REQUIRE(str_f64({1.0 / 3 * 1e-5, 1}) == "[3.33333333e-06 1.00000000e+00]");
  REQUIRE(str_f32({0, 1e-5}) == "[0.e+00 1.e-05]");
}

TEST_CASE("core::format: nan and inf", "[format]") {
  REQUIRE(str_f32({kFormatNan, 1}) == "[nan  1.]");
  REQUIRE(str_f32({1, -kFormatInf, kFormatNan}) == "[  1. -inf  nan]");
  REQUIRE(str_f32({kFormatNan, kFormatInf}) == "[nan inf]");
  REQUIRE(str_f32({0.5, kFormatInf}) == "[0.5 inf]");
  REQUIRE(str_f32({kFormatNan, 1e-5}) == "[   nan 1.e-05]");
}

TEST_CASE("core::format: bools and scalars", "[format]") {
  REQUIRE(to_string(barr({true, false})) == "[ True False]");
  REQUIRE(to_string(barr({true, true})) == "[ True  True]");
  REQUIRE(to_string(Array::scalar(5.0, DType::kFloat32)) == "5.0");
  REQUIRE(to_string(Array::scalar(0.1, DType::kFloat32)) == "0.1");
  REQUIRE(to_string(Array::scalar_int(5)) == "5");
  REQUIRE(to_string(Array::scalar_int(1, DType::kBool)) == "True");
  REQUIRE(to_string(arr({5})) == "[5.]");
}

TEST_CASE("core::format: format_scalar prints as Python prints numpy scalars", "[format]") {
  auto f32 = [](double v) { return format_scalar(Array::scalar(v, DType::kFloat32), 0); };
  auto f64 = [](double v) { return format_scalar(Array::scalar(v, DType::kFloat64), 0); };
  REQUIRE(f32(0.1) == "0.1");
  REQUIRE(f64(0.1) == "0.1");
  REQUIRE(f32(5) == "5.0");
  REQUIRE(f32(-0.0) == "-0.0");
  REQUIRE(f32(1e-5) == "1e-05");
  REQUIRE(f64(1.5e20) == "1.5e+20");
  REQUIRE(f64(1e16) == "1e+16");
  REQUIRE(f64(1e15) == "1000000000000000.0");
  REQUIRE(f64(0.0001) == "0.0001");
  REQUIRE(f32(123456789) == "123456790.0");
  REQUIRE(f32(1.0 / 3) == "0.33333334");
  REQUIRE(f64(1.0 / 3) == "0.3333333333333333");
  REQUIRE(f32(kFormatNan) == "nan");
  REQUIRE(f64(-kFormatInf) == "-inf");
  REQUIRE(format_scalar(iarr({3, -7}), 1) == "-7");
  REQUIRE(format_scalar(barr({false, true}), 1) == "True");
  REQUIRE(format_scalar(Array::scalar(0.1, DType::kFloat16), 0) == "0.1");
  REQUIRE(format_scalar(Array::scalar(1.0 / 3, DType::kFloat16), 0) == "0.3333");
  REQUIRE(format_scalar(Array::scalar(65504, DType::kFloat16), 0) == "65500.0");
  REQUIRE(format_scalar(Array::scalar(0.1, DType::kBFloat16), 0) == "0.100098");
  REQUIRE(format_scalar(Array::scalar(3, DType::kBFloat16), 0) == "3");
  REQUIRE(error_of([] { format_scalar(iarr({1}), 1); }).kind == "IndexError");
}

TEST_CASE("core::format: float16 and bfloat16 arrays", "[format]") {
  REQUIRE(to_string(arr({0.1, 0.2}, DType::kFloat16)) == "[0.1 0.2]");
  REQUIRE(to_string(arr({1.0 / 3}, DType::kFloat16)) == "[0.3333]");
  Array h = arr({0.1}, DType::kFloat16) + arr({0.2}, DType::kFloat16);
  REQUIRE(to_string(h) == "[0.2998]");
  // ml_dtypes prints bfloat16 elements with ostream defaults and no padding
  REQUIRE(to_string(arr({1, 2.5, 0.1}, DType::kBFloat16)) == "[1 2.5 0.100098]");
  REQUIRE(repr(arr({1, 2, 3}, DType::kBFloat16)) == "Array([1, 2, 3], dtype=bfloat16)");
  REQUIRE(to_string(arr({17179869184.0}, DType::kBFloat16)) == "[1.71799e+10]");  // 2**34
}

TEST_CASE("core::format: long rows wrap at 75 columns", "[format]") {
  REQUIRE(to_string(arange(30)) ==
          "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
          " 24 25 26 27 28 29]");
  REQUIRE(repr(arange(30)) ==
          "Array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,\n"
          "       17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], dtype=int32)");
}

TEST_CASE("core::format: large arrays are summarised with ...", "[format]") {
  REQUIRE(to_string(arange(2000)) == "[   0    1    2 ... 1997 1998 1999]");
  REQUIRE(to_string(reshape(arange(2000), {100, 20})) ==
          "[[   0    1    2 ...   17   18   19]\n"
          " [  20   21   22 ...   37   38   39]\n"
          " [  40   41   42 ...   57   58   59]\n"
          " ...\n"
          " [1940 1941 1942 ... 1957 1958 1959]\n"
          " [1960 1961 1962 ... 1977 1978 1979]\n"
          " [1980 1981 1982 ... 1997 1998 1999]]");
  REQUIRE(to_string(arange(0, 2000, 1, DType::kFloat32)) ==
          "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
  REQUIRE(repr(arange(1001)) == "Array([   0,    1,    2, ...,  998,  999, 1000], dtype=int32)");
  REQUIRE(to_string(arange(1000)).find("...") == std::string::npos);
}

TEST_CASE("core::format: repr matches JAX", "[format]") {
  REQUIRE(repr(iarr({6, 8, 10})) == "Array([ 6,  8, 10], dtype=int32)");
  REQUIRE(repr(arr({0, 1})) == "Array([0., 1.], dtype=float32)");
  REQUIRE(repr(Array::scalar(5.0, DType::kFloat32, true)) == "Array(5., dtype=float32, weak_type=True)");
  REQUIRE(repr(Array::scalar(5.0, DType::kFloat32)) == "Array(5., dtype=float32)");
  REQUIRE(repr(Array::scalar_int(3, DType::kInt32, true)) == "Array(3, dtype=int32, weak_type=True)");
  REQUIRE(repr(Array::scalar_int(1, DType::kBool)) == "Array(True, dtype=bool)");
  REQUIRE(repr(barr({true, false})) == "Array([ True, False], dtype=bool)");
  REQUIRE(repr(reshape(arange(6), {2, 3})) == "Array([[0, 1, 2],\n       [3, 4, 5]], dtype=int32)");
  REQUIRE(repr(reshape(arange(0, 8, 1, DType::kInt64), {2, 2, 2})) ==
          "Array([[[0, 1],\n        [2, 3]],\n\n       [[4, 5],\n        [6, 7]]], dtype=int64)");
  REQUIRE(repr(zeros({0})) == "Array([], shape=(0,), dtype=float32)");
  REQUIRE(repr(zeros({2, 0}, DType::kInt32)) == "Array([], shape=(2, 0), dtype=int32)");
  REQUIRE(to_string(zeros({0, 3})) == "[]");
  REQUIRE(repr(arr({0.5, 1e-5}, DType::kFloat64)) == "Array([5.e-01, 1.e-05], dtype=float64)");
}

TEST_CASE("core::format: repr moves the dtype when the last line is full", "[format]") {
  REQUIRE(repr(linspace(0, 1, 10)) ==
          "Array([0.        , 0.11111111, 0.22222222, 0.33333334, 0.44444445,\n"
          "       0.5555556 , 0.6666667 , 0.7777778 , 0.8888889 , 1.        ],      dtype=float32)");
}
