// How spmdsim reports the user's Python errors on the CPython front end: the
// exception's class and message, the user's innermost frame with its PEP 657
// column, CPython's traceback without spmdsim's frames, and hints (imports,
// spelling). Python itself is CPython's: its semantics are not retested here.

#include "frontend_test_util.h"

using namespace spmd;
using spmd::python::testing::run;
using spmd::python::testing::run_error;

TEST_CASE("python::errors: NameError with import hints and spelling hints", "[python][errors]") {
  Report r = run_error<ProgramError>("import jax\nx = jnp.zeros(3)\n");
  CHECK(r.kind == "NameError");
  CHECK(r.message == "name 'jnp' is not defined");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 5);
  CHECK(r.source_line == "x = jnp.zeros(3)");
  CHECK(r.hint == "add `import jax.numpy as jnp` at the top of the program");

  r = run_error<ProgramError>("results = []\nresuts.append(1)\n");
  CHECK(r.message == "name 'resuts' is not defined");
  CHECK(r.hint == "did you mean 'results'?");

  r = run_error<ProgramError>("def f():\n    print(y)\n    y = 1\nf()\n");
  CHECK(r.kind == "UnboundLocalError");
  CHECK(r.message == "cannot access local variable 'y' where it is not associated with a value");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 11);
}

TEST_CASE("python::errors: Python errors carry kind, message, position and traceback", "[python][errors]") {
  Report r = run_error<ProgramError>("def g(x):\n    return x + 'a'\ndef f():\n    return g(1)\nf()\n");
  CHECK(r.kind == "TypeError");
  CHECK(r.message == "unsupported operand type(s) for +: 'int' and 'str'");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 12);
  CHECK(r.source_line == "    return x + 'a'");
  // CPython's own traceback text, carets included, then the exception line.
  const std::vector<std::string> traceback = {
      "Traceback (most recent call last):",
      "  File \"t.py\", line 5, in <module>",
      "    f()",
      "  File \"t.py\", line 4, in f",
      "    return g(1)",
      "           ^^^^",
      "  File \"t.py\", line 2, in g",
      "    return x + 'a'",
      "           ~~^~~~~",
      "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
  };
  CHECK(r.details == traceback);

  r = run_error<ProgramError>("x = [1, 2]\ny = x[5]\n");
  CHECK(r.kind == "IndexError");
  CHECK(r.message == "list index out of range");
  CHECK(r.where.line == 2);

  r = run_error<ProgramError>("d = {'a': 1}\nd['b']\n");
  CHECK(r.kind == "KeyError");
  CHECK(r.message == "'b'");

  r = run_error<ProgramError>("x = 1 // 0\n");
  CHECK(r.kind == "ZeroDivisionError");
  CHECK(r.message == "integer division or modulo by zero");

  r = run_error<ProgramError>("x = (1).foo\n");
  CHECK(r.kind == "AttributeError");
  CHECK(r.message == "'int' object has no attribute 'foo'");

  r = run_error<ProgramError>("def f(a, b):\n    pass\nf(1)\n");
  CHECK(r.kind == "TypeError");
  CHECK(r.message == "f() missing 1 required positional argument: 'b'");
  CHECK(r.where.line == 3);

  r = run_error<ProgramError>("def f(a):\n    pass\nf(1, 2)\n");
  CHECK(r.message == "f() takes 1 positional argument but 2 were given");

  r = run_error<ProgramError>("def f(a):\n    pass\nf(a=1, bb=2)\n");
  CHECK(r.message == "f() got an unexpected keyword argument 'bb'");

  r = run_error<ProgramError>("a, b = [1, 2, 3]\n");
  CHECK(r.kind == "ValueError");
  CHECK(r.message == "too many values to unpack (expected 2)");

  r = run_error<ProgramError>("assert 1 == 2, 'numbers differ'\n");
  CHECK(r.kind == "AssertionError");
  CHECK(r.message == "numbers differ");
  CHECK(r.where.line == 1);

  r = run_error<ProgramError>("x = 3\nassert x > 5\n");
  CHECK(r.message == "assert x > 5");

  r = run_error<ProgramError>("raise ValueError('custom')\n");
  CHECK(r.kind == "ValueError");
  CHECK(r.message == "custom");

  r = run_error<ProgramError>("import torch\n");
  CHECK(r.kind == "ModuleNotFoundError");
  CHECK(r.message == "No module named 'torch'");

  r = run_error<ProgramError>("from jax import pmapp\n");
  CHECK(r.kind == "ImportError");
  CHECK_THAT(r.message, Catch::StartsWith("cannot import name 'pmapp' from 'jax' ("));
  CHECK(r.hint == "did you mean 'pmap'?");

  r = run_error<ProgramError>("x = 1\nx()\n");
  CHECK(r.message == "'int' object is not callable");

  r = run_error<ProgramError>("import jax.numpy as jnp\nx = jnp.cumsun(jnp.ones(3))\n");
  CHECK(r.kind == "AttributeError");
  CHECK(r.message == "module 'jax.numpy' has no attribute 'cumsun'");
  CHECK(r.hint == "did you mean 'cumsum'?");
}

TEST_CASE("python::errors: deep recursion is a RecursionError", "[python][errors]") {
  Report r = run_error<ProgramError>("def f(n):\n    return f(n + 1)\nf(0)\n");
  CHECK(r.kind == "RecursionError");
  CHECK(r.message == "maximum recursion depth exceeded");
  CHECK(r.where.line == 2);
  // The traceback folds the repeated frames.
  bool folded = false;
  for (const auto& d : r.details) folded = folded || d.find("[Previous line repeated") != std::string::npos;
  CHECK(folded);
}

TEST_CASE("python::errors: deep and huge data never crash", "[python][errors]") {
  // spmdsim's pytree code recurses in Python: a RecursionError, not a crash.
  Report e = run_error<ProgramError>("import jax\nx = []\nfor i in range(100000):\n    x = [x]\njax.tree_util.tree_leaves(x)\n");
  CHECK(e.kind == "RecursionError");
  CHECK(e.where.line == 5);
  e = run_error<ProgramError>("x = [0] * 10**12\n");
  CHECK(e.kind == "MemoryError");
  // A huge array request is a clear error before any allocation: what it needs, where.
  Report huge = run_error<OutOfMemoryError>("import jax.numpy as jnp\nx = jnp.zeros((10**6, 10**6))\n");
  CHECK(huge.message == "host: out of memory computing broadcast_in_dim (f32[1000000,1000000], 3.6 TiB)");
  CHECK(huge.where.line == 2);
}

TEST_CASE("python::errors: a value's own __array__ error surfaces, and only jnp.asarray calls __jax_array__", "[python][errors]") {
  // Issue 36, finding 24: both were "TypeError: Value ... is not a valid JAX type". Where JAX 0.8.1 differs
  // (tests/conformance/user_array_protocols.py has where it agrees): jit of such a value raises JAX's own
  // TypeError, and pmap of a __jax_array__ object its rank-0 in_axes error; spmdsim raises what went wrong.
  Report r = run_error<ProgramError>(R"PY(import jax
class BrokenArray:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError('broken __array__')
jax.jit(lambda x: x)(BrokenArray())
)PY");
  CHECK(r.kind == "RuntimeError");
  CHECK(r.message == "broken __array__");
  CHECK(r.where.line == 4);
  r = run_error<ProgramError>(R"PY(import jax
import jax.numpy as jnp
class Wrapped:
    def __jax_array__(self):
        return jnp.ones(2)
jax.pmap(lambda x: x)(Wrapped())
)PY");
  CHECK(r.kind == "ValueError");
  CHECK_THAT(r.message, Catch::StartsWith("Triggering __jax_array__() during abstractification is no longer supported."));
  CHECK(r.hint == "the value is a Wrapped: pass jnp.asarray(value) instead, which calls its __jax_array__");
  CHECK(r.where.line == 6);
}

TEST_CASE("python::errors: positions inside f-strings, Unicode names, function attributes", "[python][errors]") {
  Report r = run_error<ProgramError>("x = 1\ns = f'value: {x + undefined_name}'\n");
  CHECK(r.kind == "NameError");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 19);

  r = run_error<ProgramError>("s = f'''first line\n{1 / 0}'''\n");
  CHECK(r.kind == "ZeroDivisionError");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 2);

  auto out = run("数据 = [1, 2]\n总和 = sum(数据)\nprint(f'总和={总和}')\ndef f():\n    pass\nf.calls = 3\nprint(f.calls)\n");
  CHECK(out.out == "总和=3\n3\n");

  auto side = run(R"PY(
import jax
import jax.numpy as jnp
def tag():
    pass
def f(x):
    tag.last = x
    return x
jax.pmap(f)(jnp.arange(2))
)PY", 2);
  CHECK_THAT(side.err, Catch::Contains("warning: t.py:7: side effect inside a pmap-ed function: setting attribute 'last' of 'tag'"));
}

TEST_CASE("python::errors: jax.debug.print refuses field widths past the bound, on the host and on devices",
          "[python][errors]") {
  Report r = run_error<ProgramError>("import jax, jax.numpy as jnp\njax.debug.print('{:99999999999}', jnp.float32(1))\n");
  CHECK(r.kind == "ValueError");
  CHECK(r.message == "format spec '99999999999': the width is larger than 1000000");
  CHECK(r.where.line == 2);
  r = run_error<ProgramError>(
      "import jax, jax.numpy as jnp\nf = jax.pmap(lambda x: jax.debug.print('{:.99999999}', x))\nf(jnp.arange(2.0))\n");
  CHECK(r.message == "format spec '.99999999': the precision is larger than 1000000");
  CHECK(r.where.line == 2);
  auto out = run("import jax, jax.numpy as jnp\njax.debug.print('{:>8.3f}|{:08}|{:x>5}', jnp.float32(1), 7, 3)\n");
  CHECK(out.out == "   1.000|00000007|xxxx3\n");
}

TEST_CASE("python::errors: a source that is not UTF-8 is CPython's SyntaxError at the byte", "[python][errors]") {
  // Issue 19, finding 21: a truncated character was "'(' was never closed".
  Report r = run_error<SyntaxError>("import jax\nprint((1, 2\xc3");
  CHECK(r.message ==
        "Non-UTF-8 code starting with '\\xc3' in file t.py on line 2, but no encoding declared; see "
        "https://peps.python.org/pep-0263/ for details");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 12);
  auto out = run("# -*- coding: latin-1 -*-\nprint('caf\xe9')\n");
  CHECK(out.out == "caf\xc3\xa9\n");
}
