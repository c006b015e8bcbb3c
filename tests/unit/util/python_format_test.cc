// The format-spec mini-language the devices use for a traced
// jax.debug.print, against what CPython prints for the same specs.

#include <catch2/catch.hpp>

#include "spmd/error.h"
#include "util/python_format.h"

using namespace spmd;

TEST_CASE("util::python_format: specs format as CPython does", "[util][format]") {
  CHECK(format_float_spec(1.0, ">8.3f") == "   1.000");
  CHECK(format_float_spec(3.14159, ".2e") == "3.14e+00");
  CHECK(format_int_spec(7, "08") == "00000007");
  CHECK(format_int_spec(1234567, ",") == "1,234,567");
  CHECK(format_int_spec(3, "x>5") == "xxxx3");
  CHECK(format_str_spec("ab", "^6") == "  ab  ");
  CHECK(float_repr(0.1) == "0.1");
  CHECK(float_repr(1e-5) == "1e-05");
}

TEST_CASE("util::python_format: widths and precisions past the bound are ValueErrors, not gigabytes",
          "[util][format]") {
  // Issue 19, findings 10 and 21: a width of 99999999999 wrapped to 32 bits
  // and wrote 1.2 GB; more digits gave "exception: stoul".
  CHECK(format_int_spec(1, std::to_string(kMaxFormatWidth)).size() == static_cast<std::size_t>(kMaxFormatWidth));
  for (const char* spec : {"99999999999", "99999999999999999999999", "1000001"}) {
    INFO(spec);
    try {
      format_float_spec(1.0, spec);
      FAIL("accepted");
    } catch (const InvalidArgument& e) {
      CHECK(e.report().kind == "ValueError");
      CHECK(e.report().message == "format spec '" + std::string(spec) + "': the width is larger than 1000000");
    }
  }
  try {
    format_spec_type(".99999999999f");
    FAIL("accepted");
  } catch (const InvalidArgument& e) {
    CHECK(e.report().message == "format spec '.99999999999f': the precision is larger than 1000000");
  }
}
