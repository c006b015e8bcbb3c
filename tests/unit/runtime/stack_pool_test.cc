// Fiber stacks from the pool: each sits just above its guard page, their tops
// are spread over every line offset of a page (so parked fibers do not evict
// each other's hot lines), and a freed stack is handed out again as it was.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <set>
#include <vector>

#include "backend/sim/stack_pool.h"
#include "spmd/error.h"

using spmd::sim::StackPool;

namespace {
std::uintptr_t address(void* p) { return reinterpret_cast<std::uintptr_t>(p); }
}  // namespace

TEST_CASE("sim::StackPool: stack tops take every line offset of a page, above the guard page", "[runtime][stack]") {
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  StackPool pool(64 * 1024);
  std::vector<boost::context::stack_context> stacks;
  std::set<std::uintptr_t> offsets;
  for (int i = 0; i < 64; ++i) {
    stacks.push_back(pool.allocate());
    const auto& s = stacks.back();
    INFO("stack " << i);
    const std::uintptr_t top = address(s.sp);
    // The usable region ends exactly at the guard page: a whole number of pages.
    CHECK((top - s.size) % page == 0);
    CHECK(s.size <= 64 * 1024);
    CHECK(s.size > 64 * 1024 - page);
    offsets.insert(top % page);
    // The stack is writable all the way down.
    static_cast<char*>(s.sp)[-1] = 1;
    reinterpret_cast<char*>(top - s.size)[0] = 1;
  }
  CHECK(offsets.size() == 64);  // 64 slots in a row: 64 different 64-byte lines within a page
  CHECK(*offsets.begin() % 64 == 0);

  auto freed = stacks[10];
  pool.deallocate(stacks[10]);
  auto again = pool.allocate();
  CHECK(again.sp == freed.sp);
  CHECK(again.size == freed.size);
  CHECK(pool.stacks_created() == 64);
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    if (i != 10) pool.deallocate(stacks[i]);
  }
  pool.deallocate(again);
}

TEST_CASE("sim::StackPool: stacks that cannot be mapped are an OutOfMemoryError that names the size", "[runtime][stack]") {
  // Issue 19, finding 3: once std::bad_alloc, ending in `terminate called`.
  StackPool pool(std::size_t{1} << 50);  // 1 PiB per stack: no address space holds 64 of them
  try {
    pool.allocate();
    FAIL("a petabyte stack was mapped");
  } catch (const spmd::OutOfMemoryError& e) {
    CHECK(e.report().message.rfind("cannot reserve fiber stacks of 1024.0 TiB for 64 more devices (0 reserved so far): ", 0) == 0);
    CHECK(e.report().hint.find("--stack-size") != std::string::npos);
  }
}
