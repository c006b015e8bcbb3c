#include "scenario/parser.h"

#include <set>
#include <string>
#include <vector>

#include "scenario/lexer.h"
#include "scenario/python_errors.h"
#include "scenario/resolver.h"

namespace spmd::scenario {

namespace {

class Parser {
 public:
  Parser(const SourceText& src, std::vector<Token> toks) : src_(src), toks_(std::move(toks)) {}

  Block parse_file();
  /// An f-string replacement field: a test list up to the end of the tokens.
  ExprPtr parse_embedded_expression();

 private:
  // --- tokens ---
  const Token& tok() const { return toks_[i_]; }
  const Token& peek(std::size_t k = 1) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
  void next() {
    if (i_ + 1 < toks_.size()) ++i_;
  }
  bool at_op(const char* op) const { return tok().is_op(op); }
  bool at_name(const char* name) const { return tok().is_name(name); }
  bool at_kind(TokenKind k) const { return tok().kind == k; }
  bool accept_op(const char* op) {
    if (!at_op(op)) return false;
    next();
    return true;
  }
  [[noreturn]] void error(Pos pos, std::string message, std::string hint = {}, std::string kind = "SyntaxError") {
    throw_syntax_error(src_, pos, std::move(message), std::move(hint), std::move(kind));
  }
  [[noreturn]] void invalid_syntax() {
    if (at_kind(TokenKind::kIndent)) error(tok().pos, "unexpected indent", {}, "IndentationError");
    if (at_kind(TokenKind::kEnd)) error(tok().pos, "unexpected EOF while parsing");
    error(tok().pos, "invalid syntax");
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) {
      if (std::string(op) == ":") error(tok().pos, "expected ':'");
      invalid_syntax();
    }
  }
  std::string expect_name(const char* what) {
    if (!at_kind(TokenKind::kName) || is_keyword(tok().text)) {
      error(tok().pos, std::string("invalid syntax: expected ") + what);
    }
    std::string s = tok().text;
    next();
    return s;
  }
  [[noreturn]] void too_long(Pos pos) {
    error(pos, "expression too long: more than " + std::to_string(kMaxChain) + " chained operations",
          "split it over several statements");
  }
  // `match subject:` followed by an indented block (match is a soft keyword).
  bool looks_like_match() const {
    const Token& n = peek();
    if (n.kind == TokenKind::kOp && n.text != "(" && n.text != "[" && n.text != "{" && n.text != "-") return false;
    if (n.kind == TokenKind::kNewline || n.kind == TokenKind::kEnd) return false;
    for (std::size_t k = i_ + 1; k < toks_.size(); ++k) {
      if (toks_[k].kind == TokenKind::kNewline) {
        return toks_[k - 1].is_op(":") && k + 1 < toks_.size() && toks_[k + 1].kind == TokenKind::kIndent;
      }
    }
    return false;
  }
  void unsupported(Pos pos, std::string what, std::string hint) {
    throw_unsupported_syntax(src_, pos, std::move(what), std::move(hint));
  }

  struct DepthGuard {
    DepthGuard(Parser& p, Pos pos) : p_(p) {
      if (++p_.expr_depth_ > kMaxExprDepth) {
        p_.error(pos, "too many nested parentheses",
                 "expressions may nest at most " + std::to_string(kMaxExprDepth) + " levels deep");
      }
    }
    ~DepthGuard() { --p_.expr_depth_; }
    Parser& p_;
  };

  // --- statements ---
  void parse_statement(Block& out);
  void parse_simple_statements(Block& out);
  StmtPtr parse_small_statement();
  Block parse_suite(const std::string& what, Pos header);
  StmtPtr parse_if(const char* keyword);
  StmtPtr parse_for();
  StmtPtr parse_while();
  StmtPtr parse_try();
  StmtPtr parse_with();
  StmtPtr parse_def(std::vector<ExprPtr> decorators);
  StmtPtr parse_expression_statement();
  StmtPtr parse_import();
  StmtPtr parse_from_import();
  void parse_params(FunctionCode& code, bool lambda);

  // --- expressions ---
  ExprPtr parse_testlist_star_expr();
  ExprPtr parse_test_or_star();
  ExprPtr parse_named_test();
  ExprPtr parse_test();
  ExprPtr parse_lambda();
  ExprPtr parse_or_test();
  ExprPtr parse_and_test();
  ExprPtr parse_not_test();
  ExprPtr parse_comparison();
  ExprPtr parse_bitor();
  ExprPtr parse_bitxor();
  ExprPtr parse_bitand();
  ExprPtr parse_shift();
  ExprPtr parse_arith();
  ExprPtr parse_term();
  ExprPtr parse_factor();
  ExprPtr parse_power();
  ExprPtr parse_atom_expr();
  ExprPtr parse_atom();
  ExprPtr parse_strings();
  ExprPtr parse_paren();
  ExprPtr parse_list_display();
  ExprPtr parse_brace_display();
  ExprPtr parse_call(ExprPtr func);
  ExprPtr parse_subscript(ExprPtr value);
  ExprPtr parse_slice_item();
  ExprPtr parse_target_list();
  void parse_comprehension(CompExpr& comp);
  void check_missing_comma(const Expr& previous, const char* closer);

  // --- f-strings ---
  void parse_fstring_body(FStringExpr& out, const std::string& body, Pos start, bool raw, int depth);

  // --- targets ---
  enum class TargetCtx { kAssign, kFor, kDelete, kAugAssign, kWith };
  void check_target(const Expr& e, TargetCtx ctx, bool top = true);

  const SourceText& src_;
  std::vector<Token> toks_;
  std::size_t i_ = 0;
  int expr_depth_ = 0;
  int func_depth_ = 0;
  int loop_depth_ = 0;
};

// ============================================================================
// statements

Block Parser::parse_file() {
  Block body;
  while (!at_kind(TokenKind::kEnd)) {
    if (at_kind(TokenKind::kNewline)) {
      next();
      continue;
    }
    parse_statement(body);
  }
  return body;
}

void Parser::parse_statement(Block& out) {
  const Token& t = tok();
  if (t.kind == TokenKind::kIndent) error(t.pos, "unexpected indent", {}, "IndentationError");
  if (t.kind == TokenKind::kDedent) error(t.pos, "unindent does not match any outer indentation level", {}, "IndentationError");
  if (t.kind == TokenKind::kName) {
    if (t.text == "if") return out.push_back(parse_if("if"));
    if (t.text == "for") return out.push_back(parse_for());
    if (t.text == "while") return out.push_back(parse_while());
    if (t.text == "try") return out.push_back(parse_try());
    if (t.text == "with") return out.push_back(parse_with());
    if (t.text == "def") return out.push_back(parse_def({}));
    if (t.text == "class") {
      unsupported(t.pos, "class definitions",
                  "spmdsim runs a Python subset without classes; keep state in dicts, tuples or lists");
    }
    if (t.text == "async") unsupported(t.pos, "async code", "write ordinary (synchronous) functions");
    if (t.text == "match" && looks_like_match()) {
      unsupported(t.pos, "match statements", "use if / elif / else");
    }
    if (t.text == "elif" || t.text == "else" || t.text == "except" || t.text == "finally") {
      error(t.pos, "invalid syntax", "'" + t.text + "' must follow an indented block of a matching statement");
    }
  }
  if (t.is_op("@")) {
    std::vector<ExprPtr> decorators;
    while (at_op("@")) {
      next();
      decorators.push_back(parse_named_test());
      if (!at_kind(TokenKind::kNewline)) invalid_syntax();
      next();
    }
    if (at_name("class")) unsupported(tok().pos, "class definitions", "use functions instead of classes");
    if (!at_name("def")) error(tok().pos, "invalid syntax", "a decorator must be followed by a function definition");
    return out.push_back(parse_def(std::move(decorators)));
  }
  parse_simple_statements(out);
}

void Parser::parse_simple_statements(Block& out) {
  while (true) {
    StmtPtr s = parse_small_statement();
    if (s->kind == StmtKind::kExpr) {
      auto& e = *static_cast<ExprStmt&>(*s).value;
      if (e.kind == ExprKind::kName && static_cast<NameExpr&>(e).id == "print" &&
          (at_kind(TokenKind::kString) || at_kind(TokenKind::kName) || at_kind(TokenKind::kNumber))) {
        error(e.pos, "Missing parentheses in call to 'print'. Did you mean print(...)?");
      }
    }
    out.push_back(std::move(s));
    if (accept_op(";")) {
      if (at_kind(TokenKind::kNewline) || at_kind(TokenKind::kEnd)) break;
      continue;
    }
    break;
  }
  if (at_kind(TokenKind::kEnd)) return;
  if (!at_kind(TokenKind::kNewline)) {
    if (at_op("=") ) error(tok().pos, "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
    invalid_syntax();
  }
  next();
}

Block Parser::parse_suite(const std::string& what, Pos header) {
  if (!at_op(":")) {
    if (at_op("=")) error(tok().pos, "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
    error(tok().pos, "expected ':'");
  }
  next();
  Block body;
  if (at_kind(TokenKind::kNewline)) {
    next();
    if (!at_kind(TokenKind::kIndent)) {
      error(tok().pos, "expected an indented block after " + what + " on line " + std::to_string(header.line), {},
            "IndentationError");
    }
    next();
    while (!at_kind(TokenKind::kDedent) && !at_kind(TokenKind::kEnd)) {
      if (at_kind(TokenKind::kNewline)) {
        next();
        continue;
      }
      parse_statement(body);
    }
    if (at_kind(TokenKind::kDedent)) next();
  } else {
    parse_simple_statements(body);
  }
  return body;
}

StmtPtr Parser::parse_if(const char* keyword) {
  Pos pos = tok().pos;
  next();
  auto s = std::make_unique<IfStmt>(pos);
  s->test = parse_named_test();
  s->body = parse_suite("'" + std::string(keyword) + "' statement", pos);
  if (at_name("elif")) {
    s->orelse.push_back(parse_if("elif"));
  } else if (at_name("else")) {
    Pos epos = tok().pos;
    next();
    s->orelse = parse_suite("'else' statement", epos);
  }
  return s;
}

StmtPtr Parser::parse_for() {
  Pos pos = tok().pos;
  next();
  auto s = std::make_unique<ForStmt>(pos);
  s->target = parse_target_list();
  check_target(*s->target, TargetCtx::kFor);
  if (!at_name("in")) error(tok().pos, "invalid syntax", "a for loop reads `for target in iterable:`");
  next();
  s->iter = parse_testlist_star_expr();
  ++loop_depth_;
  s->body = parse_suite("'for' statement", pos);
  --loop_depth_;
  if (at_name("else")) {
    Pos epos = tok().pos;
    next();
    s->orelse = parse_suite("'else' statement", epos);
  }
  return s;
}

StmtPtr Parser::parse_while() {
  Pos pos = tok().pos;
  next();
  auto s = std::make_unique<WhileStmt>(pos);
  s->test = parse_named_test();
  ++loop_depth_;
  s->body = parse_suite("'while' statement", pos);
  --loop_depth_;
  if (at_name("else")) {
    Pos epos = tok().pos;
    next();
    s->orelse = parse_suite("'else' statement", epos);
  }
  return s;
}

StmtPtr Parser::parse_try() {
  Pos pos = tok().pos;
  next();
  auto s = std::make_unique<TryStmt>(pos);
  s->body = parse_suite("'try' statement", pos);
  while (at_name("except")) {
    ExceptHandler h;
    h.pos = tok().pos;
    next();
    if (at_op("*")) unsupported(tok().pos, "except* (exception groups)", "use a plain except clause");
    if (!at_op(":")) {
      h.type = parse_test();
      if (at_op(",")) error(tok().pos, "multiple exception types must be parenthesized");
      if (at_name("as")) {
        next();
        Pos npos = tok().pos;
        h.target = std::make_unique<NameExpr>(npos, expect_name("a name after 'as'"));
      }
    }
    h.body = parse_suite("'except' statement", h.pos);
    s->handlers.push_back(std::move(h));
  }
  if (at_name("else")) {
    if (s->handlers.empty()) invalid_syntax();
    Pos epos = tok().pos;
    next();
    s->orelse = parse_suite("'else' statement", epos);
  }
  if (at_name("finally")) {
    Pos fpos = tok().pos;
    next();
    s->finalbody = parse_suite("'finally' statement", fpos);
  }
  if (s->handlers.empty() && s->finalbody.empty()) error(tok().pos, "expected 'except' or 'finally' block");
  return s;
}

StmtPtr Parser::parse_with() {
  Pos pos = tok().pos;
  next();
  auto s = std::make_unique<WithStmt>(pos);
  do {
    WithItem item;
    item.context = parse_test();
    if (at_name("as")) {
      next();
      item.target = parse_target_list();
      check_target(*item.target, TargetCtx::kWith);
    }
    s->items.push_back(std::move(item));
  } while (accept_op(","));
  s->body = parse_suite("'with' statement", pos);
  return s;
}

void Parser::parse_params(FunctionCode& code, bool lambda) {
  const char* closer = lambda ? ":" : ")";
  bool seen_default = false;
  bool seen_star = false;
  std::set<std::string> names;
  auto add = [&](Param p) {
    if (!names.insert(p.name).second) error(p.pos, "duplicate argument '" + p.name + "' in function definition");
    code.params.push_back(std::move(p));
  };
  while (!at_op(closer)) {
    Pos ppos = tok().pos;
    if (accept_op("**")) {
      Param p;
      p.pos = tok().pos;
      p.name = expect_name("a parameter name");
      if (!lambda && accept_op(":")) parse_test();
      code.kwarg = static_cast<int>(code.params.size());
      add(std::move(p));
      accept_op(",");
      if (!at_op(closer)) error(tok().pos, "arguments cannot follow var-keyword argument");
      break;
    }
    if (accept_op("*")) {
      if (seen_star) error(ppos, "* argument may appear only once");
      seen_star = true;
      if (at_op(closer)) error(ppos, "named arguments must follow bare *");
      if (!at_op(",")) {
        Param p;
        p.pos = tok().pos;
        p.name = expect_name("a parameter name");
        if (!lambda && accept_op(":")) parse_test();
        code.vararg = static_cast<int>(code.params.size());
        add(std::move(p));
      }
    } else if (accept_op("/")) {
      // Positional-only marker: accepted, not enforced.
    } else {
      Param p;
      p.pos = tok().pos;
      p.name = expect_name("a parameter name");
      if (!lambda && accept_op(":")) parse_test();
      if (accept_op("=")) {
        p.default_value = parse_test();
        seen_default = true;
      } else if (seen_default && !seen_star) {
        error(p.pos, "parameter without a default follows parameter with a default");
      }
      if (!seen_star) ++code.num_positional;
      add(std::move(p));
    }
    if (!accept_op(",")) break;
  }
  if (!at_op(closer)) {
    if (lambda) expect_op(":");
    invalid_syntax();
  }
}

StmtPtr Parser::parse_def(std::vector<ExprPtr> decorators) {
  Pos pos = tok().pos;
  next();
  auto s = std::make_unique<FunctionDefStmt>(pos);
  s->decorators = std::move(decorators);
  auto code = std::make_shared<FunctionCode>();
  code->pos = pos;
  Pos npos = tok().pos;
  code->name = expect_name("a function name");
  s->target = std::make_unique<NameExpr>(npos, code->name);
  if (!at_op("(")) error(tok().pos, "expected '('");
  next();
  parse_params(*code, false);
  expect_op(")");
  if (accept_op("->")) parse_test();
  int saved_loop = loop_depth_;
  loop_depth_ = 0;
  ++func_depth_;
  code->body = parse_suite("function definition", pos);
  --func_depth_;
  loop_depth_ = saved_loop;
  s->code = std::move(code);
  return s;
}

StmtPtr Parser::parse_small_statement() {
  const Token& t = tok();
  Pos pos = t.pos;
  if (t.kind == TokenKind::kName) {
    const std::string& w = t.text;
    if (w == "pass") {
      next();
      return std::make_unique<SimpleStmt>(StmtKind::kPass, pos);
    }
    if (w == "break" || w == "continue") {
      if (loop_depth_ == 0) error(pos, "'" + w + "' outside loop");
      next();
      return std::make_unique<SimpleStmt>(w == "break" ? StmtKind::kBreak : StmtKind::kContinue, pos);
    }
    if (w == "return") {
      if (func_depth_ == 0) error(pos, "'return' outside function");
      next();
      ExprPtr value;
      if (!at_kind(TokenKind::kNewline) && !at_op(";") && !at_kind(TokenKind::kEnd)) value = parse_testlist_star_expr();
      return std::make_unique<ReturnStmt>(pos, std::move(value));
    }
    if (w == "raise") {
      next();
      auto s = std::make_unique<RaiseStmt>(pos);
      if (!at_kind(TokenKind::kNewline) && !at_op(";") && !at_kind(TokenKind::kEnd)) {
        s->exc = parse_test();
        if (at_name("from")) {
          next();
          s->cause = parse_test();
        }
      }
      return s;
    }
    if (w == "global" || w == "nonlocal") {
      if (w == "nonlocal" && func_depth_ == 0) error(pos, "nonlocal declaration not allowed at module level");
      next();
      auto s = std::make_unique<NamesStmt>(w == "global" ? StmtKind::kGlobal : StmtKind::kNonlocal, pos);
      do {
        s->names.push_back(expect_name("a name"));
      } while (accept_op(","));
      return s;
    }
    if (w == "del") {
      next();
      auto s = std::make_unique<DelStmt>(pos);
      do {
        s->targets.push_back(parse_bitor());
        check_target(*s->targets.back(), TargetCtx::kDelete);
      } while (accept_op(",") && !at_kind(TokenKind::kNewline));
      return s;
    }
    if (w == "assert") {
      next();
      auto s = std::make_unique<AssertStmt>(pos);
      s->test = parse_test();
      if (accept_op(",")) s->msg = parse_test();
      return s;
    }
    if (w == "import") return parse_import();
    if (w == "from") return parse_from_import();
    if (w == "yield") {
      unsupported(pos, "generator functions (yield)", "build a list and return it instead");
    }
  }
  return parse_expression_statement();
}

StmtPtr Parser::parse_import() {
  Pos pos = tok().pos;
  next();
  auto s = std::make_unique<ImportStmt>(pos);
  do {
    ImportAlias a;
    a.pos = tok().pos;
    a.name = expect_name("a module name");
    while (accept_op(".")) a.name += "." + expect_name("a module name");
    std::string bound = a.name.substr(0, a.name.find('.'));
    if (at_name("as")) {
      next();
      Pos apos = tok().pos;
      a.asname = expect_name("a name after 'as'");
      a.target = std::make_unique<NameExpr>(apos, a.asname);
    } else {
      a.target = std::make_unique<NameExpr>(a.pos, bound);
    }
    s->names.push_back(std::move(a));
  } while (accept_op(","));
  return s;
}

StmtPtr Parser::parse_from_import() {
  Pos pos = tok().pos;
  next();
  auto s = std::make_unique<ImportFromStmt>(pos);
  s->module_pos = tok().pos;
  if (at_op(".") || at_op("...")) {
    unsupported(tok().pos, "relative imports", "a scenario is a single file; import jax, jax.numpy, ... directly");
  }
  s->module = expect_name("a module name");
  while (accept_op(".")) s->module += "." + expect_name("a module name");
  if (!at_name("import")) error(tok().pos, "invalid syntax", "write `from module import name`");
  next();
  if (at_op("*")) {
    unsupported(tok().pos, "from ... import *", "import the names you use, e.g. `from jax import lax, pmap`");
  }
  bool paren = accept_op("(");
  do {
    if (paren && at_op(")")) break;
    ImportAlias a;
    a.pos = tok().pos;
    a.name = expect_name("a name to import");
    if (at_name("as")) {
      next();
      Pos apos = tok().pos;
      a.asname = expect_name("a name after 'as'");
      a.target = std::make_unique<NameExpr>(apos, a.asname);
    } else {
      a.target = std::make_unique<NameExpr>(a.pos, a.name);
    }
    s->names.push_back(std::move(a));
  } while (accept_op(","));
  if (paren) expect_op(")");
  if (s->names.empty()) invalid_syntax();
  return s;
}

namespace {
bool aug_op(const std::string& t, BinOp& op) {
  static const std::pair<const char*, BinOp> kOps[] = {
      {"+=", BinOp::kAdd},     {"-=", BinOp::kSub},      {"*=", BinOp::kMul},     {"@=", BinOp::kMatMul},
      {"/=", BinOp::kDiv},     {"//=", BinOp::kFloorDiv}, {"%=", BinOp::kMod},     {"**=", BinOp::kPow},
      {"<<=", BinOp::kLShift}, {">>=", BinOp::kRShift},  {"|=", BinOp::kBitOr},   {"^=", BinOp::kBitXor},
      {"&=", BinOp::kBitAnd}};
  for (const auto& [s, o] : kOps) {
    if (t == s) {
      op = o;
      return true;
    }
  }
  return false;
}
}  // namespace

StmtPtr Parser::parse_expression_statement() {
  Pos pos = tok().pos;
  ExprPtr first = parse_testlist_star_expr();
  if (at_op("=")) {
    auto s = std::make_unique<AssignStmt>(pos);
    s->targets.push_back(std::move(first));
    while (accept_op("=")) {
      if (at_name("yield")) unsupported(tok().pos, "generator functions (yield)", "build a list and return it instead");
      s->targets.push_back(parse_testlist_star_expr());
    }
    s->value = std::move(s->targets.back());
    s->targets.pop_back();
    for (const auto& t : s->targets) check_target(*t, TargetCtx::kAssign);
    return s;
  }
  BinOp op;
  if (tok().kind == TokenKind::kOp && aug_op(tok().text, op)) {
    check_target(*first, TargetCtx::kAugAssign);
    next();
    ExprPtr value = parse_testlist_star_expr();
    return std::make_unique<AugAssignStmt>(pos, std::move(first), op, std::move(value));
  }
  if (at_op(":")) {
    if (first->kind != ExprKind::kName && first->kind != ExprKind::kAttribute && first->kind != ExprKind::kSubscript) {
      error(first->pos, "only single target (not tuple) can be annotated");
    }
    next();
    parse_test();  // the annotation is not evaluated
    auto s = std::make_unique<AnnAssignStmt>(pos);
    s->target = std::move(first);
    if (accept_op("=")) s->value = parse_testlist_star_expr();
    return s;
  }
  return std::make_unique<ExprStmt>(pos, std::move(first));
}

// ============================================================================
// targets

void Parser::check_target(const Expr& e, TargetCtx ctx, bool top) {
  auto what = [&]() -> std::string {
    switch (e.kind) {
      case ExprKind::kCall: return "function call";
      case ExprKind::kConstant: {
        const Value& v = static_cast<const ConstantExpr&>(e).value;
        if (v.is_none()) return "None";
        if (v.is(Kind::kBool)) return v.as_bool() ? "True" : "False";
        if (v.is(Kind::kEllipsis)) return "ellipsis";
        return "literal";
      }
      case ExprKind::kFString: return "f-string expression";
      case ExprKind::kLambda: return "lambda";
      case ExprKind::kIfExp: return "conditional expression";
      case ExprKind::kCompare: return "comparison";
      case ExprKind::kListComp: return "list comprehension";
      case ExprKind::kDictComp: return "dict comprehension";
      case ExprKind::kSetComp: return "set comprehension";
      case ExprKind::kGenExp: return "generator expression";
      case ExprKind::kDict: return "dict literal";
      case ExprKind::kSet: return "set display";
      case ExprKind::kTuple: return "tuple";
      case ExprKind::kList: return "list";
      default: return "expression";
    }
  };
  switch (e.kind) {
    case ExprKind::kName:
    case ExprKind::kAttribute:
    case ExprKind::kSubscript:
      return;
    case ExprKind::kTuple:
    case ExprKind::kList: {
      if (ctx == TargetCtx::kAugAssign) {
        error(e.pos, "'" + what() + "' is an illegal expression for augmented assignment");
      }
      int stars = 0;
      for (const auto& elt : static_cast<const SequenceExpr&>(e).elts) {
        if (elt->kind == ExprKind::kStarred) {
          if (ctx == TargetCtx::kDelete) error(elt->pos, "cannot delete starred");
          if (++stars > 1) error(elt->pos, "multiple starred expressions in assignment");
          check_target(*static_cast<const StarredExpr&>(*elt).value, ctx, false);
        } else {
          check_target(*elt, ctx, false);
        }
      }
      return;
    }
    case ExprKind::kStarred:
      error(e.pos, "starred assignment target must be in a list or tuple");
    default:
      break;
  }
  if (ctx == TargetCtx::kAugAssign) error(e.pos, "'" + what() + "' is an illegal expression for augmented assignment");
  if (ctx == TargetCtx::kDelete) error(e.pos, "cannot delete " + what());
  std::string msg = "cannot assign to " + what();
  bool named_constant = e.kind == ExprKind::kConstant && what() != "literal";
  if (ctx == TargetCtx::kAssign && top && !named_constant) msg += " here. Maybe you meant '==' instead of '='?";
  error(e.pos, msg);
}

ExprPtr Parser::parse_target_list() {
  Pos pos = tok().pos;
  std::vector<ExprPtr> items;
  bool comma = false;
  while (true) {
    if (at_op("*")) {
      Pos spos = tok().pos;
      next();
      items.push_back(std::make_unique<StarredExpr>(spos, parse_bitor()));
    } else {
      items.push_back(parse_bitor());
    }
    if (!at_op(",")) break;
    comma = true;
    next();
    if (at_name("in") || at_op("=") || at_op(":") || at_kind(TokenKind::kNewline)) break;
  }
  if (items.size() == 1 && !comma) return std::move(items[0]);
  auto t = std::make_unique<SequenceExpr>(ExprKind::kTuple, pos);
  for (auto& it : items) {
    if (it->kind == ExprKind::kStarred) t->has_star = true;
    t->elts.push_back(std::move(it));
  }
  return t;
}

// ============================================================================
// expressions

ExprPtr Parser::parse_testlist_star_expr() {
  Pos pos = tok().pos;
  ExprPtr first = parse_test_or_star();
  if (!at_op(",")) {
    if (first->kind == ExprKind::kStarred) error(first->pos, "can't use starred expression here");
    return first;
  }
  auto t = std::make_unique<SequenceExpr>(ExprKind::kTuple, pos);
  t->has_star = first->kind == ExprKind::kStarred;
  t->elts.push_back(std::move(first));
  while (accept_op(",")) {
    if (at_kind(TokenKind::kNewline) || at_op("=") || at_op(")") || at_op(";") || at_op(":") ||
        at_kind(TokenKind::kEnd) || (tok().kind == TokenKind::kOp && tok().text.size() >= 2 && tok().text.back() == '=' &&
                                     tok().text != "==" && tok().text != "<=" && tok().text != ">=" && tok().text != "!=")) {
      break;
    }
    ExprPtr e = parse_test_or_star();
    t->has_star = t->has_star || e->kind == ExprKind::kStarred;
    t->elts.push_back(std::move(e));
  }
  return t;
}

ExprPtr Parser::parse_test_or_star() {
  if (at_op("*")) {
    Pos pos = tok().pos;
    next();
    return std::make_unique<StarredExpr>(pos, parse_bitor());
  }
  return parse_named_test();
}

ExprPtr Parser::parse_named_test() {
  ExprPtr e = parse_test();
  if (at_op(":=")) unsupported(tok().pos, "assignment expressions (:=)", "assign on a separate line first");
  return e;
}

ExprPtr Parser::parse_test() {
  DepthGuard guard(*this, tok().pos);
  if (at_name("lambda")) return parse_lambda();
  Pos pos = tok().pos;
  ExprPtr e = parse_or_test();
  if (at_name("if")) {
    next();
    auto c = std::make_unique<IfExpExpr>(pos);
    c->body = std::move(e);
    c->test = parse_or_test();
    if (!at_name("else")) error(tok().pos, "expected 'else' after 'if' expression");
    next();
    c->orelse = parse_test();
    return c;
  }
  return e;
}

ExprPtr Parser::parse_lambda() {
  Pos pos = tok().pos;
  next();
  auto code = std::make_shared<FunctionCode>();
  code->name = "<lambda>";
  code->pos = pos;
  parse_params(*code, true);
  expect_op(":");
  ++func_depth_;
  int saved_loop = loop_depth_;
  loop_depth_ = 0;
  code->lambda_body = parse_test();
  loop_depth_ = saved_loop;
  --func_depth_;
  return std::make_unique<LambdaExpr>(pos, std::move(code));
}

ExprPtr Parser::parse_or_test() {
  Pos pos = tok().pos;
  ExprPtr e = parse_and_test();
  if (!at_name("or")) return e;
  auto b = std::make_unique<BoolOpExpr>(pos, false);
  b->values.push_back(std::move(e));
  while (at_name("or")) {
    next();
    b->values.push_back(parse_and_test());
  }
  return b;
}

ExprPtr Parser::parse_and_test() {
  Pos pos = tok().pos;
  ExprPtr e = parse_not_test();
  if (!at_name("and")) return e;
  auto b = std::make_unique<BoolOpExpr>(pos, true);
  b->values.push_back(std::move(e));
  while (at_name("and")) {
    next();
    b->values.push_back(parse_not_test());
  }
  return b;
}

ExprPtr Parser::parse_not_test() {
  if (at_name("not")) {
    Pos pos = tok().pos;
    DepthGuard guard(*this, pos);
    next();
    return std::make_unique<UnaryExpr>(pos, UnOp::kNot, parse_not_test());
  }
  return parse_comparison();
}

ExprPtr Parser::parse_comparison() {
  Pos pos = tok().pos;
  ExprPtr e = parse_bitor();
  std::unique_ptr<CompareExpr> cmp;
  while (true) {
    CmpOp op;
    const Token& t = tok();
    if (t.is_op("<")) op = CmpOp::kLt;
    else if (t.is_op(">")) op = CmpOp::kGt;
    else if (t.is_op("==")) op = CmpOp::kEq;
    else if (t.is_op(">=")) op = CmpOp::kGtE;
    else if (t.is_op("<=")) op = CmpOp::kLtE;
    else if (t.is_op("!=")) op = CmpOp::kNotEq;
    else if (t.is_name("in")) op = CmpOp::kIn;
    else if (t.is_name("not") && peek().is_name("in")) {
      next();
      op = CmpOp::kNotIn;
    } else if (t.is_name("is")) {
      if (peek().is_name("not")) {
        next();
        op = CmpOp::kIsNot;
      } else {
        op = CmpOp::kIs;
      }
    } else {
      break;
    }
    next();
    if (!cmp) {
      cmp = std::make_unique<CompareExpr>(pos);
      cmp->left = std::move(e);
    }
    cmp->ops.push_back(op);
    cmp->comparators.push_back(parse_bitor());
  }
  if (cmp) return cmp;
  return e;
}

#define SPMD_BINARY_LEVEL(fn, next_fn, ...)                                    \
  ExprPtr Parser::fn() {                                                       \
    Pos pos = tok().pos;                                                       \
    ExprPtr e = next_fn();                                                     \
    int chain = 0;                                                             \
    while (true) {                                                             \
      static const std::pair<const char*, BinOp> kOps[] = {__VA_ARGS__};       \
      const std::pair<const char*, BinOp>* hit = nullptr;                      \
      for (const auto& o : kOps) {                                             \
        if (at_op(o.first)) hit = &o;                                          \
      }                                                                        \
      if (!hit) break;                                                         \
      if (++chain > kMaxChain) too_long(tok().pos);                            \
      next();                                                                  \
      e = std::make_unique<BinOpExpr>(pos, hit->second, std::move(e), next_fn()); \
    }                                                                          \
    return e;                                                                  \
  }

SPMD_BINARY_LEVEL(parse_bitor, parse_bitxor, {"|", BinOp::kBitOr})
SPMD_BINARY_LEVEL(parse_bitxor, parse_bitand, {"^", BinOp::kBitXor})
SPMD_BINARY_LEVEL(parse_bitand, parse_shift, {"&", BinOp::kBitAnd})
SPMD_BINARY_LEVEL(parse_shift, parse_arith, {"<<", BinOp::kLShift}, {">>", BinOp::kRShift})
SPMD_BINARY_LEVEL(parse_arith, parse_term, {"+", BinOp::kAdd}, {"-", BinOp::kSub})
SPMD_BINARY_LEVEL(parse_term, parse_factor, {"*", BinOp::kMul}, {"/", BinOp::kDiv}, {"//", BinOp::kFloorDiv},
                  {"%", BinOp::kMod}, {"@", BinOp::kMatMul})
#undef SPMD_BINARY_LEVEL

ExprPtr Parser::parse_factor() {
  Pos pos = tok().pos;
  UnOp op;
  if (at_op("-")) op = UnOp::kNeg;
  else if (at_op("+")) op = UnOp::kPos;
  else if (at_op("~")) op = UnOp::kInvert;
  else return parse_power();
  DepthGuard guard(*this, pos);
  next();
  ExprPtr operand = parse_factor();
  // Fold negative numeric literals so that -9223372036854775808 and -1.5 are constants.
  if (op == UnOp::kNeg && operand->kind == ExprKind::kConstant) {
    Value& v = static_cast<ConstantExpr&>(*operand).value;
    if (v.is(Kind::kInt)) return std::make_unique<ConstantExpr>(pos, Value::integer(-v.as_int()));
    if (v.is(Kind::kFloat)) return std::make_unique<ConstantExpr>(pos, Value::floating(-v.as_float()));
  }
  return std::make_unique<UnaryExpr>(pos, op, std::move(operand));
}

ExprPtr Parser::parse_power() {
  Pos pos = tok().pos;
  ExprPtr base = parse_atom_expr();
  if (at_op("**")) {
    DepthGuard guard(*this, pos);
    next();
    return std::make_unique<BinOpExpr>(pos, BinOp::kPow, std::move(base), parse_factor());
  }
  return base;
}

ExprPtr Parser::parse_atom_expr() {
  if (at_name("await")) unsupported(tok().pos, "await", "write ordinary (synchronous) code");
  ExprPtr e = parse_atom();
  int chain = 0;
  while (true) {
    if ((at_op("(") || at_op("[") || at_op(".")) && ++chain > kMaxChain) too_long(tok().pos);
    if (at_op("(")) {
      e = parse_call(std::move(e));
    } else if (at_op("[")) {
      e = parse_subscript(std::move(e));
    } else if (at_op(".")) {
      next();
      Pos apos = tok().pos;
      if (!at_kind(TokenKind::kName)) invalid_syntax();
      std::string attr = tok().text;
      next();
      Pos pos = e->pos;
      e = std::make_unique<AttributeExpr>(pos, std::move(e), std::move(attr), apos);
    } else {
      return e;
    }
  }
}

void Parser::check_missing_comma(const Expr& previous, const char* closer) {
  if (at_op(",") || at_op(closer)) return;
  const Token& t = tok();
  bool starts_expr = t.kind == TokenKind::kNumber || t.kind == TokenKind::kString ||
                     (t.kind == TokenKind::kName && !is_keyword(t.text)) || t.is_name("None") ||
                     t.is_name("True") || t.is_name("False") || t.is_name("lambda") || t.is_name("not");
  if (starts_expr) error(previous.pos, "invalid syntax. Perhaps you forgot a comma?");
  invalid_syntax();
}

ExprPtr Parser::parse_call(ExprPtr func) {
  Pos pos = func->pos;
  next();  // (
  auto call = std::make_unique<CallExpr>(pos);
  call->func = std::move(func);
  bool seen_keyword = false;
  bool seen_double_star = false;
  std::set<std::string> keywords;
  while (!at_op(")")) {
    Argument a;
    Pos apos = tok().pos;
    if (accept_op("*")) {
      a.kind = Argument::Kind::kStar;
      a.value = parse_test();
      call->simple = false;
      if (seen_double_star) error(apos, "iterable argument unpacking follows keyword argument unpacking");
    } else if (accept_op("**")) {
      a.kind = Argument::Kind::kDoubleStar;
      a.value = parse_test();
      call->simple = false;
      seen_double_star = true;
    } else {
      ExprPtr e = parse_named_test();
      if (at_op("=")) {
        if (e->kind != ExprKind::kName) {
          error(e->pos, "expression cannot contain assignment, perhaps you meant \"==\"?");
        }
        next();
        a.kind = Argument::Kind::kKeyword;
        a.keyword = static_cast<NameExpr&>(*e).id;
        if (!keywords.insert(a.keyword).second) error(apos, "keyword argument repeated: " + a.keyword);
        a.value = parse_test();
        seen_keyword = true;
      } else if (at_name("for")) {
        auto g = std::make_unique<CompExpr>(ExprKind::kGenExp, e->pos);
        g->elt = std::move(e);
        parse_comprehension(*g);
        if (!call->args.empty() || !at_op(")")) {
          error(g->pos, "Generator expression must be parenthesized");
        }
        a.value = std::move(g);
      } else {
        if (seen_double_star) error(apos, "positional argument follows keyword argument unpacking");
        if (seen_keyword) error(apos, "positional argument follows keyword argument");
        a.value = std::move(e);
      }
    }
    call->args.push_back(std::move(a));
    check_missing_comma(*call->args.back().value, ")");
    if (!accept_op(",")) break;
  }
  expect_op(")");
  return call;
}

ExprPtr Parser::parse_slice_item() {
  Pos pos = tok().pos;
  ExprPtr lower;
  if (!at_op(":")) {
    lower = parse_named_test();
    if (!at_op(":")) return lower;
  }
  auto s = std::make_unique<SliceExpr>(pos);
  s->lower = std::move(lower);
  next();  // :
  if (!at_op(":") && !at_op(",") && !at_op("]")) s->upper = parse_test();
  if (accept_op(":")) {
    if (!at_op(",") && !at_op("]")) s->step = parse_test();
  }
  return s;
}

ExprPtr Parser::parse_subscript(ExprPtr value) {
  Pos pos = value->pos;
  Pos ipos = peek().pos;
  next();  // [
  if (at_op("]")) error(tok().pos, "invalid syntax", "an index is required between [ and ]");
  std::vector<ExprPtr> items;
  bool comma = false;
  while (!at_op("]")) {
    if (at_op("*")) {
      Pos spos = tok().pos;
      next();
      items.push_back(std::make_unique<StarredExpr>(spos, parse_bitor()));
    } else {
      items.push_back(parse_slice_item());
    }
    check_missing_comma(*items.back(), "]");
    if (!accept_op(",")) break;
    comma = true;
  }
  expect_op("]");
  ExprPtr index;
  if (items.size() == 1 && !comma) {
    index = std::move(items[0]);
  } else {
    auto t = std::make_unique<SequenceExpr>(ExprKind::kTuple, ipos);
    for (auto& it : items) {
      if (it->kind == ExprKind::kStarred) t->has_star = true;
      t->elts.push_back(std::move(it));
    }
    index = std::move(t);
  }
  return std::make_unique<SubscriptExpr>(pos, std::move(value), std::move(index));
}

void Parser::parse_comprehension(CompExpr& comp) {
  while (at_name("for") || at_name("async")) {
    if (at_name("async")) unsupported(tok().pos, "async comprehensions", "use an ordinary comprehension");
    next();
    Comprehension c;
    c.target = parse_target_list();
    check_target(*c.target, TargetCtx::kFor);
    if (!at_name("in")) error(tok().pos, "invalid syntax", "a comprehension reads `for target in iterable`");
    next();
    c.iter = parse_or_test();
    while (at_name("if")) {
      next();
      c.ifs.push_back(parse_or_test());
    }
    comp.generators.push_back(std::move(c));
  }
}

ExprPtr Parser::parse_atom() {
  const Token& t = tok();
  Pos pos = t.pos;
  switch (t.kind) {
    case TokenKind::kNumber: {
      Value v = t.is_float ? Value::floating(t.float_value) : Value::integer(t.int_value);
      next();
      return std::make_unique<ConstantExpr>(pos, std::move(v));
    }
    case TokenKind::kString:
      return parse_strings();
    case TokenKind::kName: {
      if (t.text == "None" || t.text == "True" || t.text == "False") {
        Value v = t.text == "None" ? Value::none() : Value::boolean(t.text == "True");
        next();
        return std::make_unique<ConstantExpr>(pos, std::move(v));
      }
      if (t.text == "yield") unsupported(pos, "generator functions (yield)", "build a list and return it instead");
      if (is_keyword(t.text)) invalid_syntax();
      auto n = std::make_unique<NameExpr>(pos, t.text);
      next();
      return n;
    }
    case TokenKind::kOp:
      if (t.text == "(") return parse_paren();
      if (t.text == "[") return parse_list_display();
      if (t.text == "{") return parse_brace_display();
      if (t.text == "...") {
        next();
        return std::make_unique<ConstantExpr>(pos, Value::ellipsis());
      }
      break;
    default:
      break;
  }
  invalid_syntax();
}

ExprPtr Parser::parse_paren() {
  Pos pos = tok().pos;
  next();  // (
  if (accept_op(")")) return std::make_unique<SequenceExpr>(ExprKind::kTuple, pos);
  if (at_name("yield")) unsupported(tok().pos, "generator functions (yield)", "build a list and return it instead");
  ExprPtr first = parse_test_or_star();
  if (at_name("for")) {
    auto g = std::make_unique<CompExpr>(ExprKind::kGenExp, pos);
    g->elt = std::move(first);
    parse_comprehension(*g);
    expect_op(")");
    return g;
  }
  if (at_op(")")) {
    if (first->kind == ExprKind::kStarred) error(first->pos, "cannot use starred expression here");
    next();
    return first;
  }
  auto t = std::make_unique<SequenceExpr>(ExprKind::kTuple, pos);
  t->has_star = first->kind == ExprKind::kStarred;
  t->elts.push_back(std::move(first));
  check_missing_comma(*t->elts.back(), ")");
  while (accept_op(",")) {
    if (at_op(")")) break;
    ExprPtr e = parse_test_or_star();
    t->has_star = t->has_star || e->kind == ExprKind::kStarred;
    t->elts.push_back(std::move(e));
    check_missing_comma(*t->elts.back(), ")");
  }
  expect_op(")");
  return t;
}

ExprPtr Parser::parse_list_display() {
  Pos pos = tok().pos;
  next();  // [
  auto l = std::make_unique<SequenceExpr>(ExprKind::kList, pos);
  if (accept_op("]")) return l;
  ExprPtr first = parse_test_or_star();
  if (at_name("for")) {
    auto c = std::make_unique<CompExpr>(ExprKind::kListComp, pos);
    c->elt = std::move(first);
    parse_comprehension(*c);
    expect_op("]");
    return c;
  }
  l->has_star = first->kind == ExprKind::kStarred;
  l->elts.push_back(std::move(first));
  check_missing_comma(*l->elts.back(), "]");
  while (accept_op(",")) {
    if (at_op("]")) break;
    ExprPtr e = parse_test_or_star();
    l->has_star = l->has_star || e->kind == ExprKind::kStarred;
    l->elts.push_back(std::move(e));
    check_missing_comma(*l->elts.back(), "]");
  }
  expect_op("]");
  return l;
}

ExprPtr Parser::parse_brace_display() {
  Pos pos = tok().pos;
  next();  // {
  if (accept_op("}")) return std::make_unique<DictExpr>(pos);
  {
    ExprPtr first_key;
    ExprPtr first_value;
    bool is_dict = false;
    if (accept_op("**")) {
      is_dict = true;
      first_value = parse_bitor();
    } else {
      first_key = parse_test_or_star();
      if (accept_op(":")) {
        is_dict = true;
        first_value = parse_test();
      }
    }
    if (is_dict) {
      if (first_key && at_name("for")) {
        auto c = std::make_unique<CompExpr>(ExprKind::kDictComp, pos);
        c->elt = std::move(first_key);
        c->value = std::move(first_value);
        parse_comprehension(*c);
        expect_op("}");
        return c;
      }
      auto d = std::make_unique<DictExpr>(pos);
      d->keys.push_back(std::move(first_key));
      d->values.push_back(std::move(first_value));
      check_missing_comma(*d->values.back(), "}");
      while (accept_op(",")) {
        if (at_op("}")) break;
        if (accept_op("**")) {
          d->keys.push_back(nullptr);
          d->values.push_back(parse_bitor());
        } else {
          d->keys.push_back(parse_test());
          if (!at_op(":")) error(tok().pos, "':' expected after dictionary key");
          next();
          d->values.push_back(parse_test());
        }
        check_missing_comma(*d->values.back(), "}");
      }
      expect_op("}");
      return d;
    }
    if (at_name("for")) {
      auto c = std::make_unique<CompExpr>(ExprKind::kSetComp, pos);
      c->elt = std::move(first_key);
      parse_comprehension(*c);
      expect_op("}");
      return c;
    }
    auto s = std::make_unique<SequenceExpr>(ExprKind::kSet, pos);
    s->has_star = first_key->kind == ExprKind::kStarred;
    s->elts.push_back(std::move(first_key));
    check_missing_comma(*s->elts.back(), "}");
    while (accept_op(",")) {
      if (at_op("}")) break;
      ExprPtr e = parse_test_or_star();
      s->has_star = s->has_star || e->kind == ExprKind::kStarred;
      s->elts.push_back(std::move(e));
      check_missing_comma(*s->elts.back(), "}");
    }
    expect_op("}");
    return s;
  }
}

// ============================================================================
// strings and f-strings

namespace {

Pos advance_pos(Pos p, std::string_view text, std::size_t from, std::size_t to) {
  for (std::size_t k = from; k < to && k < text.size(); ++k) {
    auto c = static_cast<unsigned char>(text[k]);
    if (c == '\n') {
      ++p.line;
      p.col = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++p.col;
    }
  }
  return p;
}

}  // namespace

ExprPtr Parser::parse_strings() {
  Pos pos = tok().pos;
  bool any_f = false;
  for (std::size_t j = i_; toks_[j].kind == TokenKind::kString; ++j) any_f = any_f || toks_[j].is_fstring;
  if (!any_f) {
    std::string s;
    while (at_kind(TokenKind::kString)) {
      s += tok().text;
      next();
    }
    return std::make_unique<ConstantExpr>(pos, Value::str(std::move(s)));
  }
  auto f = std::make_unique<FStringExpr>(pos);
  while (at_kind(TokenKind::kString)) {
    const Token& t = tok();
    if (t.is_fstring) {
      parse_fstring_body(*f, t.text, t.body_pos, t.is_raw, 0);
    } else {
      FStringExpr::Part p;
      p.literal = t.text;
      f->parts.push_back(std::move(p));
    }
    next();
  }
  return f;
}

void Parser::parse_fstring_body(FStringExpr& out, const std::string& body, Pos start, bool raw, int depth) {
  std::string literal_raw;
  std::size_t literal_begin = 0;
  auto flush = [&](FStringExpr::Part& part) {
    Pos lpos = advance_pos(start, body, 0, literal_begin);
    part.literal = raw ? literal_raw : decode_escapes(src_, literal_raw, lpos);
    literal_raw.clear();
  };
  std::size_t i = 0;
  while (i < body.size()) {
    char c = body[i];
    if (c == '{' && i + 1 < body.size() && body[i + 1] == '{') {
      if (literal_raw.empty()) literal_begin = i;
      literal_raw += '{';
      i += 2;
      continue;
    }
    if (c == '}' && i + 1 < body.size() && body[i + 1] == '}') {
      if (literal_raw.empty()) literal_begin = i;
      literal_raw += '}';
      i += 2;
      continue;
    }
    if (c == '}') error(advance_pos(start, body, 0, i), "f-string: single '}' is not allowed");
    if (c != '{') {
      if (literal_raw.empty()) literal_begin = i;
      literal_raw += c;
      ++i;
      continue;
    }
    // A replacement field.
    Pos field_pos = advance_pos(start, body, 0, i);
    if (depth >= 2) error(field_pos, "f-string: expressions nested too deeply");
    std::size_t expr_begin = i + 1;
    std::size_t j = expr_begin;
    int nest = 0;
    char quote = 0;
    for (; j < body.size(); ++j) {
      char d = body[j];
      if (quote) {
        if (d == quote) quote = 0;
        continue;
      }
      if (d == '\'' || d == '"') {
        quote = d;
      } else if (d == '(' || d == '[' || d == '{') {
        ++nest;
      } else if (d == ')' || d == ']' || (d == '}' && nest > 0)) {
        --nest;
      } else if (nest == 0 && (d == '}' || d == ':' || (d == '!' && j + 1 < body.size() && body[j + 1] != '='))) {
        break;
      }
    }
    if (j >= body.size()) error(field_pos, "f-string: expecting '}'");
    std::string expr_text = body.substr(expr_begin, j - expr_begin);
    FStringExpr::Part part;
    flush(part);
    // f"{x=}": the expression text followed by '=' shows "x=" and the repr.
    std::size_t last = expr_text.find_last_not_of(" \t\n");
    if (last != std::string::npos && expr_text[last] == '=' &&
        (last == 0 || std::string("=!<>").find(expr_text[last - 1]) == std::string::npos)) {
      part.debug_text = expr_text;
      expr_text = expr_text.substr(0, last);
      part.conversion = 'r';
    }
    if (expr_text.find_first_not_of(" \t\n") == std::string::npos) {
      error(field_pos, "f-string: valid expression required before '}'");
    }
    Pos expr_pos = advance_pos(start, body, 0, expr_begin);
    std::vector<Token> toks = tokenize_expression(src_, expr_text, expr_pos);
    Parser sub(src_, std::move(toks));
    part.expr = sub.parse_embedded_expression();
    if (body[j] == '!') {
      if (j + 1 >= body.size() || std::string("rsa").find(body[j + 1]) == std::string::npos) {
        error(advance_pos(start, body, 0, j), "f-string: invalid conversion character: expected 's', 'r', or 'a'");
      }
      part.conversion = body[j + 1];
      j += 2;
    }
    if (j < body.size() && body[j] == ':') {
      std::size_t spec_begin = j + 1;
      int snest = 0;
      std::size_t k = spec_begin;
      for (; k < body.size(); ++k) {
        if (body[k] == '{') ++snest;
        else if (body[k] == '}') {
          if (snest == 0) break;
          --snest;
        }
      }
      if (k >= body.size()) error(field_pos, "f-string: expecting '}'");
      auto spec = std::make_unique<FStringExpr>(advance_pos(start, body, 0, spec_begin));
      parse_fstring_body(*spec, body.substr(spec_begin, k - spec_begin), advance_pos(start, body, 0, spec_begin), raw,
                         depth + 1);
      part.spec = std::move(spec);
      j = k;
    }
    if (j >= body.size() || body[j] != '}') error(field_pos, "f-string: expecting '}'");
    out.parts.push_back(std::move(part));
    i = j + 1;
  }
  if (!literal_raw.empty()) {
    FStringExpr::Part part;
    flush(part);
    out.parts.push_back(std::move(part));
  }
}

ExprPtr Parser::parse_embedded_expression() {
  ExprPtr e = parse_testlist_star_expr();
  if (!at_kind(TokenKind::kEnd)) invalid_syntax();
  return e;
}

}  // namespace

std::shared_ptr<const Module> parse_module(std::shared_ptr<const SourceText> src) {
  auto module = std::make_shared<Module>(src);
  Parser parser(*src, tokenize(*src));
  module->body = parser.parse_file();
  resolve_names(*module);
  return module;
}

}  // namespace spmd::scenario
