#pragma once
// The syntax tree of a scenario program, annotated by the resolver with where
// each name lives (fast local slot, closure cell, or module global).

#include <memory>
#include <string>
#include <vector>

#include "scenario/source_text.h"
#include "scenario/token.h"
#include "scenario/value.h"

namespace spmd::scenario {

/// Where a name is stored, decided once by the resolver.
struct NameRef {
  enum class Scope : std::uint8_t { kUnresolved, kFast, kCell, kGlobal };
  Scope scope = Scope::kUnresolved;
  int index = 0;
};

// --- expressions -------------------------------------------------------------

enum class ExprKind : std::uint8_t {
  kName, kConstant, kFString, kBinOp, kUnaryOp, kBoolOp, kCompare, kCall, kAttribute, kSubscript, kSlice,
  kTuple, kList, kSet, kDict, kListComp, kSetComp, kDictComp, kGenExp, kLambda, kIfExp, kStarred,
};

enum class BinOp : std::uint8_t {
  kAdd, kSub, kMul, kMatMul, kDiv, kFloorDiv, kMod, kPow, kLShift, kRShift, kBitOr, kBitXor, kBitAnd,
};
enum class UnOp : std::uint8_t { kNeg, kPos, kInvert, kNot };
enum class CmpOp : std::uint8_t { kEq, kNotEq, kLt, kLtE, kGt, kGtE, kIs, kIsNot, kIn, kNotIn };

const char* binop_symbol(BinOp op);
const char* cmpop_symbol(CmpOp op);

struct Expr {
  Expr(ExprKind k, Pos p) : kind(k), pos(p) {}
  virtual ~Expr() = default;
  ExprKind kind;
  Pos pos;
};
using ExprPtr = std::unique_ptr<Expr>;

struct NameExpr : Expr {
  NameExpr(Pos p, std::string name) : Expr(ExprKind::kName, p), id(std::move(name)), key(Value::str(id)) {}
  std::string id;
  Value key;  ///< `id` as a str Value, the key in globals and builtins
  NameRef ref;
};

struct ConstantExpr : Expr {
  ConstantExpr(Pos p, Value v) : Expr(ExprKind::kConstant, p), value(std::move(v)) {}
  Value value;
};

struct FStringExpr : Expr {
  struct Part {
    std::string literal;  ///< text before the replacement field (may be the only content)
    ExprPtr expr;         ///< the replacement field, or null for a literal-only part
    char conversion = 0;  ///< 'r', 's', 'a' or 0
    std::unique_ptr<FStringExpr> spec;  ///< format spec (itself an f-string), or null
    std::string debug_text;             ///< "x=" for f"{x=}"
  };
  explicit FStringExpr(Pos p) : Expr(ExprKind::kFString, p) {}
  std::vector<Part> parts;
};

struct BinOpExpr : Expr {
  BinOpExpr(Pos p, BinOp o, ExprPtr l, ExprPtr r)
      : Expr(ExprKind::kBinOp, p), op(o), left(std::move(l)), right(std::move(r)) {}
  BinOp op;
  ExprPtr left, right;
};

struct UnaryExpr : Expr {
  UnaryExpr(Pos p, UnOp o, ExprPtr e) : Expr(ExprKind::kUnaryOp, p), op(o), operand(std::move(e)) {}
  UnOp op;
  ExprPtr operand;
};

struct BoolOpExpr : Expr {
  BoolOpExpr(Pos p, bool a) : Expr(ExprKind::kBoolOp, p), is_and(a) {}
  bool is_and;
  std::vector<ExprPtr> values;
};

struct CompareExpr : Expr {
  explicit CompareExpr(Pos p) : Expr(ExprKind::kCompare, p) {}
  ExprPtr left;
  std::vector<CmpOp> ops;
  std::vector<ExprPtr> comparators;
};

struct Argument {
  enum class Kind : std::uint8_t { kPositional, kStar, kKeyword, kDoubleStar };
  Kind kind = Kind::kPositional;
  std::string keyword;
  ExprPtr value;
};

struct CallExpr : Expr {
  explicit CallExpr(Pos p) : Expr(ExprKind::kCall, p) {}
  ExprPtr func;
  std::vector<Argument> args;
  bool simple = true;  ///< only positional and keyword arguments (no * / **)
};

struct AttributeExpr : Expr {
  AttributeExpr(Pos p, ExprPtr v, std::string a, Pos attr_p)
      : Expr(ExprKind::kAttribute, p), value(std::move(v)), attr(std::move(a)), attr_pos(attr_p) {}
  ExprPtr value;
  std::string attr;
  Pos attr_pos;
};

struct SubscriptExpr : Expr {
  SubscriptExpr(Pos p, ExprPtr v, ExprPtr i) : Expr(ExprKind::kSubscript, p), value(std::move(v)), index(std::move(i)) {}
  ExprPtr value;
  ExprPtr index;
};

struct SliceExpr : Expr {
  explicit SliceExpr(Pos p) : Expr(ExprKind::kSlice, p) {}
  ExprPtr lower, upper, step;
};

/// Tuple, list and set displays.
struct SequenceExpr : Expr {
  SequenceExpr(ExprKind k, Pos p) : Expr(k, p) {}
  std::vector<ExprPtr> elts;
  bool has_star = false;
};

struct DictExpr : Expr {
  explicit DictExpr(Pos p) : Expr(ExprKind::kDict, p) {}
  std::vector<ExprPtr> keys;  ///< null key: `**mapping`
  std::vector<ExprPtr> values;
};

struct Comprehension {
  ExprPtr target;
  ExprPtr iter;
  std::vector<ExprPtr> ifs;
};

/// List, set and dict comprehensions and generator expressions.
struct CompExpr : Expr {
  CompExpr(ExprKind k, Pos p) : Expr(k, p) {}
  ExprPtr elt;    ///< element, or key for dict comprehensions
  ExprPtr value;  ///< dict comprehensions only
  std::vector<Comprehension> generators;
};

struct FunctionCode;

struct LambdaExpr : Expr {
  LambdaExpr(Pos p, std::shared_ptr<FunctionCode> c) : Expr(ExprKind::kLambda, p), code(std::move(c)) {}
  std::shared_ptr<FunctionCode> code;
};

struct IfExpExpr : Expr {
  explicit IfExpExpr(Pos p) : Expr(ExprKind::kIfExp, p) {}
  ExprPtr test, body, orelse;
};

struct StarredExpr : Expr {
  StarredExpr(Pos p, ExprPtr v) : Expr(ExprKind::kStarred, p), value(std::move(v)) {}
  ExprPtr value;
};

// --- statements --------------------------------------------------------------

enum class StmtKind : std::uint8_t {
  kExpr, kAssign, kAugAssign, kAnnAssign, kReturn, kIf, kFor, kWhile, kBreak, kContinue, kPass,
  kFunctionDef, kGlobal, kNonlocal, kImport, kImportFrom, kAssert, kWith, kTry, kRaise, kDel,
};

struct Stmt {
  Stmt(StmtKind k, Pos p) : kind(k), pos(p) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  Pos pos;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct ExprStmt : Stmt {
  ExprStmt(Pos p, ExprPtr v) : Stmt(StmtKind::kExpr, p), value(std::move(v)) {}
  ExprPtr value;
};

struct AssignStmt : Stmt {
  explicit AssignStmt(Pos p) : Stmt(StmtKind::kAssign, p) {}
  std::vector<ExprPtr> targets;  ///< a = b = value has two
  ExprPtr value;
};

struct AugAssignStmt : Stmt {
  AugAssignStmt(Pos p, ExprPtr t, BinOp o, ExprPtr v)
      : Stmt(StmtKind::kAugAssign, p), target(std::move(t)), op(o), value(std::move(v)) {}
  ExprPtr target;
  BinOp op;
  ExprPtr value;
};

struct AnnAssignStmt : Stmt {
  explicit AnnAssignStmt(Pos p) : Stmt(StmtKind::kAnnAssign, p) {}
  ExprPtr target;
  ExprPtr value;  ///< may be null (`x: int`)
};

struct ReturnStmt : Stmt {
  ReturnStmt(Pos p, ExprPtr v) : Stmt(StmtKind::kReturn, p), value(std::move(v)) {}
  ExprPtr value;  ///< may be null
};

struct IfStmt : Stmt {
  explicit IfStmt(Pos p) : Stmt(StmtKind::kIf, p) {}
  ExprPtr test;
  Block body, orelse;
};

struct ForStmt : Stmt {
  explicit ForStmt(Pos p) : Stmt(StmtKind::kFor, p) {}
  ExprPtr target, iter;
  Block body, orelse;
};

struct WhileStmt : Stmt {
  explicit WhileStmt(Pos p) : Stmt(StmtKind::kWhile, p) {}
  ExprPtr test;
  Block body, orelse;
};

struct SimpleStmt : Stmt {
  SimpleStmt(StmtKind k, Pos p) : Stmt(k, p) {}
};

struct FunctionDefStmt : Stmt {
  explicit FunctionDefStmt(Pos p) : Stmt(StmtKind::kFunctionDef, p) {}
  std::vector<ExprPtr> decorators;
  std::shared_ptr<FunctionCode> code;
  std::unique_ptr<NameExpr> target;  ///< the name the function is bound to
};

struct NamesStmt : Stmt {  // global / nonlocal
  NamesStmt(StmtKind k, Pos p) : Stmt(k, p) {}
  std::vector<std::string> names;
};

struct ImportAlias {
  std::string name;    ///< dotted module name (import) or attribute name (from-import)
  std::string asname;  ///< may be empty
  std::unique_ptr<NameExpr> target;
  Pos pos;
};

struct ImportStmt : Stmt {
  explicit ImportStmt(Pos p) : Stmt(StmtKind::kImport, p) {}
  std::vector<ImportAlias> names;
};

struct ImportFromStmt : Stmt {
  explicit ImportFromStmt(Pos p) : Stmt(StmtKind::kImportFrom, p) {}
  std::string module;
  Pos module_pos;
  std::vector<ImportAlias> names;
};

struct AssertStmt : Stmt {
  explicit AssertStmt(Pos p) : Stmt(StmtKind::kAssert, p) {}
  ExprPtr test, msg;
};

struct WithItem {
  ExprPtr context;
  ExprPtr target;  ///< may be null
};

struct WithStmt : Stmt {
  explicit WithStmt(Pos p) : Stmt(StmtKind::kWith, p) {}
  std::vector<WithItem> items;
  Block body;
};

struct ExceptHandler {
  Pos pos;
  ExprPtr type;                      ///< null: bare except
  std::unique_ptr<NameExpr> target;  ///< `as name`, may be null
  Block body;
};

struct TryStmt : Stmt {
  explicit TryStmt(Pos p) : Stmt(StmtKind::kTry, p) {}
  Block body;
  std::vector<ExceptHandler> handlers;
  Block orelse, finalbody;
};

struct RaiseStmt : Stmt {
  explicit RaiseStmt(Pos p) : Stmt(StmtKind::kRaise, p) {}
  ExprPtr exc;    ///< null: bare raise
  ExprPtr cause;  ///< `from`, ignored
};

struct DelStmt : Stmt {
  explicit DelStmt(Pos p) : Stmt(StmtKind::kDel, p) {}
  std::vector<ExprPtr> targets;
};

// --- functions and modules ---------------------------------------------------

/// Slots of one scope, assigned by the resolver.
struct ScopeInfo {
  std::vector<std::string> fast_names;  ///< locals kept in the frame
  std::vector<std::string> cell_names;  ///< cell variables, then free variables
  int ncellvars = 0;
  /// For each free variable: its index in the enclosing frame's cells.
  std::vector<int> freevar_sources;
};

struct Param {
  std::string name;
  Pos pos;
  ExprPtr default_value;  ///< may be null
  NameRef ref;
};

struct FunctionCode {
  std::string name;  ///< "<lambda>" for lambdas
  Pos pos;
  /// Positional parameters, then *args (if any), then keyword-only, then **kwargs (if any).
  std::vector<Param> params;
  int num_positional = 0;
  int vararg = -1;  ///< index of *args in params, or -1
  int kwarg = -1;   ///< index of **kwargs in params, or -1
  Block body;
  ExprPtr lambda_body;  ///< lambdas: the expression returned
  ScopeInfo scope;
};

}  // namespace spmd::scenario

namespace spmd::scenario {

/// A parsed scenario program.
class Module {
 public:
  explicit Module(std::shared_ptr<const SourceText> src) : src_(std::move(src)) {}
  const SourceText& source() const { return *src_; }
  Block body;
  ScopeInfo scope;  ///< the module frame's slots (comprehension variables)

 private:
  std::shared_ptr<const SourceText> src_;
};

/// Python source for an expression (used in messages, e.g. "results").
std::string expr_to_source(const Expr& e);

}  // namespace spmd::scenario
