// AxisNames: the interned axis-name tuples signatures and call sites carry.

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "rendezvous/axis_names.h"

using spmd::detail::AxisNames;

TEST_CASE("rendezvous::AxisNames: equal tuples share one entry, rendered as Python prints them", "[rendezvous]") {
  AxisNames a = AxisNames::intern({"data", "model"});
  AxisNames b = AxisNames::intern(std::vector<std::string>{"data", "model"});
  REQUIRE(a == b);
  REQUIRE(&a.names() == &b.names());
  REQUIRE(a.names() == std::vector<std::string>{"data", "model"});
  REQUIRE(a.text() == "('data', 'model')");
  REQUIRE_FALSE(a == AxisNames::intern({"model", "data"}));  // order is part of the tuple
  REQUIRE(AxisNames::intern({"i"}).text() == "'i'");
  REQUIRE(AxisNames() == AxisNames::intern({}));
  REQUIRE(AxisNames().empty());
  REQUIRE_FALSE(a.empty());
}

TEST_CASE("rendezvous::AxisNames: threads interning the same tuple get the same entry", "[rendezvous]") {
  std::vector<AxisNames> got(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] { got[t] = AxisNames::intern({"x", "y" + std::to_string(got.size())}); });
  }
  for (auto& th : threads) th.join();
  for (const AxisNames& n : got) REQUIRE(n == got[0]);
  REQUIRE(got[0].text() == "('x', 'y8')");
}
