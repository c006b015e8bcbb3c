#include <catch2/catch.hpp>

#include "spmd/error.h"
#include "spmd/util/json.h"

using namespace spmd;

TEST_CASE("util::Json: dump and parse round-trip", "[json]") {
  Json j = Json::object();
  j.set("a", 1);
  j.set("b", "x\"y\n");
  Json arr = Json::array();
  arr.push(true);
  arr.push(Json());
  arr.push(2.5);
  j.set("c", arr);
  std::string s = j.dump();
  REQUIRE(s == R"({"a":1,"b":"x\"y\n","c":[true,null,2.5]})");
  REQUIRE(Json::parse(s) == j);
  REQUIRE(Json::parse("\"\\u00e9\"").as_string() == "\xc3\xa9");
}

TEST_CASE("util::Json: malformed input names line and column", "[json]") {
  try {
    Json::parse("{\n  \"a\": 1,\n  \"b\" 2\n}", "t.json");
    FAIL("no exception");
  } catch (const SyntaxError& e) {
    REQUIRE(e.report().where.line == 3);
    REQUIRE(e.report().where.column == 7);
    REQUIRE(e.report().message == "t.json:3:7: invalid JSON: expected ':' after the key");
    REQUIRE(e.report().source_line == "  \"b\" 2");
  }
  REQUIRE_THROWS_AS(Json::parse("[1,"), SyntaxError);
  REQUIRE_THROWS_AS(Json::parse(std::string(1000, '[')), SyntaxError);
}

TEST_CASE("util::Json: string_at and int_at read members, with a fallback for anything else", "[json]") {
  Json j = Json::parse(R"({"name": "psum", "n": 3, "s": 4, "f": 1.5})");
  REQUIRE(j.string_at("name") == "psum");
  REQUIRE(j.string_at("n").empty());       // not a string
  REQUIRE(j.string_at("missing").empty());
  REQUIRE(j.int_at("n") == 3);
  REQUIRE(j.int_at("name", -1) == -1);     // not an integer
  REQUIRE(j.int_at("f", 7) == 7);          // a double is not an integer
  REQUIRE(j.int_at("missing", -2) == -2);
  REQUIRE(Json::parse("[1]").string_at("x").empty());  // not an object
}

TEST_CASE("util::Json: strings that are not UTF-8 dump as valid UTF-8, U+FFFD for each bad sequence", "[json]") {
  // Issue 19, finding 15: a program's binary output made --format json invalid.
  const std::string fffd = "\xEF\xBF\xBD";
  auto dumped = [](std::string s) { return Json(std::move(s)).dump(); };
  CHECK(dumped("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  CHECK(dumped("a\xFF" "b") == "\"a" + fffd + "b\"");
  CHECK(dumped("\xC0\xAF") == "\"" + fffd + fffd + "\"");            // overlong '/'
  CHECK(dumped("\xED\xA0\x80") == "\"" + fffd + fffd + fffd + "\"");  // a surrogate
  CHECK(dumped("\xF4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // past U+10FFFF
  CHECK(dumped("end\xE2\x82") == "\"end" + fffd + fffd + "\"");      // truncated
  // What it dumps parses back.
  CHECK(Json::parse(dumped("x\xFFy"), "t", 0).as_string() == "x" + fffd + "y");
}
