// Lexer and parser: every construct parses; errors carry Python's messages
// and the exact position.

#include <string>

#include "scenario/ast.h"
#include "scenario/lexer.h"
#include "scenario/parser.h"
#include "scenario_test_util.h"

using namespace spmd;
using namespace spmd::scenario;
using spmd::scenario::testing::parse_error;

namespace {

std::vector<Token> lex(std::string_view text) {
  SourceText src("t.py", text);
  return tokenize(src);
}

std::string kinds(const std::vector<Token>& toks) {
  std::string s;
  for (const auto& t : toks) {
    switch (t.kind) {
      case TokenKind::kName: s += "N(" + t.text + ")"; break;
      case TokenKind::kNumber: s += "#(" + t.text + ")"; break;
      case TokenKind::kString: s += std::string(t.is_fstring ? "F" : "S") + "(" + t.text + ")"; break;
      case TokenKind::kOp: s += t.text; break;
      case TokenKind::kNewline: s += "NL"; break;
      case TokenKind::kIndent: s += "IN"; break;
      case TokenKind::kDedent: s += "DE"; break;
      case TokenKind::kEnd: s += "END"; break;
    }
    s += " ";
  }
  return s;
}

}  // namespace

TEST_CASE("scenario::Lexer: tokens, indentation and implicit line joining", "[scenario][lexer]") {
  CHECK(kinds(lex("x = 1\n")) == "N(x) = #(1) NL END ");
  CHECK(kinds(lex("if x:\n    y = (1,\n  2)\nz\n")) ==
        "N(if) N(x) : NL IN N(y) = ( #(1) , #(2) ) NL DE N(z) NL END ");
  // blank lines and comments do not produce tokens
  CHECK(kinds(lex("a\n\n   # comment\nb  # trailing\n")) == "N(a) NL N(b) NL END ");
  // backslash continuation
  CHECK(kinds(lex("a = 1 + \\\n  2\n")) == "N(a) = #(1) + #(2) NL END ");
  // operators: longest match
  CHECK(kinds(lex("a **= b // c ... -> != @ x\n")) == "N(a) **= N(b) // N(c) ... -> != @ N(x) NL END ");
  // nested dedents at end of file
  CHECK(kinds(lex("def f():\n  if x:\n    return 1")) ==
        "N(def) N(f) ( ) : NL IN N(if) N(x) : NL IN N(return) #(1) NL DE DE END ");
}

TEST_CASE("scenario::Lexer: numbers and strings", "[scenario][lexer]") {
  auto t = lex("0x1F 0o17 0b101 1_000 1.5 .5 1e3 2.")[0];
  auto toks = lex("0x1F 0o17 0b101 1_000 1.5 .5 1e3 2.");
  CHECK(toks[0].int_value == 31);
  CHECK(toks[1].int_value == 15);
  CHECK(toks[2].int_value == 5);
  CHECK(toks[3].int_value == 1000);
  CHECK(toks[4].is_float);
  CHECK(toks[4].float_value == 1.5);
  CHECK(toks[5].float_value == 0.5);
  CHECK(toks[6].float_value == 1000.0);
  CHECK(toks[7].float_value == 2.0);
  auto s = lex(R"('a\tb' "q\"" r'\n' '''x
y''' f"{x}" u'\x41\u00e9')");
  CHECK(s[0].text == "a\tb");
  CHECK(s[1].text == "q\"");
  CHECK(s[2].text == "\\n");
  CHECK(s[3].text == "x\ny");
  CHECK(s[4].is_fstring);
  CHECK(s[4].text == "{x}");
  CHECK(s[5].text == "A\xc3\xa9");
  // columns count code points: the name after Chinese text is at column 8
  auto c = lex("s = '中文' ; x");
  CHECK(c[4].text == "x");
  CHECK(c[4].pos.col == 12);
}

TEST_CASE("scenario::Lexer: errors with positions", "[scenario][lexer]") {
  Report r = parse_error("x = 'abc\ny = 2\n");
  CHECK(r.kind == "SyntaxError");
  CHECK(r.message == "unterminated string literal (detected at line 1)");
  CHECK(r.where.line == 1);
  CHECK(r.where.column == 5);
  CHECK(r.source_line == "x = 'abc");

  r = parse_error("x = '''abc\ny = 2\n");
  CHECK(r.message == "unterminated triple-quoted string literal (detected at line 3)");
  CHECK(r.where.line == 1);

  r = parse_error("x = 3 $ 4\n");
  CHECK(r.message == "invalid character '$' (U+0024)");
  CHECK(r.where.column == 7);

  r = parse_error("print(1，2)\n");
  CHECK(r.message == "invalid character '，' (U+FF0C)");
  CHECK(r.where.column == 8);
  CHECK_THAT(r.hint, Catch::Contains("ASCII ','"));

  r = parse_error("x = (1, 2\ny = 3\n");
  CHECK(r.message == "'(' was never closed");
  CHECK(r.where.line == 1);
  CHECK(r.where.column == 5);

  r = parse_error("x = [1, 2)\n");
  CHECK(r.message == "closing parenthesis ')' does not match opening parenthesis '['");
  CHECK(r.where.column == 10);

  r = parse_error("x = 1)\n");
  CHECK(r.message == "unmatched ')'");

  r = parse_error("x = 0123\n");
  CHECK_THAT(r.message, Catch::StartsWith("leading zeros in decimal integer literals are not permitted"));

  r = parse_error("x = 12abc\n");
  CHECK(r.message == "invalid decimal literal");

  r = parse_error("x = 99999999999999999999\n");
  CHECK(r.message == "integer literal too large");
}

TEST_CASE("scenario::Lexer: indentation errors", "[scenario][lexer]") {
  Report r = parse_error("if x:\n    a = 1\n  b = 2\n");
  CHECK(r.kind == "IndentationError");
  CHECK(r.message == "unindent does not match any outer indentation level");
  CHECK(r.where.line == 3);
  CHECK(r.where.column == 3);

  r = parse_error("a = 1\n    b = 2\n");
  CHECK(r.kind == "IndentationError");
  CHECK(r.message == "unexpected indent");
  CHECK(r.where.line == 2);

  r = parse_error("if x:\npass\n");
  CHECK(r.kind == "IndentationError");
  CHECK(r.message == "expected an indented block after 'if' statement on line 1");
  CHECK(r.where.line == 2);

  r = parse_error("def f():\nreturn 1\n");
  CHECK(r.message == "expected an indented block after function definition on line 1");

  r = parse_error("if x:\n\ta = 1\n        b = 2\n");
  CHECK(r.kind == "TabError");
  CHECK(r.message == "inconsistent use of tabs and spaces in indentation");
}

TEST_CASE("scenario::Parser: nesting limits give SyntaxError, not a crash", "[scenario][parser]") {
  std::string deep = "x = " + std::string(150, '(') + "1" + std::string(150, ')') + "\n";
  Report r = parse_error(deep);
  CHECK(r.kind == "SyntaxError");
  CHECK(r.message == "too many nested parentheses");
  CHECK(r.where.line == 1);
  CHECK(r.where.column == 5 + kMaxBracketDepth);

  std::string unary = "x = " + std::string(300, '-') + "1\n";
  r = parse_error(unary);
  CHECK(r.message == "too many nested parentheses");

  std::string nots = "x = " + [] {
    std::string s;
    for (int i = 0; i < 300; ++i) s += "not ";
    return s;
  }() + "y\n";
  r = parse_error(nots);
  CHECK(r.kind == "SyntaxError");

  std::string blocks;
  for (int i = 0; i < 120; ++i) blocks += std::string(static_cast<std::size_t>(i), ' ') + "if x:\n";
  blocks += std::string(120, ' ') + "pass\n";
  r = parse_error(blocks);
  CHECK(r.kind == "IndentationError");
  CHECK(r.message == "too many levels of indentation");

  // Within the limits it parses.
  std::string ok = "x = " + std::string(90, '[') + "1" + std::string(90, ']') + "\n";
  CHECK_NOTHROW(parse_source(ok, "t.py"));
}

TEST_CASE("scenario::Parser: syntax errors", "[scenario][parser]") {
  Report r = parse_error("if x = 1:\n    pass\n");
  CHECK(r.message == "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
  CHECK(r.where.column == 6);

  r = parse_error("def f()\n    return 1\n");
  CHECK(r.message == "expected ':'");
  CHECK(r.where.line == 1);
  CHECK(r.where.column == 8);

  r = parse_error("f() = 3\n");
  CHECK(r.message == "cannot assign to function call here. Maybe you meant '==' instead of '='?");
  CHECK(r.where.column == 1);

  r = parse_error("1 = x\n");
  CHECK(r.message == "cannot assign to literal here. Maybe you meant '==' instead of '='?");

  r = parse_error("None = 1\n");
  CHECK(r.message == "cannot assign to None");

  r = parse_error("x + 1 += 2\n");
  CHECK(r.message == "'expression' is an illegal expression for augmented assignment");

  r = parse_error("print 'hello'\n");
  CHECK(r.message == "Missing parentheses in call to 'print'. Did you mean print(...)?");

  r = parse_error("f(a=1, 2)\n");
  CHECK(r.message == "positional argument follows keyword argument");

  r = parse_error("f(x+1=2)\n");
  CHECK(r.message == "expression cannot contain assignment, perhaps you meant \"==\"?");

  r = parse_error("x = [1 2]\n");
  CHECK(r.message == "invalid syntax. Perhaps you forgot a comma?");
  CHECK(r.where.column == 6);

  r = parse_error("return 1\n");
  CHECK(r.message == "'return' outside function");

  r = parse_error("break\n");
  CHECK(r.message == "'break' outside loop");

  r = parse_error("def f(a=1, b):\n    pass\n");
  CHECK(r.message == "parameter without a default follows parameter with a default");

  r = parse_error("def f(a, a):\n    pass\n");
  CHECK(r.message == "duplicate argument 'a' in function definition");

  r = parse_error("def f():\n    nonlocal q\n");
  CHECK(r.message == "no binding for nonlocal 'q' found");
  CHECK(r.where.line == 2);

  r = parse_error("x = f'{}'\n");
  CHECK(r.message == "f-string: valid expression required before '}'");

  r = parse_error("x = f'{a!z}'\n");
  CHECK_THAT(r.message, Catch::StartsWith("f-string: invalid conversion character"));

  r = parse_error("x = f'a}'\n");
  CHECK(r.message == "f-string: single '}' is not allowed");

  r = parse_error("try:\n    pass\nx = 1\n");
  CHECK(r.message == "expected 'except' or 'finally' block");
}

TEST_CASE("scenario::Parser: unsupported Python gives NotImplementedError with the position", "[scenario][parser]") {
  auto unsupported = [](std::string_view src) {
    try {
      parse_source(src, "t.py");
    } catch (const ProgramError& e) {
      return e.report();
    }
    FAIL("expected NotImplementedError");
    return Report{};
  };
  Report r = unsupported("x = 1\nclass A:\n    pass\n");
  CHECK(r.kind == "NotImplementedError");
  CHECK(r.message == "class definitions is not supported by spmdsim");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 1);
  CHECK_FALSE(r.hint.empty());

  r = unsupported("def f():\n    yield 1\n");
  CHECK(r.message == "generator functions (yield) is not supported by spmdsim");
  CHECK(r.where.line == 2);
  CHECK(r.where.column == 5);

  r = unsupported("if (n := 3) > 2:\n    pass\n");
  CHECK(r.message == "assignment expressions (:=) is not supported by spmdsim");
  CHECK(r.where.column == 7);

  r = unsupported("from jax import *\n");
  CHECK(r.message == "from ... import * is not supported by spmdsim");

  r = unsupported("x = 1j\n");
  CHECK(r.message == "complex literals is not supported by spmdsim");

  r = unsupported("x = b'abc'\n");
  CHECK(r.message == "bytes literals is not supported by spmdsim");

  r = unsupported("async def f():\n    pass\n");
  CHECK(r.kind == "NotImplementedError");

  r = unsupported("x = 1\nmatch x:\n    case 1:\n        pass\n");
  CHECK(r.message == "match statements is not supported by spmdsim");
  CHECK(r.where.line == 2);
  // `match` stays usable as an ordinary name.
  CHECK_NOTHROW(parse_source("match = 3\nmatch += 1\nprint(match)\n", "t.py"));
}

TEST_CASE("scenario::Parser: every supported construct parses", "[scenario][parser]") {
  const char* program = R"PY(
import jax
import jax.numpy as jnp
from jax import lax, pmap
from functools import partial
from jax import (random,
                 numpy as np2)

@partial(jax.pmap, axis_name='i')
def f(x, y=2, *args, z, w=3, **kwargs) -> int:
    global g
    a, (b, *c) = 1, (2, 3, 4)
    a += 1; b -= 1
    d: int = 5
    e = [i * 2 for i in range(3) if i > 0]
    h = {k: v for k, v in zip('ab', [1, 2])}
    s = {1, 2}
    t = (x for x in e)
    u = lambda q, r=1: q + r
    v = x[:, 0] + x[..., None] + x[1:2:3] + x[::2]
    x = x.at[0].set(1)
    n = 1 if a else 2
    m = not a and b or c
    o = 1 < a <= 3 != b
    p = f"{a:.3f} {b!r} {c=} {{}} {d:>{a}}"
    del d
    assert a, "message"
    with jax.disable_jit():
        pass
    try:
        raise ValueError("x")
    except (ValueError, TypeError) as err:
        pass
    except Exception:
        raise
    else:
        pass
    finally:
        pass
    while a:
        break
    else:
        pass
    for i in range(3):
        continue
    if a:
        pass
    elif b:
        pass
    else:
        pass
    def inner():
        nonlocal a
        a = 2
    return x ** 2 @ y // 3 % 4 << 1 >> 1 & 1 | 2 ^ 3, -x, +x, ~x
)PY";
  auto m = parse_source(program, "t.py");
  REQUIRE(m);
  CHECK(m->body.size() == 6);
  CHECK(m->body.back()->kind == StmtKind::kFunctionDef);
}

TEST_CASE("scenario::Resolver: locals, cells, globals and comprehension scopes", "[scenario][parser]") {
  auto m = parse_source("y = 1\ndef f(a):\n    b = a\n    def g():\n        return b + y\n    return [b for b in range(a)]\n", "t.py");
  const auto& def = static_cast<const FunctionDefStmt&>(*m->body[1]);
  const ScopeInfo& s = def.code->scope;
  // `b` is captured by g: a cell; `a` and the comprehension's hidden `b` are fast locals.
  CHECK(s.cell_names == std::vector<std::string>{"b"});
  CHECK(s.fast_names.size() == 3);
  CHECK(s.fast_names[0] == "a");
  const auto& g = static_cast<const FunctionDefStmt&>(*def.code->body[1]);
  CHECK(g.code->scope.cell_names == std::vector<std::string>{"b"});
  CHECK(g.code->scope.ncellvars == 0);
  CHECK(g.code->scope.freevar_sources == std::vector<int>{0});
}
