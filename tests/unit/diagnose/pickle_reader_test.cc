// The pickle reader behind flight-recorder dumps: plain data read exactly,
// shared (memoised) values fetched again, and everything else refused
// without running anything.

#include <catch2/catch.hpp>

#include "diagnose/pickle_reader.h"
#include "spmd/error.h"

using spmd::Json;
using spmd::detail::read_pickle;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

std::string refusal(const std::string& pickle) {
  try {
    read_pickle(pickle, "dump");
  } catch (const spmd::SyntaxError& e) {
    return e.report().message;
  }
  return "accepted";
}

}  // namespace

TEST_CASE("pickle: scalars, strings, tuples and dicts as Python writes them", "[diagnose][pickle]") {
  // pickle.dumps({'a': (1, -2, 300, 70000, -5000000000), 'b': [None, True, 1.5], 'c': 'x'}, protocol=2)
  const std::string p = bytes({0x80, 2, '}', 'q', 0, '(', 'X', 1, 0, 0, 0, 'a', 'q', 1, '(', 'K', 1, 'J', 0xfe, 0xff, 0xff, 0xff,
                               'M', 0x2c, 1, 'J', 0x70, 0x11, 1, 0, 0x8a, 5, 0x00, 0x0e, 0xfa, 0xd5, 0xfe, 't', 'q', 2,
                               'X', 1, 0, 0, 0, 'b', 'q', 3, ']', 'q', 4, '(', 'N', 0x88, 'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0,
                               'e', 'X', 1, 0, 0, 0, 'c', 'q', 5, 'X', 1, 0, 0, 0, 'x', 'q', 6, 'u', '.'});
  const Json v = read_pickle(p, "dump");
  CHECK(v.dump() == R"({"a":[1,-2,300,70000,-5000000000],"b":[null,true,1.5],"c":"x"})");
}

TEST_CASE("pickle: a memoised dict fetched twice is the same value twice", "[diagnose][pickle]") {
  // f = {'n': 1}; pickle.dumps([f, f], protocol=2): the second is a BINGET.
  const std::string p = bytes({0x80, 2, ']', 'q', 0, '(', '}', 'q', 1, 'X', 1, 0, 0, 0, 'n', 'q', 2, 'K', 1, 's', 'h', 1, 'e', '.'});
  CHECK(read_pickle(p, "dump").dump() == R"([{"n":1},{"n":1}])");
}

TEST_CASE("pickle: opcodes that would build Python objects are refused, not run", "[diagnose][pickle]") {
  // pickle.dumps(os.system) style: GLOBAL 'posix system', then REDUCE.
  CHECK(refusal(std::string("\x80\x02") + "cposix\nsystem\nq\x00." ) ==
        "dump: byte 2: invalid pickle: opcode 0x63 ('c') is outside plain data (it would build Python objects), and a "
        "flight-recorder dump never holds one");
  CHECK(refusal(bytes({0x80, 2, 'N', ')', 'R', '.'})).starts_with("dump: byte 4: invalid pickle: opcode 0x52 ('R')"));
}

TEST_CASE("pickle: cut short, malformed or self-containing pickles are errors with the byte", "[diagnose][pickle]") {
  CHECK(refusal(bytes({0x80, 2, 'X', 9, 0, 0, 0, 'a'})) ==
        "dump: byte 7: invalid pickle: the file ends in the middle of a value (cut short?)");
  CHECK(refusal(bytes({0x80, 2, 'h', 3, '.'})) == "dump: byte 2: invalid pickle: memo entry 3 fetched before it was stored");
  CHECK(refusal(bytes({0x80, 2, 'K', 1, 'a', '.'})) == "dump: byte 4: invalid pickle: APPEND to something that is not a list");
  CHECK(refusal(bytes({0x80, 2, 'a', '.'})) == "dump: byte 2: invalid pickle: a value taken from an empty stack");
  CHECK(refusal(bytes({0x80, 2, 'K', 1, 'K', 2, '.'})) == "dump: byte 6: invalid pickle: STOP with 2 values on the stack");
  // l = []; l.append(l): a cycle, stopped by the depth bound (and no leak).
  CHECK(refusal(bytes({0x80, 2, ']', 'q', 0, 'h', 0, 'a', '.'})).ends_with("values nested more than 200 deep"));
  CHECK(refusal(bytes({0x80, 2, 0x8a, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, '.'})) ==
        "dump: byte 2: invalid pickle: an integer of 9 bytes (more than 64 bits)");
}
