// JAX's tracing semantics inside pmap: tracer errors, print once with abstract
// values, side effects once with a warning, and jax.disable_jit().

#include <chrono>

#include "frontend_test_util.h"

using namespace spmd;
using spmd::python::testing::run;
using spmd::python::testing::run_error;

namespace {

// Runs `body` (the body of `f(x)`) under pmap over 4 devices and returns the error.
Report traced_error(const std::string& body) {
  std::string src = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\ndef f(x):\n" + body +
                    "    return x\ny = jax.pmap(f, axis_name='i')(jnp.arange(4))\n";
  return run_error<ProgramError>(src);
}

}  // namespace

TEST_CASE("python::tracing: Python control flow on traced values", "[python][tracing][errors]") {
  // JAX's error, raised while pmap traces f (no device runs yet), at the
  // expression whose value Python needed.
  Report r = traced_error("    if x > 1:\n        pass\n");
  CHECK(r.kind == "TracerBoolConversionError");
  CHECK(r.message ==
        "Attempted boolean conversion of traced array with shape bool[].\nThe error occurred while tracing the "
        "function f at t.py:4 for pmap. This concrete value was not available in Python because it depends on the "
        "value of the argument x.");
  CHECK(r.where.line == 5);
  CHECK(r.where.column == 8);
  CHECK(r.hint ==
        "inside pmap, every device runs one traced program: Python `if`/`while` on a traced value cannot branch per "
        "device. Use lax.cond / jnp.where / lax.while_loop, or mark the argument static");
  CHECK(r.device == -1);
  REQUIRE_FALSE(r.details.empty());
  CHECK(r.details.front() == "Traceback (most recent call last):");

  const std::pair<const char*, int> bool_cases[] = {
      {"    while x < 3:\n        x = x + 1\n", 11}, {"    b = bool(x)\n", 9},
      {"    y = x and 1\n", 9},                       {"    y = not (x > 0)\n", 9},
      {"    assert x >= 0, 'negative'\n", 12},       {"    y = 1 if x.sum() else 2\n", 14},
  };
  for (const auto& [body, column] : bool_cases) {
    INFO(body);
    r = traced_error(body);
    CHECK(r.kind == "TracerBoolConversionError");
    CHECK(r.where.line == 5);
    CHECK(r.where.column == column);
  }
  r = traced_error("    b = bool(x)\n");
  CHECK_THAT(r.message, Catch::StartsWith("Attempted boolean conversion of traced array with shape int32[].\n"));

  r = traced_error("    y = x * (2 if lax.axis_index('i') == 0 else 1)\n");
  CHECK(r.kind == "TracerBoolConversionError");
  CHECK_THAT(r.message, Catch::EndsWith("because it depends on the value of the function's arguments."));
}

TEST_CASE("python::tracing: concretization of traced values", "[python][tracing][errors]") {
  const std::string concrete = "Abstract tracer value encountered where concrete value is expected: traced array "
                               "with shape int32[]\nThe problem arose with ";
  Report r = traced_error("    n = int(x)\n");
  CHECK(r.kind == "ConcretizationTypeError");
  CHECK_THAT(r.message, Catch::StartsWith(concrete + "the `int` function.\nThe error occurred while tracing"));
  CHECK(r.where.line == 5);
  CHECK(r.where.column == 9);
  CHECK_THAT(r.hint, Catch::StartsWith("int() needs a concrete value, but inside pmap values are traced"));

  r = traced_error("    v = float(x)\n");
  CHECK(r.kind == "ConcretizationTypeError");
  CHECK_THAT(r.message, Catch::StartsWith(concrete + "the `float` function."));

  // range() and list indexing call __index__: JAX's TracerIntegerConversionError.
  r = traced_error("    for i in range(x):\n        pass\n");
  CHECK(r.kind == "TracerIntegerConversionError");
  CHECK_THAT(r.message, Catch::StartsWith("The __index__() method was called on traced array with shape int32[]."));
  CHECK(r.where.column == 14);

  r = traced_error("    v = [1, 2, 3, 4][x]\n");
  CHECK(r.kind == "TracerIntegerConversionError");
  CHECK(r.where.column == 9);

  r = traced_error("    v = x.item()\n");
  CHECK(r.kind == "ConcretizationTypeError");
  CHECK_THAT(r.message, Catch::StartsWith(concrete + "the `item` method."));
  CHECK_THAT(r.hint, Catch::StartsWith(".item() needs a concrete value"));

  r = traced_error("    v = x.tolist()\n");
  CHECK(r.kind == "ConcretizationTypeError");
  CHECK_THAT(r.message, Catch::StartsWith(concrete + "the `tolist` method."));

  r = traced_error("    v = jnp.zeros(x)\n");
  CHECK(r.kind == "TypeError");
  CHECK_THAT(r.message, Catch::StartsWith("Shapes must be 1D sequences of concrete values of integer type, got "
                                          "Traced<int32[]>with<DynamicJaxprTrace>."));
  CHECK_THAT(r.hint, Catch::StartsWith("array shapes must be static inside pmap"));

  r = traced_error("    s = f'{x:.2f}'\n");
  CHECK(r.kind == "ConcretizationTypeError");
  CHECK_THAT(r.message, Catch::StartsWith(concrete + "formatting it with the spec '.2f'."));
  CHECK_THAT(r.hint, Catch::Contains("jax.debug.print"));

  // Indexing an array with a traced index is fine (a dynamic index), as in JAX.
  auto ok = run("import jax\nimport jax.numpy as jnp\ntable = jnp.arange(10, 14)\n"
                "print(jax.pmap(lambda i: table[i])(jnp.array([3, 2, 1, 0])))\n");
  CHECK(ok.out == "[13 12 11 10]\n");
  // Static values stay Python values: shapes, psum of a constant, Python numbers.
  ok = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
scale = 2
def f(x):
    n = lax.psum(1, 'i')
    if x.shape[0] == 3 and n == 4 and scale > 1:
        return x * n
    return x
print(jax.pmap(f, axis_name='i')(jnp.ones((4, 3), dtype=jnp.int32))[0])
)PY");
  CHECK(ok.out == "[4 4 4]\n");
  // As in JAX (omnistaging), an op on a closed-over array is staged: its result is traced.
  r = run_error<ProgramError>(R"PY(
import jax
import jax.numpy as jnp
w = jnp.array(2)
def f(x):
    if w > 1:
        return x
    return x
jax.pmap(f)(jnp.arange(4))
)PY");
  CHECK(r.kind == "TracerBoolConversionError");
  CHECK(r.where.line == 6);
}

TEST_CASE("python::tracing: print inside pmap prints once, abstract, with a warning", "[python][tracing][print]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
def f(x):
    y = x * 2
    for _ in range(3):
        print("y is", y, y.shape, 'static', 7)
    return y
out = jax.pmap(f)(jnp.zeros((4, 10)))
print(out.shape)
)PY");
  CHECK(r.out ==
        "y is Traced<float32[10]>with<DynamicJaxprTrace> (10,) static 7\n"
        "y is Traced<float32[10]>with<DynamicJaxprTrace> (10,) static 7\n"
        "y is Traced<float32[10]>with<DynamicJaxprTrace> (10,) static 7\n"
        "(4, 10)\n");
  CHECK(r.err ==
        "warning: t.py:7: print() inside a pmap-ed function runs once while tracing and shows abstract values, not "
        "per-device data; use jax.debug.print(\"{x}\", x=x) instead\n");
  // f-strings and repr of traced values are abstract too.
  r = run("import jax\nimport jax.numpy as jnp\ndef f(x):\n    print(f'{x} {x!r}', [x])\n    return x\n"
          "jax.pmap(f)(jnp.zeros(4, dtype=jnp.int32))\n");
  CHECK(r.out ==
        "Traced<int32[]>with<DynamicJaxprTrace> Traced<int32[]>with<DynamicJaxprTrace> "
        "[Traced<int32[]>with<DynamicJaxprTrace>]\n");
}

TEST_CASE("python::tracing: side effects happen once, with a warning", "[python][tracing][side-effects]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
results = []
calls = {'n': 0}
count = 0
def f(x):
    global count
    results.append(x)
    calls['n'] = calls['n'] + 1
    count += 1
    local = []
    local.append(x)
    return x * len(local)
out = jax.pmap(f)(jnp.arange(4))
print(len(results), calls, count, out)
)PY");
  CHECK(r.out == "1 {'n': 1} 1 [0 1 2 3]\n");
  CHECK(r.err ==
        "warning: t.py:9: side effect inside a pmap-ed function: appending to 'results' (defined outside the "
        "function) happens once while tracing, not once per device, and stores a tracer; return values from the "
        "function instead\n"
        "warning: t.py:10: side effect inside a pmap-ed function: assigning to an item of 'calls' (defined outside "
        "the function) happens once while tracing, not once per device; return values from the function instead\n"
        "warning: t.py:11: side effect inside a pmap-ed function: assigning to global 'count' (defined outside the "
        "function) happens once while tracing, not once per device; return values from the function instead\n");

  auto n = run(R"PY(
import jax
import jax.numpy as jnp
def outer():
    seen = []
    total = 0
    def f(x):
        nonlocal total
        seen.extend([1])
        total = total + 1
        return x
    jax.pmap(f)(jnp.arange(4))
    return seen, total
print(outer())
)PY");
  CHECK(n.out == "([1], 1)\n");
  CHECK_THAT(n.err, Catch::Contains("warning: t.py:9: side effect inside a pmap-ed function: extending 'seen'"));
  CHECK_THAT(n.err, Catch::Contains("warning: t.py:10: side effect inside a pmap-ed function: assigning to nonlocal 'total'"));
}

TEST_CASE("python::tracing: a leaked tracer used on the host", "[python][tracing][side-effects]") {
  Report r = run_error<ProgramError>(R"PY(
import jax
import jax.numpy as jnp
leaked = []
def f(x):
    leaked.append(x * 2)
    return x
jax.pmap(f)(jnp.arange(4))
y = leaked[0] + 1
)PY");
  CHECK(r.kind == "UnexpectedTracerError");
  CHECK_THAT(r.message, Catch::StartsWith("Encountered an unexpected tracer. A function transformed by JAX had a side "
                                          "effect, allowing for a reference to an intermediate value with type int32[] "
                                          "to escape the scope of the transformation."));
  CHECK(r.where.line == 9);
  CHECK(r.source_line == "y = leaked[0] + 1");
  // Shown on the host, an escaped value is a tracer, as JAX prints it.
  auto shown = run("import jax\nimport jax.numpy as jnp\nleaked = []\ndef f(x):\n    leaked.append(x)\n    return x\n"
                   "jax.pmap(f)(jnp.arange(4.0))\nprint(leaked)\n");
  CHECK(shown.out == "[Traced<float32[]>with<DynamicJaxprTrace>]\n");
  r = run_error<ProgramError>("import jax\nimport jax.numpy as jnp\nleaked = []\ndef f(x):\n    leaked.append(x)\n"
                              "    return x\njax.pmap(f)(jnp.arange(4.0))\nif leaked[0]:\n    pass\n");
  CHECK(r.kind == "UnexpectedTracerError");
  CHECK(r.where.line == 8);
  // Passed to another pmap (issue 36, finding 22: was "IndexError: tuple index out of range"; JAX 0.8.1 takes
  // the per-device scalar for an argument of rank 0 and raises its in_axes ValueError): the escape, where it is.
  r = run_error<ProgramError>("import jax\nimport jax.numpy as jnp\nleaked = []\ndef f(x):\n    leaked.append(x)\n"
                              "    return x\njax.pmap(f)(jnp.arange(4.0))\njax.pmap(lambda y: y + 1)(leaked[0])\n");
  CHECK(r.kind == "UnexpectedTracerError");
  CHECK_THAT(r.message, Catch::Contains("with type float32[] to escape"));
  CHECK(r.where.line == 8);
}

TEST_CASE("python::tracing: jax.disable_jit makes values concrete per device", "[python][tracing][disable-jit]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
log = []
def f(x):
    if x > 1:
        print('big', x)
    else:
        print('small', x)
    log.append(int(x))
    return x + 1
with jax.disable_jit():
    out = jax.pmap(f)(jnp.arange(4))
print(out, sorted(log))
jax.config.update('jax_disable_jit', True)
print(jax.pmap(lambda v: float(v) * 2)(jnp.arange(2.0)))
jax.config.update('jax_disable_jit', False)
)PY");
  CHECK(r.out ==
        "small 0\n"
        "small 1\n"
        "big 2\n"
        "big 3\n"
        "[1 2 3 4] [0, 1, 2, 3]\n"
        "[0. 2.]\n");
  CHECK(r.err.empty());
}

TEST_CASE("python::tracing: print under disable_jit comes out in device order whatever the schedule",
          "[python][tracing][disable-jit]") {
  // Seeded single-thread schedules run the devices in different orders, and
  // several threads run them at once; the output orders by collectives done,
  // then device: the psum splits each device's prints into two groups.
  const char* src = R"PY(
import jax
import jax.numpy as jnp
def f(x):
    print('before', int(x))
    s = jax.lax.psum(x, 'i')
    print('after', int(x), int(s))
    return s
with jax.disable_jit():
    out = jax.pmap(f, axis_name='i')(jnp.arange(4))
print(out)
)PY";
  const std::string expected =
      "before 0\nbefore 1\nbefore 2\nbefore 3\n"
      "after 0 6\nafter 1 6\nafter 2 6\nafter 3 6\n"
      "[6 6 6 6]\n";
  for (int threads : {1, 3}) {
    for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
      auto r = run(src, 4, [&](RuntimeOptions& o) {
        o.threads = threads;
        o.seed = seed;
      });
      INFO("threads " << threads << ", seed " << seed);
      CHECK(r.out == expected);
      CHECK(r.err.empty());
    }
  }
}

TEST_CASE("python::tracing: deep recursion in a device is a RecursionError, not a crash", "[python][tracing][errors]") {
  Report r = run_error<ProgramError>(R"PY(
import jax
import jax.numpy as jnp
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
def f(x):
    return x + depth(100000)
jax.pmap(f)(jnp.arange(4))
)PY");
  CHECK(r.kind == "RecursionError");
  CHECK(r.where.line == 5);
  CHECK(r.device == -1);  // while tracing f, on the host
  // Under disable_jit the Python function runs on each device's fiber.
  r = run_error<ProgramError>(R"PY(
import jax
import jax.numpy as jnp
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
def f(x):
    return x + depth(100000)
with jax.disable_jit():
    jax.pmap(f)(jnp.arange(4))
)PY");
  CHECK(r.kind == "RecursionError");
  CHECK(r.where.line == 5);
  // Moderate recursion works inside devices (about 150 levels fit a 256 KiB
  // fiber stack in optimised builds; fewer in sanitizer builds).
  auto ok = run(R"PY(
import jax
import jax.numpy as jnp
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
print(jax.pmap(lambda x: x + depth(30))(jnp.arange(4)))
)PY");
  CHECK(ok.out == "[30 31 32 33]\n");
  // A larger fiber stack allows deeper recursion.
  auto deep = run(R"PY(
import jax
import jax.numpy as jnp
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
print(jax.pmap(lambda x: x + depth(180))(jnp.arange(2)))
)PY", 2, [](RuntimeOptions& o) { o.fiber_stack_size = std::size_t{2} << 20; });
  CHECK(deep.out == "[180 181]\n");
}

TEST_CASE("python::tracing: measure the Python call depth a device stack allows", "[.measure]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
def probe(n):
    return 0 if n == 0 else 1 + probe(n - 1)
def deepest():
    ok = 0
    for n in range(10, 400, 10):
        try:
            probe(n)
            ok = n
        except RecursionError:
            break
    return ok
def f(x):
    return x + deepest()
print('host', deepest(), 'device', jax.pmap(f)(jnp.arange(1))[0])
)PY", 1);
  WARN(r.out);
}

TEST_CASE("python::perf: interpreter throughput", "[.perf]") {
  auto t0 = std::chrono::steady_clock::now();
  auto r = run(R"PY(
total = 0
for i in range(200000):
    total += i % 7
print(total)
)PY", 1);
  auto t1 = std::chrono::steady_clock::now();
  auto p = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    acc = x
    for i in range(2000):
        acc = acc * 0.5 + 1.0
    return lax.psum(acc, 'i')
print(jax.pmap(f, axis_name='i')(jnp.ones((8, 16))).shape)
)PY", 8);
  auto t2 = std::chrono::steady_clock::now();
  WARN(r.out << p.out << "host loop 200k: " << std::chrono::duration<double>(t1 - t0).count()
             << " s; 8 devices x 2000 jnp steps: " << std::chrono::duration<double>(t2 - t1).count() << " s");
}
