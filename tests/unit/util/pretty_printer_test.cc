// The Wadler-Lindig printer jaxpr text is laid out with (src/util/pretty_printer.cc).

#include <catch2/catch.hpp>

#include "util/pretty_printer.h"

using namespace spmd;

namespace {

// "f[a=1 b=2]" as jaxprs write parameters: flat when the group fits, else one per line.
pp::Doc params(std::vector<std::string> kv) {
  std::vector<pp::Doc> items;
  for (auto& s : kv) items.push_back(pp::text(s));
  return pp::group(pp::concat({pp::nest(2, pp::concat({pp::text("f["), pp::brk(""), pp::join(pp::brk(), items)})),
                               pp::brk(""), pp::text("]")}));
}

}  // namespace

TEST_CASE("util::pretty_printer: a group is flat when it fits, else its breaks are newlines at their nesting",
          "[util]") {
  CHECK(pp::format(params({"a=1", "b=2"})) == "f[a=1 b=2]");
  CHECK(pp::format(params({"a=1", "b=2"}), 9) == "f[\n  a=1\n  b=2\n]");
  CHECK(pp::format(params({"a=1", "b=2"}), 10) == "f[a=1 b=2]");  // exactly the width fits
  // Only the group itself must fit, not the text after it (JAX's rule).
  CHECK(pp::format(pp::concat({params({"a=1"}), pp::text(" and a long tail past the width")}), 10) ==
        "f[a=1] and a long tail past the width");
  // An inner group decides for itself once its outer group is broken; nesting adds up.
  pp::Doc inner = params({"x=1", "y=2"});
  pp::Doc outer = pp::group(pp::nest(4, pp::concat({pp::text("{"), pp::brk(), inner, pp::brk("; "), pp::text("z")})));
  CHECK(pp::format(outer, 80) == "{ f[x=1 y=2]; z");
  CHECK(pp::format(outer, 14) == "{\n    f[x=1 y=2]\n    z");
  CHECK(pp::format(outer, 13) == "{\n    f[\n      x=1\n      y=2\n    ]\n    z");
  CHECK(pp::format(pp::nil()).empty());
}
