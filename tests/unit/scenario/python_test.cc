// Python semantics of the scenario interpreter on the host: values, printing,
// control flow, functions and closures, containers, exceptions and builtins.

#include "scenario_test_util.h"

using namespace spmd;
using spmd::scenario::testing::run;
using spmd::scenario::testing::run_error;

TEST_CASE("scenario::Interpreter: printing values like Python", "[scenario][python]") {
  auto r = run(R"PY(
print(1, 2.0, 0.1, 1e-05, 1e16, 123456789.0, -0.0, 3/2, 7//2, -7//2, 7 % -3, 2**10, 2**-1)
print(True, None, 'a', [1, 'b', (2,)], (), (1,), {'k': [1.5]}, {1, 2}, set())
print(repr('it\'s'), repr("a\nb"), str(1.5), repr(1.0))
print(float('inf'), float('-inf'), float('nan'), int('42'), int(3.9), int(-3.9))
print(1, 2, 3, sep='-', end='!\n')
print(round(2.5), round(3.5), round(2.675, 2), round(1234, -2), abs(-3), abs(-2.5))
print(divmod(7, 2), pow(2, 10), pow(2, 10, 1000), min(3, 1, 2), max([4, 9, 2]), sum([1, 2, 3], 10))
print(hex(255), bin(5), oct(8), chr(65), ord('a'), len('中文'))
import time
t0 = time.perf_counter()
print(time.perf_counter() >= t0, time.time() > 1e9)
)PY");
  CHECK(r.out ==
        "1 2.0 0.1 1e-05 1e+16 123456789.0 -0.0 1.5 3 -4 -2 1024 0.5\n"
        "True None a [1, 'b', (2,)] () (1,) {'k': [1.5]} {1, 2} set()\n"
        "\"it's\" 'a\\nb' 1.5 1.0\n"
        "inf -inf nan 42 3 -3\n"
        "1-2-3!\n"
        "2 4 2.67 1200 3 2.5\n"
        "(3, 1) 1024 24 1 9 16\n"
        "0xff 0b101 0o10 A 97 2\n"
        "True True\n");
  CHECK(r.err.empty());
}

TEST_CASE("scenario::Interpreter: f-strings, format specs, str.format and %", "[scenario][python]") {
  auto r = run(R"PY(
x = 3.14159
n = 42
s = 'hi'
print(f"{x:.3f}|{n:5d}|{n:<5}|{n:^6}|{n:05d}|{x:e}|{x:10.2f}|{n:,}|{1234567.891:,.2f}|{0.25:%}")
print(f"{s!r} {s:>4} {s:*^6} {n:x} {n:#x} {n:b} {x=} {n + 1 = }")
print(f"{{literal}} {x:.{n // 20}f} {'nested' + s}")
print("{} and {}".format(1, 'two'), "{1}{0}".format('a', 'b'), "{name}:{val:.1f}".format(name='v', val=2.25))
print("%d items, %.2f, %s, %r, %5.1f%%" % (3, 2.5, 'x', 'y', 99.5))
print("{0[1]} {0[0]}".format([7, 8]), "{:>3}".format(1), format(1.5, '.0f'), format(2.5, '.0f'))
print(f"{1.0:.3}", f"{1234.5:.3}", f"{True}", f"{None}")
)PY");
  CHECK(r.out ==
        "3.142|   42|42   |  42  |00042|3.141590e+00|      3.14|42|1,234,567.89|25.000000%\n"
        "'hi'   hi **hi** 2a 0x2a 101010 x=3.14159 n + 1 = 43\n"
        "{literal} 3.14 nestedhi\n"
        "1 and two ba v:2.2\n"
        "3 items, 2.50, x, 'y',  99.5%\n"
        "8 7   1 2 2\n"
        "1.0 1.23e+03 True None\n");
}

TEST_CASE("scenario::Interpreter: an f-string next to plain strings concatenates", "[scenario][python]") {
  // `f'a' 'd'` used to loop forever in the parser (found by tools/fuzz.sh).
  auto r = run(R"PY(
n = 2
print(f'a' 'd', 'x' f'{n + 1}' 'y', f'{n}' f'{n}' "z")
)PY");
  CHECK(r.out == "ad x3y 22z\n");
}

TEST_CASE("scenario::Interpreter: control flow", "[scenario][python]") {
  auto r = run(R"PY(
out = []
for i in range(10):
    if i % 2 == 0:
        continue
    if i > 7:
        break
    out.append(i)
else:
    out.append('no-break')
print(out)
n = 0
while n < 3:
    n += 1
else:
    print('while-else', n)
for i, (a, b) in enumerate(zip('xy', [1, 2]), start=1):
    print(i, a, b)
for k in {'b': 1, 'a': 2}:
    print(k, end=' ')
print()
for k, v in {'b': 1, 'a': 2}.items():
    print(k, v, end='; ')
print()
print([x * y for x in range(3) for y in range(3) if x != y])
print({k: k * k for k in range(4) if k % 2}, {c for c in 'aab'}, sum(x for x in range(5)))
print(1 < 2 < 3, 1 < 3 < 2, 'a' if 0 else 'b', 0 or 'z', 1 and 'y', not [])
a, *rest, z = range(5)
print(a, rest, z)
(p, q), r2 = [1, 2], 3
print(p, q, r2)
)PY");
  CHECK(r.out ==
        "[1, 3, 5, 7]\n"
        "while-else 3\n"
        "1 x 1\n"
        "2 y 2\n"
        "b a \n"
        "b 1; a 2; \n"
        "[0, 0, 0, 2, 0, 2]\n"
        "{1: 1, 3: 9} {'a', 'b'} 10\n"
        "True False b z y True\n"
        "0 [1, 2, 3] 4\n"
        "1 2 3\n");
}

TEST_CASE("scenario::Interpreter: functions, defaults, *args/**kwargs, closures", "[scenario][python]") {
  auto r = run(R"PY(
def f(a, b=2, *args, c, d=4, **kw):
    return (a, b, args, c, d, kw)
print(f(1, c=3))
print(f(1, 5, 6, 7, c=3, e=8))
print(f(*[1, 2], **{'c': 9, 'd': 10}))

def counter():
    count = 0
    def inc(step=1):
        nonlocal count
        count += step
        return count
    return inc
c = counter()
c(); c(5)
print(c())

total = 0
def add(x):
    global total
    total += x
add(3); add(4)
print(total)

fs = [lambda x, i=i: x + i for i in range(3)]
print([g(10) for g in fs])
late = [lambda: i for i in range(3)]
print([g() for g in late])

def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)
print(fact(20))

def deco(fn):
    def wrapper(*a, **k):
        return ('wrapped', fn(*a, **k))
    return wrapper

@deco
def hello(name):
    return 'hi ' + name
print(hello('bob'), hello.__name__)
from functools import partial, reduce
p = partial(f, 1, c=0)
print(p(2), reduce(lambda x, y: x * y, [1, 2, 3, 4]))
print(sorted([3, 1, 2], reverse=True), sorted(['bb', 'a', 'ccc'], key=len), list(reversed([1, 2, 3])))
print(list(map(lambda x: x * 2, [1, 2])), list(filter(None, [0, 1, 2])), any([0, 0]), all([]))
print(isinstance(1, int), isinstance(True, int), isinstance(1.0, (int, str)), type(1.5), type([]) == list)
print(getattr([], 'append').__name__, hasattr('x', 'upper'), hasattr(1, 'nope'), callable(len))
)PY");
  CHECK(r.out ==
        "(1, 2, (), 3, 4, {})\n"
        "(1, 5, (6, 7), 3, 4, {'e': 8})\n"
        "(1, 2, (), 9, 10, {})\n"
        "7\n"
        "7\n"
        "[10, 11, 12]\n"
        "[2, 2, 2]\n"
        "2432902008176640000\n"
        "('wrapped', 'hi bob') wrapper\n"
        "(1, 2, (), 0, 4, {}) 24\n"
        "[3, 2, 1] ['a', 'bb', 'ccc'] [3, 2, 1]\n"
        "[2, 4] [1, 2] False True\n"
        "True True False <class 'float'> True\n"
        "append True False True\n");
}

TEST_CASE("scenario::Interpreter: containers and their methods", "[scenario][python]") {
  auto r = run(R"PY(
l = [3, 1, 2]
l.append(4); l.extend([5]); l.insert(0, 0); l.remove(3)
print(l, l.pop(), l.pop(0), l.index(2), l.count(1), l[::-1], l[1:], l[-1])
l.sort(); l.reverse()
print(l, l + [9], l * 2, 2 in l, 7 not in l)
l[0] = 'x'; l[1:2] = ['a', 'b']; del l[-1]
print(l)
d = {'a': 1}
d['b'] = 2; d.update(c=3); d.setdefault('a', 9); d.setdefault('z', 0)
print(d, d.get('q'), d.get('q', 5), d.pop('z'), list(d.keys()), list(d.values()), len(d), 'a' in d)
del d['a']
print(d, dict(zip('xy', (1, 2))), dict([('k', 1)], j=2), {**d, 'n': 0})
s = {3, 1}
s.add(2); s.discard(9)
print(sorted(s), s | {5}, s & {1, 9}, s - {1}, {1, 2} <= {1, 2, 3})
t = (1, 2, 3)
print(t[1:], t.index(3), t + (4,), len(t), tuple([1]), list('ab'), 'a,b,,c'.split(','), ' x y '.split())
print('ab'.upper(), 'AB'.lower(), ' pad '.strip(), '-'.join(['a', 'b']), 'hello'.replace('l', 'L', 1),
      'abc'.startswith('ab'), 'abc'.endswith(('x', 'c')), 'abc'.find('c'), 'x'.center(5, '*'), '7'.zfill(3),
      'a b'.title(), 'abc'[1], '中文字'[1:])
)PY");
  CHECK(r.out ==
        "[1, 2, 4] 5 0 1 1 [4, 2, 1] [2, 4] 4\n"
        "[4, 2, 1] [4, 2, 1, 9] [4, 2, 1, 4, 2, 1] True True\n"
        "['x', 'a', 'b']\n"
        "{'a': 1, 'b': 2, 'c': 3} None 5 0 ['a', 'b', 'c'] [1, 2, 3] 3 True\n"
        "{'b': 2, 'c': 3} {'x': 1, 'y': 2} {'k': 1, 'j': 2} {'b': 2, 'c': 3, 'n': 0}\n"
        "[1, 2, 3] {1, 2, 3, 5} {1} {2, 3} True\n"
        "(2, 3) 2 (1, 2, 3, 4) 3 (1,) ['a', 'b'] ['a', 'b', '', 'c'] ['x', 'y']\n"
        "AB ab pad a-b heLlo True True 2 **x** 007 A B b 文字\n");
}

TEST_CASE("scenario::Interpreter: try/except/finally and raise", "[scenario][python]") {
  auto r = run(R"PY(
def risky(k):
    if k == 0:
        raise ValueError("bad value")
    if k == 1:
        return [1][5]
    if k == 2:
        return {}['missing']
    if k == 3:
        return 1 / 0
    return 'ok'
for k in range(5):
    try:
        print('result', risky(k))
    except (IndexError, KeyError) as e:
        print('lookup', type(e).__name__, e)
    except ArithmeticError as e:
        print('arith', e)
    except Exception as e:
        print('other', repr(e))
    else:
        print('no error')
    finally:
        print('finally', k)
try:
    try:
        raise TypeError('inner')
    except TypeError:
        raise
except TypeError as e:
    print('reraised', e)
def g():
    try:
        return 'from try'
    finally:
        print('cleanup')
print(g())
)PY");
  CHECK(r.out ==
        "other ValueError('bad value')\n"
        "finally 0\n"
        "lookup IndexError list index out of range\n"
        "finally 1\n"
        "lookup KeyError 'missing'\n"
        "finally 2\n"
        "arith division by zero\n"
        "finally 3\n"
        "result ok\n"
        "no error\n"
        "finally 4\n"
        "reraised inner\n"
        "cleanup\n"
        "from try\n");
}

TEST_CASE("scenario::Interpreter: NameError with import hints and spelling hints", "[scenario][python][errors]") {
  Report r = run_error<ProgramError>("import jax\nx = jnp.zeros(3)\n");
  CHECK(r.kind == "NameError");
  CHECK(r.message == "name 'jnp' is not defined");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 5);
  CHECK(r.source_line == "x = jnp.zeros(3)");
  CHECK(r.hint == "add `import jax.numpy as jnp`");

  r = run_error<ProgramError>("results = []\nresuts.append(1)\n");
  CHECK(r.message == "name 'resuts' is not defined");
  CHECK(r.hint == "did you mean 'results'?");

  r = run_error<ProgramError>("def f():\n    print(y)\n    y = 1\nf()\n");
  CHECK(r.kind == "UnboundLocalError");
  CHECK(r.message == "cannot access local variable 'y' where it is not associated with a value");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 11);
}

TEST_CASE("scenario::Interpreter: Python errors carry kind, message, position and traceback", "[scenario][python][errors]") {
  Report r = run_error<ProgramError>("def g(x):\n    return x + 'a'\ndef f():\n    return g(1)\nf()\n");
  CHECK(r.kind == "TypeError");
  CHECK(r.message == "unsupported operand type(s) for +: 'int' and 'str'");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 12);
  CHECK(r.source_line == "    return x + 'a'");
  REQUIRE(r.details.size() == 7);
  CHECK(r.details[0] == "Traceback (most recent call last):");
  CHECK(r.details[1] == "  t.py:5 in <module>");
  CHECK(r.details[2] == "    f()");
  CHECK(r.details[3] == "  t.py:4 in f");
  CHECK(r.details[4] == "    return g(1)");
  CHECK(r.details[5] == "  t.py:2 in g");
  CHECK(r.details[6] == "    return x + 'a'");

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
  CHECK(r.message == "cannot import name 'pmapp' from 'jax'");
  CHECK(r.hint == "did you mean 'pmap'?");

  r = run_error<ProgramError>("x = 1\nx()\n");
  CHECK(r.message == "'int' object is not callable");

  r = run_error<ProgramError>("open('f')\n");
  CHECK(r.kind == "NotImplementedError");
}

TEST_CASE("scenario::Interpreter: deep recursion is a RecursionError", "[scenario][python][errors]") {
  Report r = run_error<ProgramError>("def f(n):\n    return f(n + 1)\nf(0)\n");
  CHECK(r.kind == "RecursionError");
  CHECK(r.message == "maximum recursion depth exceeded");
  CHECK(r.where.line == 2);
  // The traceback folds the repeated frames.
  bool folded = false;
  for (const auto& d : r.details) folded = folded || d.find("[Previous line repeated") != std::string::npos;
  CHECK(folded);
}

TEST_CASE("scenario::Interpreter: deep and huge data never crash", "[scenario][python][errors]") {
  // Deeply nested containers are freed without deep C++ recursion.
  auto r = run("x = []\nfor i in range(200000):\n    x = [x]\nt = ()\nfor i in range(200000):\n    t = (t, i)\nprint('built')\n");
  CHECK(r.out == "built\n");
  // Hashing, comparing and flattening them is a RecursionError.
  Report e = run_error<ProgramError>("t = ()\nfor i in range(5000):\n    t = (t,)\nd = {t: 1}\n");
  CHECK(e.kind == "RecursionError");
  CHECK(e.where.line == 4);
  e = run_error<ProgramError>("x = []\nfor i in range(100000):\n    x = [x]\ny = [[]]\nfor i in range(100000):\n    y = [y]\nprint(x == y)\n");
  CHECK(e.kind == "RecursionError");
  e = run_error<ProgramError>("import jax\nx = []\nfor i in range(100000):\n    x = [x]\njax.tree_util.tree_leaves(x)\n");
  CHECK(e.kind == "RecursionError");
  CHECK(e.where.line == 5);
  e = run_error<ProgramError>("x = [0] * 10**12\n");
  CHECK(e.kind == "MemoryError");
  e = run_error<ProgramError>("x = list(range(10**12))\n");
  CHECK(e.kind == "MemoryError");
  // A long operator chain is a syntax error, not a stack overflow.
  std::string chain = "x = 1";
  for (int i = 0; i < 1500; ++i) chain += " + 1";
  Report p = spmd::scenario::testing::parse_error(chain + "\n");
  CHECK(p.kind == "SyntaxError");
  CHECK(p.message == "expression too long: more than 1000 chained operations");
}

TEST_CASE("scenario::Interpreter: positions inside f-strings, Unicode names, function attributes", "[scenario][python]") {
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
