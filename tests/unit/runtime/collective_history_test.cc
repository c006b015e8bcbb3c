// A device's collective history: every entry is found by its index while it
// is among the last capacity() recorded, whether it still sits in the staged
// group or was moved to the ring, and older entries report as gone.

#include <catch2/catch.hpp>

#include <vector>

#include "rendezvous/collective_site.h"
#include "runtime/collective_history.h"

using spmd::detail::CollectiveHistory;
using spmd::detail::CollectiveSite;

TEST_CASE("runtime::CollectiveHistory: the last capacity() entries by index, across staging and the ring",
          "[runtime][history]") {
  std::vector<CollectiveSite> sites(300);
  CollectiveHistory history(8);
  REQUIRE(history.capacity() == 8);
  REQUIRE(history.size() == 0);
  REQUIRE(history.last() == nullptr);
  REQUIRE(history.at(0) == nullptr);
  // Every length from 1 to 41 crosses each position in a staged group and
  // wraps the 8-slot ring several times.
  for (int n = 1; n <= 41; ++n) {
    history.record(&sites[static_cast<std::size_t>(n - 1)]);
    INFO("after " << n << " entries");
    REQUIRE(history.size() == n);
    REQUIRE(history.last() == &sites[static_cast<std::size_t>(n - 1)]);
    for (int i = 0; i < n; ++i) {
      INFO("entry " << i);
      REQUIRE(history.at(i) == (i >= n - 8 ? &sites[static_cast<std::size_t>(i)] : nullptr));
    }
    REQUIRE(history.at(n) == nullptr);
    REQUIRE(history.at(-1) == nullptr);
  }
}

TEST_CASE("runtime::CollectiveHistory: capacity rounds up to a power of two of at least the staged group",
          "[runtime][history]") {
  CHECK(CollectiveHistory(0).capacity() == CollectiveHistory::kStaged);
  CHECK(CollectiveHistory(1).capacity() == CollectiveHistory::kStaged);
  CHECK(CollectiveHistory(128).capacity() == 128);
  CHECK(CollectiveHistory(129).capacity() == 256);
}

TEST_CASE("runtime::CollectiveHistory: a repeated site is recorded once per collective", "[runtime][history]") {
  CollectiveSite a, b;
  CollectiveHistory history(128);
  for (int i = 0; i < 10; ++i) history.record(i == 6 ? &b : &a);
  REQUIRE(history.size() == 10);
  REQUIRE(history.at(5) == &a);
  REQUIRE(history.at(6) == &b);
  REQUIRE(history.at(7) == &a);
  REQUIRE(history.last() == &a);
}
