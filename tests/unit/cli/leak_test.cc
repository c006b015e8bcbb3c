// Thousands of failing scenario runs in one process (what `spmd test` and the
// soak test do): every verdict is right each time, every arena is released,
// the process's mappings stop growing. Under ASan the leak checker also sees
// whatever the interpreter and the runtime allocated, at this process's exit.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/scenario_runner.h"
#include "support/process_maps.h"

using namespace spmd;
using namespace spmd::cli;

using spmd::testing::mapping_count;

namespace {

struct Case {
  const char* name;
  const char* expect_status;
  const char* expect_kind;  // "" for ok / deadlock / mismatch
  const char* text;
};

const Case kCases[] = {
    {"deadlock.py", "deadlock", "Deadlock", R"(import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    return lax.cond(lax.axis_index('i') == 1, lambda v: v, lambda v: lax.psum(v, 'i'), x)
jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)"},
    {"mismatch.py", "mismatch", "CollectiveMismatch", R"(import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    return lax.cond(lax.axis_index('i') == 2, lambda v: lax.pmax(v, 'i'), lambda v: lax.psum(v, 'i'), x)
jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)"},
    {"exception.py", "error", "ValueError", R"(import jax
import jax.numpy as jnp
def check(x):
    raise ValueError("bad shard")
def f(x):
    # closures and a self-referencing list: cycles the interpreter must not leak
    cycle = [x]
    cycle.append(cycle)
    def inner(v):
        return check(v) if v.ndim == 0 else inner
    return inner(x)
jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)"},
    {"oom.py", "error", "OutOfMemoryError", R"(import jax
import jax.numpy as jnp
jax.pmap(lambda x: jnp.zeros((1000000,)) + x)(jnp.arange(4.0))
)"},
    {"budget.py", "error", "BudgetExceeded", R"(import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    return lax.while_loop(lambda c: c >= 0, lambda c: c + 1, x)
jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)"},
    {"ok.py", "ok", "", R"(import jax
import jax.numpy as jnp
from jax import lax
def rec(n):
    return 0 if n == 0 else 1 + rec(n - 1)
def f(x):
    return lax.psum(x * rec(5), 'i')
print(jax.pmap(f, axis_name='i')(jnp.arange(4.0)))
)"},
};

}  // namespace

TEST_CASE("cli::leaks: thousands of failing scenario runs in one process", "[cli][leak]") {
  auto dir = std::filesystem::temp_directory_path() / "spmd_leak_test";
  std::filesystem::create_directories(dir);
  std::vector<std::string> paths;
  for (const auto& c : kCases) {
    paths.push_back((dir / c.name).string());
    std::ofstream(paths.back()) << "# spmd: devices=4\n" << c.text;
  }
  const int n = static_cast<int>(std::size(kCases));
  const int warmup = 2 * n;
  // Each run loads spmdsim's jax package afresh into the embedded CPython
  // (~20 ms here from its bytecode, several times that under a sanitizer).
#ifdef SPMD_SANITIZED
  const int runs = 300;
#else
  const int runs = 1200;
#endif
  std::size_t mappings = 0;
  for (int i = 0; i < warmup + runs; ++i) {
    if (i == warmup) mappings = mapping_count();
    const Case& c = kCases[i % n];
    RunSettings s;
    s.path = paths[static_cast<std::size_t>(i % n)];
    s.max_steps = 3000;
    s.arena_capacity = 1 << 20;
    s.stack_size = 256 * 1024;
    s.threads = 1 + (i / n) % 2;
    std::ostringstream out, err;
    std::istringstream in;
    RunOutcome o = run_scenario(s, out, err, in);
    std::string kind = o.report ? o.report->kind : "";
    if (o.status != c.expect_status || kind != c.expect_kind) {
      FAIL("run " << i << " (" << c.name << "): got " << o.status << " " << kind << "\n"
                  << (o.report ? o.report->to_text() : ""));
    }
  }
  std::size_t after = mapping_count();
  INFO("mappings after warm-up " << mappings << ", after " << runs << " runs " << after);
  // Allocators (ASan's above all) may still map a few new regions; a leak
  // per run would add one mapping or more per run.
  if (spmd::testing::kMappingCountIsOurs) REQUIRE(after <= mappings + static_cast<std::size_t>(runs) / 10);
}
