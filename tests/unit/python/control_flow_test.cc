// lax control flow in scenarios: per-device execution, carry checks, and the
// recorded decisions that let deadlock / mismatch reports name the cond or
// loop whose outcome differed between devices.

#include "frontend_test_util.h"
#include "spmd/debug/breakpoint.h"

using namespace spmd;
using spmd::python::testing::run;
using spmd::python::testing::run_error;

TEST_CASE("python::lax: cond, switch, fori_loop, while_loop, scan, map", "[python][lax]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    i = lax.axis_index('i')
    a = lax.cond(i % 2 == 0, lambda v: v * 10, lambda v: -v, x)
    b = lax.switch(i, [lambda: 0, lambda: 1, lambda: 2])
    c = lax.switch(i + 5, [lambda: 0, lambda: 1])
    d = lax.fori_loop(0, i + 1, lambda k, acc: acc + k, 0)
    e = lax.while_loop(lambda v: v < 3, lambda v: v + 1, i)
    carry, ys = lax.scan(lambda s, t: (s + t, s * t), 0, jnp.arange(4) + i)
    m = lax.map(lambda t: t * t, jnp.arange(3))
    return a, b, c, d, e, carry, ys, m
out = jax.pmap(f, axis_name='i')(jnp.arange(4))
for v in out:
    print(v)
print(lax.cond(True, lambda: 1, lambda: 2))
print(lax.fori_loop(0, 4, lambda k, acc: acc * 2, 1))
)PY");
  CHECK(r.out ==
        "[ 0 -1 20 -3]\n"
        "[0 1 2 2]\n"
        "[1 1 1 1]\n"
        "[0 1 3 6]\n"
        "[3 3 3 3]\n"
        "[ 6 10 14 18]\n"
        "[[ 0  0  2  9]\n [ 0  2  9 24]\n [ 0  6 20 45]\n [ 0 12 35 72]]\n"
        "[[0 1 4]\n [0 1 4]\n [0 1 4]\n [0 1 4]]\n"
        "1\n"
        "16\n");
}

TEST_CASE("python::lax: type checks like JAX's", "[python][lax][errors]") {
  Report r = run_error<ProgramError>(
      "import jax.numpy as jnp\nfrom jax import lax\ny = lax.cond(jnp.array([True, False]), lambda: 1, lambda: 2)\n");
  CHECK(r.kind == "TypeError");
  CHECK(r.message == "Pred must be a scalar, got [ True False] of shape (2,).");
  CHECK(r.where.line == 3);
  CHECK(r.where.column == 5);

  r = run_error<ProgramError>(
      "import jax.numpy as jnp\nfrom jax import lax\ny = lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.float32), jnp.zeros(2, dtype=jnp.int32))\n");
  CHECK(r.kind == "TypeError");
  CHECK(r.message ==
        "lax.fori_loop: body_fun output and input must have identical types, got input PyTreeDef((*, *, *)) with "
        "leaves (int32[], int32[], int32[2]) and output PyTreeDef((*, *, *)) with leaves (int32[], int32[], float32[2])");

  r = run_error<ProgramError>("from jax import lax\ny = lax.while_loop(lambda v: v, lambda v: v - 1, 3)\n");
  CHECK(r.kind == "TypeError");
  CHECK(r.message ==  // real JAX 0.8.1's text: the carry 3 stays weak
        "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(int32[], weak_type=True)].");

  r = run_error<ProgramError>("import jax.numpy as jnp\nfrom jax import lax\nc, y = lax.scan(lambda c, x: c + x, 0, jnp.arange(3))\n");
  CHECK(r.kind == "TypeError");
  CHECK_THAT(r.message, Catch::StartsWith("scan body output must be a pair (carry, y)"));
}

TEST_CASE("python::lax: a cond that skips a collective on some devices deadlocks, and the report names the cond",
          "[python][lax][deadlock]") {
  std::string out;
  Report r = run_error<DeadlockError>(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    i = lax.axis_index('i')
    y = lax.cond(i == 0, lambda v: lax.psum(v, 'i'), lambda v: v, x)
    return y
jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)PY", 4, &out);
  CHECK(r.kind == "Deadlock");
  INFO(r.to_text());
  CHECK(r.divergence.decision_loc.line == 7);
  CHECK(r.divergence.decision_loc.column == 9);
  // The collective is located too, and the host's frames are not passed off as its traceback.
  CHECK(r.where.line == 7);
  CHECK(r.where.column == 36);
  CHECK(r.source_line == "    y = lax.cond(i == 0, lambda v: lax.psum(v, 'i'), lambda v: v, x)");
  for (const auto& d : r.details) CHECK(d.find("in <module>") == std::string::npos);
  CHECK(r.divergence.decision_summary ==
        "lax.cond at t.py:7:9: took the false branch on devices {1..3}; took the true branch on device 0");
  bool saw_psum_line = false;
  for (const auto& d : r.devices) saw_psum_line = saw_psum_line || (d.loc.line == 7 && d.state == "waiting");
  CHECK(saw_psum_line);
}

TEST_CASE("python::lax: branches with different collectives are a mismatch naming the cond", "[python][lax][mismatch]") {
  Report r = run_error<CollectiveMismatch>(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    i = lax.axis_index('i')
    return lax.cond(i < 2, lambda v: lax.psum(v, 'i'), lambda v: lax.pmax(v, 'i'), x)
jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)PY");
  INFO(r.to_text());
  CHECK(r.kind == "CollectiveMismatch");
  CHECK(r.divergence.decision_loc.line == 7);
  CHECK(r.divergence.decision_summary ==
        "lax.cond at t.py:7:12: took the true branch on devices {0, 1}; took the false branch on devices {2, 3}");
  CHECK(r.where.line == 7);
}

TEST_CASE("python::lax: a trip count that depends on the device is named in the report", "[python][lax][deadlock]") {
  Report r = run_error<Error>(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    n = lax.axis_index('i') + 1
    return lax.fori_loop(0, n, lambda k, v: lax.psum(v, 'i'), x)
jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)PY");
  INFO(r.to_text());
  CHECK(r.kind == "Deadlock");
  CHECK(r.divergence.decision_loc.line == 7);
  CHECK(r.divergence.decision_summary ==
        "lax.fori_loop at t.py:7:12: ran 1 iteration on device 0; ran 2 iterations on device 1; ran 3 iterations on "
        "device 2; ran 4 iterations on device 3");

  r = run_error<Error>(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    limit = lax.axis_index('i')
    def body(v):
        return lax.psum(v, 'i') * 0 + v + 1
    return lax.while_loop(lambda v: v < limit, body, jnp.array(0.0))
jax.pmap(f, axis_name='i')(jnp.arange(2.0))
)PY", 2);
  INFO(r.to_text());
  CHECK(r.kind == "Deadlock");
  CHECK(r.divergence.decision_loc.line == 9);
  CHECK_THAT(r.divergence.decision_summary, Catch::StartsWith("lax.while_loop at t.py:9:12"));
}

TEST_CASE("python::lax: under disable_jit a Python if may diverge, and the report names it", "[python][lax][deadlock]") {
  Report r = run_error<DeadlockError>(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    if x > 1:
        x = lax.psum(x, 'i')
    return x
with jax.disable_jit():
    jax.pmap(f, axis_name='i')(jnp.arange(4.0))
)PY");
  INFO(r.to_text());
  CHECK(r.divergence.decision_loc.line == 6);
  CHECK(r.divergence.decision_summary == "if at t.py:6:8: was false on devices {0, 1}; was true on devices {2, 3}");
}

TEST_CASE("scenario::jax.debug: print formats, host printing, breakpoints", "[python][debug]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
jax.debug.print("host {} {x:.2f}", 1, x=2.0)
def f(x):
    jax.debug.print("dev {i}: {v:.1f} {t}", i=lax.axis_index('i'), v=x.sum(), t=(x, 1))
    return x
jax.pmap(f, axis_name='i')(jnp.arange(4.0).reshape((2, 2)))
)PY", 2);
  CHECK(r.out ==
        "host 1 2.00\n"
        "[device 0] dev 0: 1.0 (Array([0., 1.], dtype=float32), 1)\n"
        "[device 1] dev 1: 5.0 (Array([2., 3.], dtype=float32), 1)\n");

  std::vector<std::string> seen;
  auto b = run(R"PY(
import jax
import jax.numpy as jnp
def f(x):
    y = x * 2
    n = 3
    jax.debug.breakpoint()
    return y
jax.pmap(f)(jnp.arange(2.0))
)PY", 2, [&](RuntimeOptions& o) {
    o.breakpoint_handler = [&](std::span<const BreakpointStop> stops) {
      for (const auto& s : stops) {
        std::string names;
        for (const auto& [name, v] : s.values) names += name + "=" + v.abstract_type() + " ";
        seen.push_back(std::to_string(s.device) + ":" + std::to_string(s.loc.line) + ":" + names);
      }
    };
  });
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == "0:7:x=f32[] y=f32[] ");
  CHECK(seen[1] == "1:7:x=f32[] y=f32[] ");
}

TEST_CASE("python::runtime: step budget stops an endless device loop", "[python][budget]") {
  // The loop runs on the devices (a traced while_loop whose test never
  // fails); a Python `while True` would spin at trace time, on the host,
  // where --max-seconds stops it (cli/faults_test.cc).
  Report r = run_error<BudgetExceeded>(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    return lax.while_loop(lambda c: c >= 0, lambda c: c + 1, x)
jax.pmap(f)(jnp.arange(2))
)PY", 2, nullptr, [](RuntimeOptions& o) { o.step_budget = 10000; });
  CHECK(r.kind == "BudgetExceeded");
  CHECK(r.where.line == 6);
  CHECK(r.device >= 0);
}

TEST_CASE("python::runtime: several OS threads give the same results", "[python][threads]") {
  const char* program = R"PY(
import jax
import jax.numpy as jnp
from jax import lax
shared = {'k': 1}
def f(x):
    acc = x
    for _ in range(20):
        acc = lax.psum(acc, 'i') / 8 + shared['k']
    jax.debug.print("{v}", v=acc)
    return acc
print(jax.pmap(f, axis_name='i')(jnp.arange(8.0)))
)PY";
  auto one = run(program, 8);
  auto four = run(program, 8, [](RuntimeOptions& o) { o.threads = 4; });
  CHECK(one.out == four.out);
  CHECK_FALSE(one.out.empty());
}

TEST_CASE("python::lax: each branch and loop body is traced once, as in JAX", "[python][lax][tracing]") {
  // Python inside a branch runs when the branch is traced, once, whatever
  // the devices then take; captured outer values reach the branch that uses them.
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
traced = []
def f(x):
    scale = x * 10
    offset = x + 100
    def big(v):
        traced.append('big')
        return v * scale
    def small(v):
        traced.append('small')
        return v + offset
    def body(c):
        traced.append('body')
        return c + scale + 1
    def test(c):
        traced.append('test')
        return c < 50
    return lax.cond(x > 1, big, small, x), lax.while_loop(test, body, x)
print(jax.pmap(f)(jnp.arange(4)))
print(traced)
)PY");
  CHECK(r.out ==
        "(Array([100, 102,  40,  90], dtype=int32), Array([50, 56, 65, 65], dtype=int32))\n"
        "['small', 'big', 'test', 'body']\n");  // branches in lax.cond's order: false, true
}
