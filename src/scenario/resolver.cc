#include "scenario/resolver.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scenario/python_errors.h"

namespace spmd::scenario {

namespace {

struct Scope;

struct Use {
  NameRef* ref;
  std::string raw;
  std::string renamed;       // comprehension variable this may refer to, or ""
  Scope* comp_scope = nullptr;  // scope holding that comprehension
};

struct Scope {
  bool is_module = false;
  Scope* parent = nullptr;
  ScopeInfo* info = nullptr;
  std::set<std::string> globals;
  std::map<std::string, Pos> nonlocals;
  std::vector<std::string> bound_order;
  std::set<std::string> bound;
  std::vector<Use> uses;
  std::set<std::string> cells;
  std::vector<std::string> freevars;
  std::vector<std::unique_ptr<Scope>> children;

  void bind(const std::string& name) {
    if (bound.insert(name).second) bound_order.push_back(name);
  }
  bool is_local(const std::string& name) const {
    if (is_module) return name.find('.') != std::string::npos && bound.count(name);
    return bound.count(name) && !globals.count(name) && !nonlocals.count(name);
  }
  void add_free(const std::string& name) {
    if (std::find(freevars.begin(), freevars.end(), name) == freevars.end()) freevars.push_back(name);
  }
};

class Resolver {
 public:
  explicit Resolver(const SourceText& src) : src_(src) {}

  void run(Module& m) {
    Scope root;
    root.is_module = true;
    root.info = &m.scope;
    visit_block(m.body, root);
    classify(root);
    assign(root);
  }

 private:
  struct RenameEntry {
    Scope* scope;
    std::map<std::string, std::string> names;
  };

  void use(NameExpr& n, Scope& s) { use_ref(n.ref, n.id, s); }
  void use_ref(NameRef& ref, const std::string& name, Scope& s) {
    Use u{&ref, name, "", nullptr};
    for (auto it = renames_.rbegin(); it != renames_.rend(); ++it) {
      auto f = it->names.find(name);
      if (f != it->names.end()) {
        u.renamed = f->second;
        u.comp_scope = it->scope;
        break;
      }
    }
    s.uses.push_back(std::move(u));
  }
  void bind_name(NameExpr& n, Scope& s) {
    // A store inside a comprehension to one of its own variables (nested targets).
    for (auto it = renames_.rbegin(); it != renames_.rend(); ++it) {
      if (it->scope != &s) break;
      auto f = it->names.find(n.id);
      if (f != it->names.end()) {
        s.bind(f->second);
        use(n, s);
        return;
      }
    }
    s.bind(n.id);
    use(n, s);
  }

  void visit_block(Block& b, Scope& s) {
    for (auto& st : b) visit_stmt(*st, s);
  }

  void visit_target(Expr& e, Scope& s) {
    switch (e.kind) {
      case ExprKind::kName:
        bind_name(static_cast<NameExpr&>(e), s);
        break;
      case ExprKind::kTuple:
      case ExprKind::kList:
        for (auto& elt : static_cast<SequenceExpr&>(e).elts) visit_target(*elt, s);
        break;
      case ExprKind::kStarred:
        visit_target(*static_cast<StarredExpr&>(e).value, s);
        break;
      default:
        visit_expr(e, s);  // attribute / subscript targets evaluate their parts
    }
  }

  void visit_function(FunctionCode& code, Scope& s) {
    for (auto& p : code.params) {
      if (p.default_value) visit_expr(*p.default_value, s);
    }
    auto child = std::make_unique<Scope>();
    child->parent = &s;
    child->info = &code.scope;
    Scope& c = *child;
    s.children.push_back(std::move(child));
    for (auto& p : code.params) {
      c.bind(p.name);
      c.uses.push_back(Use{&p.ref, p.name, "", nullptr});
    }
    if (code.lambda_body) {
      visit_expr(*code.lambda_body, c);
    } else {
      // Declarations apply to the whole body, wherever they appear.
      collect_declarations(code.body, c);
      visit_block(code.body, c);
    }
  }

  void collect_declarations(Block& b, Scope& s) {
    for (auto& st : b) {
      switch (st->kind) {
        case StmtKind::kGlobal:
          for (auto& n : static_cast<NamesStmt&>(*st).names) s.globals.insert(n);
          break;
        case StmtKind::kNonlocal:
          for (auto& n : static_cast<NamesStmt&>(*st).names) s.nonlocals.emplace(n, st->pos);
          break;
        case StmtKind::kIf: {
          auto& x = static_cast<IfStmt&>(*st);
          collect_declarations(x.body, s);
          collect_declarations(x.orelse, s);
          break;
        }
        case StmtKind::kFor: {
          auto& x = static_cast<ForStmt&>(*st);
          collect_declarations(x.body, s);
          collect_declarations(x.orelse, s);
          break;
        }
        case StmtKind::kWhile: {
          auto& x = static_cast<WhileStmt&>(*st);
          collect_declarations(x.body, s);
          collect_declarations(x.orelse, s);
          break;
        }
        case StmtKind::kWith:
          collect_declarations(static_cast<WithStmt&>(*st).body, s);
          break;
        case StmtKind::kTry: {
          auto& x = static_cast<TryStmt&>(*st);
          collect_declarations(x.body, s);
          for (auto& h : x.handlers) collect_declarations(h.body, s);
          collect_declarations(x.orelse, s);
          collect_declarations(x.finalbody, s);
          break;
        }
        default:
          break;
      }
    }
  }

  void visit_stmt(Stmt& st, Scope& s) {
    switch (st.kind) {
      case StmtKind::kExpr:
        visit_expr(*static_cast<ExprStmt&>(st).value, s);
        break;
      case StmtKind::kAssign: {
        auto& x = static_cast<AssignStmt&>(st);
        visit_expr(*x.value, s);
        for (auto& t : x.targets) visit_target(*t, s);
        break;
      }
      case StmtKind::kAugAssign: {
        auto& x = static_cast<AugAssignStmt&>(st);
        visit_expr(*x.value, s);
        visit_target(*x.target, s);
        break;
      }
      case StmtKind::kAnnAssign: {
        auto& x = static_cast<AnnAssignStmt&>(st);
        if (x.value) visit_expr(*x.value, s);
        if (x.value || x.target->kind != ExprKind::kName) visit_target(*x.target, s);
        break;
      }
      case StmtKind::kReturn: {
        auto& x = static_cast<ReturnStmt&>(st);
        if (x.value) visit_expr(*x.value, s);
        break;
      }
      case StmtKind::kIf: {
        auto& x = static_cast<IfStmt&>(st);
        visit_expr(*x.test, s);
        visit_block(x.body, s);
        visit_block(x.orelse, s);
        break;
      }
      case StmtKind::kFor: {
        auto& x = static_cast<ForStmt&>(st);
        visit_expr(*x.iter, s);
        visit_target(*x.target, s);
        visit_block(x.body, s);
        visit_block(x.orelse, s);
        break;
      }
      case StmtKind::kWhile: {
        auto& x = static_cast<WhileStmt&>(st);
        visit_expr(*x.test, s);
        visit_block(x.body, s);
        visit_block(x.orelse, s);
        break;
      }
      case StmtKind::kFunctionDef: {
        auto& x = static_cast<FunctionDefStmt&>(st);
        for (auto& d : x.decorators) visit_expr(*d, s);
        visit_function(*x.code, s);
        bind_name(*x.target, s);
        break;
      }
      case StmtKind::kGlobal:
        for (auto& n : static_cast<NamesStmt&>(st).names) s.globals.insert(n);
        break;
      case StmtKind::kNonlocal:
        for (auto& n : static_cast<NamesStmt&>(st).names) s.nonlocals.emplace(n, st.pos);
        break;
      case StmtKind::kImport:
        for (auto& a : static_cast<ImportStmt&>(st).names) bind_name(*a.target, s);
        break;
      case StmtKind::kImportFrom:
        for (auto& a : static_cast<ImportFromStmt&>(st).names) bind_name(*a.target, s);
        break;
      case StmtKind::kAssert: {
        auto& x = static_cast<AssertStmt&>(st);
        visit_expr(*x.test, s);
        if (x.msg) visit_expr(*x.msg, s);
        break;
      }
      case StmtKind::kWith: {
        auto& x = static_cast<WithStmt&>(st);
        for (auto& item : x.items) {
          visit_expr(*item.context, s);
          if (item.target) visit_target(*item.target, s);
        }
        visit_block(x.body, s);
        break;
      }
      case StmtKind::kTry: {
        auto& x = static_cast<TryStmt&>(st);
        visit_block(x.body, s);
        for (auto& h : x.handlers) {
          if (h.type) visit_expr(*h.type, s);
          if (h.target) bind_name(*h.target, s);
          visit_block(h.body, s);
        }
        visit_block(x.orelse, s);
        visit_block(x.finalbody, s);
        break;
      }
      case StmtKind::kRaise: {
        auto& x = static_cast<RaiseStmt&>(st);
        if (x.exc) visit_expr(*x.exc, s);
        if (x.cause) visit_expr(*x.cause, s);
        break;
      }
      case StmtKind::kDel:
        for (auto& t : static_cast<DelStmt&>(st).targets) visit_target(*t, s);
        break;
      case StmtKind::kBreak:
      case StmtKind::kContinue:
      case StmtKind::kPass:
        break;
    }
  }

  void visit_comprehension(CompExpr& c, Scope& s) {
    visit_expr(*c.generators[0].iter, s);
    renames_.push_back(RenameEntry{&s, {}});
    for (std::size_t k = 0; k < c.generators.size(); ++k) {
      auto& g = c.generators[k];
      if (k > 0) visit_expr(*g.iter, s);
      std::vector<NameExpr*> names;
      collect_target_names(*g.target, names);
      for (NameExpr* n : names) {
        // Comprehension variables live in their own scope: give them hidden names
        // ("x.3" cannot clash with a Python identifier).
        std::string hidden = n->id + "." + std::to_string(++counter_);
        renames_.back().names[n->id] = hidden;
      }
      visit_target(*g.target, s);
      for (auto& cond : g.ifs) visit_expr(*cond, s);
    }
    visit_expr(*c.elt, s);
    if (c.value) visit_expr(*c.value, s);
    renames_.pop_back();
  }

  void collect_target_names(Expr& e, std::vector<NameExpr*>& out) {
    if (e.kind == ExprKind::kName) {
      out.push_back(static_cast<NameExpr*>(&e));
    } else if (e.kind == ExprKind::kTuple || e.kind == ExprKind::kList) {
      for (auto& elt : static_cast<SequenceExpr&>(e).elts) collect_target_names(*elt, out);
    } else if (e.kind == ExprKind::kStarred) {
      collect_target_names(*static_cast<StarredExpr&>(e).value, out);
    }
  }

  void visit_expr(Expr& e, Scope& s) {
    switch (e.kind) {
      case ExprKind::kName:
        use(static_cast<NameExpr&>(e), s);
        break;
      case ExprKind::kConstant:
        break;
      case ExprKind::kFString:
        for (auto& p : static_cast<FStringExpr&>(e).parts) {
          if (p.expr) visit_expr(*p.expr, s);
          if (p.spec) visit_expr(*p.spec, s);
        }
        break;
      case ExprKind::kBinOp: {
        auto& x = static_cast<BinOpExpr&>(e);
        visit_expr(*x.left, s);
        visit_expr(*x.right, s);
        break;
      }
      case ExprKind::kUnaryOp:
        visit_expr(*static_cast<UnaryExpr&>(e).operand, s);
        break;
      case ExprKind::kBoolOp:
        for (auto& v : static_cast<BoolOpExpr&>(e).values) visit_expr(*v, s);
        break;
      case ExprKind::kCompare: {
        auto& x = static_cast<CompareExpr&>(e);
        visit_expr(*x.left, s);
        for (auto& c : x.comparators) visit_expr(*c, s);
        break;
      }
      case ExprKind::kCall: {
        auto& x = static_cast<CallExpr&>(e);
        visit_expr(*x.func, s);
        for (auto& a : x.args) visit_expr(*a.value, s);
        break;
      }
      case ExprKind::kAttribute:
        visit_expr(*static_cast<AttributeExpr&>(e).value, s);
        break;
      case ExprKind::kSubscript: {
        auto& x = static_cast<SubscriptExpr&>(e);
        visit_expr(*x.value, s);
        visit_expr(*x.index, s);
        break;
      }
      case ExprKind::kSlice: {
        auto& x = static_cast<SliceExpr&>(e);
        if (x.lower) visit_expr(*x.lower, s);
        if (x.upper) visit_expr(*x.upper, s);
        if (x.step) visit_expr(*x.step, s);
        break;
      }
      case ExprKind::kTuple:
      case ExprKind::kList:
      case ExprKind::kSet:
        for (auto& elt : static_cast<SequenceExpr&>(e).elts) visit_expr(*elt, s);
        break;
      case ExprKind::kDict: {
        auto& x = static_cast<DictExpr&>(e);
        for (std::size_t i = 0; i < x.values.size(); ++i) {
          if (x.keys[i]) visit_expr(*x.keys[i], s);
          visit_expr(*x.values[i], s);
        }
        break;
      }
      case ExprKind::kListComp:
      case ExprKind::kSetComp:
      case ExprKind::kDictComp:
      case ExprKind::kGenExp:
        visit_comprehension(static_cast<CompExpr&>(e), s);
        break;
      case ExprKind::kLambda:
        visit_function(*static_cast<LambdaExpr&>(e).code, s);
        break;
      case ExprKind::kIfExp: {
        auto& x = static_cast<IfExpExpr&>(e);
        visit_expr(*x.test, s);
        visit_expr(*x.body, s);
        visit_expr(*x.orelse, s);
        break;
      }
      case ExprKind::kStarred:
        visit_expr(*static_cast<StarredExpr&>(e).value, s);
        break;
    }
  }

  // --- classification --------------------------------------------------------

  enum class Where { kLocal, kFree, kGlobal };
  struct Decision {
    Where where;
    std::string name;
  };

  // Finds the function scope above `s` that binds `name`, or null (global).
  Scope* find_definition(Scope& s, const std::string& name) {
    bool hidden = name.find('.') != std::string::npos;
    for (Scope* p = s.parent; p; p = p->parent) {
      if (p->is_module) return hidden && p->bound.count(name) ? p : nullptr;
      if (p->globals.count(name)) return nullptr;
      if (p->is_local(name)) return p;
    }
    return nullptr;
  }

  void mark_free(Scope& s, Scope& def, const std::string& name) {
    def.cells.insert(name);
    for (Scope* p = &s; p && p != &def; p = p->parent) p->add_free(name);
  }

  Decision decide(Scope& s, const Use& u) {
    std::string name = u.raw;
    if (u.comp_scope && (u.comp_scope == &s || !s.is_local(u.raw))) name = u.renamed;
    if (s.globals.count(name)) return {Where::kGlobal, name};
    if (s.is_local(name)) return {Where::kLocal, name};
    if (!s.is_module || name.find('.') != std::string::npos) {
      if (Scope* def = find_definition(s, name)) {
        mark_free(s, *def, name);
        return {Where::kFree, name};
      }
    }
    return {Where::kGlobal, name};
  }

  void classify(Scope& s) {
    for (const auto& [name, pos] : s.nonlocals) {
      if (!find_definition(s, name)) throw_syntax_error(src_, pos, "no binding for nonlocal '" + name + "' found");
    }
    decisions_[&s].reserve(s.uses.size());
    for (const auto& u : s.uses) decisions_[&s].push_back(decide(s, u));
    for (auto& c : s.children) classify(*c);
  }

  void assign(Scope& s) {
    ScopeInfo& info = *s.info;
    std::map<std::string, int> fast;
    std::map<std::string, int> cell;
    for (const auto& name : s.bound_order) {
      if (!s.is_local(name)) continue;
      if (s.cells.count(name)) {
        cell[name] = static_cast<int>(info.cell_names.size());
        info.cell_names.push_back(name);
      } else {
        fast[name] = static_cast<int>(info.fast_names.size());
        info.fast_names.push_back(name);
      }
    }
    info.ncellvars = static_cast<int>(info.cell_names.size());
    for (const auto& name : s.freevars) {
      cell[name] = static_cast<int>(info.cell_names.size());
      info.cell_names.push_back(name);
    }
    const auto& decisions = decisions_[&s];
    for (std::size_t i = 0; i < s.uses.size(); ++i) {
      const Decision& d = decisions[i];
      NameRef& ref = *s.uses[i].ref;
      if (d.where == Where::kGlobal) {
        ref.scope = NameRef::Scope::kGlobal;
      } else if (auto it = cell.find(d.name); it != cell.end()) {
        ref.scope = NameRef::Scope::kCell;
        ref.index = it->second;
      } else {
        ref.scope = NameRef::Scope::kFast;
        ref.index = fast.at(d.name);
      }
    }
    for (auto& c : s.children) {
      assign(*c);
      // The child's free variables come from this scope's cells.
      ScopeInfo& ci = *c->info;
      ci.freevar_sources.clear();
      for (const auto& name : c->freevars) ci.freevar_sources.push_back(cell.at(name));
    }
  }

  const SourceText& src_;
  std::vector<RenameEntry> renames_;
  std::map<Scope*, std::vector<Decision>> decisions_;
  int counter_ = 0;
};

}  // namespace

void resolve_names(Module& m) { Resolver(m.source()).run(m); }

}  // namespace spmd::scenario
