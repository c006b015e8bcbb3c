#pragma once
// The tree-walking interpreter of scenario programs.
//
// One Interpreter runs one module. Host code runs with one ExecState; every
// device invocation of a pmap-ed function gets its own ExecState (on that
// device's fiber), so per-call state never needs thread-locals: fibers may
// migrate between threads. Objects shared between devices (globals, closure
// cells, containers created on the host) are guarded by `heap_mutex_` while a
// device touches them; the guard is never held across anything that may
// suspend a fiber (collectives, count_steps, user code).

#include <atomic>
#include <cstdint>
#include <exception>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "scenario/ast.h"
#include "scenario/objects.h"
#include "scenario/value.h"
#include "spmd/core/device_id.h"
#include "spmd/error.h"
#include "spmd/scenario/scenario.h"

namespace spmd::scenario {

/// Python call depth allowed on the host.
inline constexpr int kHostMaxDepth = 200;
/// Python call depth allowed inside a device function (its fiber stack is
/// also checked directly, see ExecState::stack_floor).
inline constexpr int kDeviceMaxDepth = 200;
/// Stack kept free below the deepest interpreter frame, for C++ callees
/// (array ops, the runtime) and exception unwinding.
inline constexpr std::size_t kStackReserve = 48 * 1024;

struct Frame {
  const ScopeInfo* scope = nullptr;
  const std::string* name = nullptr;  ///< function name for tracebacks
  std::vector<Value> fast;
  std::vector<std::shared_ptr<CellObject>> cells;
  Pos pos;    ///< the statement being executed
  Value ret;  ///< the value of `return`
};

/// A caller frame outside the current device function (for tracebacks).
struct TraceEntry {
  std::string func;
  Pos pos;
};

struct ExecState {
  std::vector<Frame*> frames;
  std::vector<TraceEntry> outer;  ///< frames of the caller of the pmap-ed function
  int depth = 0;
  int max_depth = kHostMaxDepth;
  bool in_device = false;
  bool disable_jit = false;
  /// The device where trace-time effects (print, side effects) happen once:
  /// index 0 on every bound axis. True on the host.
  bool trace_device = true;
  DeviceId device = kHost;
  std::uint64_t token = 0;            ///< owner of objects created by this invocation
  const char* stack_floor = nullptr;  ///< RecursionError when the stack grows below this
  std::vector<std::exception_ptr> handling;  ///< exceptions being handled (for bare `raise`)
  /// Arrays are abstract (traced) here: inside pmap, without disable_jit.
  bool tracing() const { return in_device && !disable_jit; }
};

class Interpreter {
 public:
  Interpreter(const Module& m, const InterpreterOptions& options);
  ~Interpreter();

  void run();

  // --- evaluation ----------------------------------------------------------
  Value eval(ExecState& st, const Expr& e);
  Value call(ExecState& st, const Value& callee, CallArgs& args, const CallSite& site);
  Value call_function(ExecState& st, const Value& fn, CallArgs& args, const CallSite& site);

  // --- protocols (Python semantics; errors without location) ----------------
  bool truthy(ExecState& st, const Value& v);
  /// truthy() with errors located at `pos`.
  bool truth(ExecState& st, const Value& v, Pos pos);
  std::vector<Value> iterate(ExecState& st, const Value& v);
  Value get_attr(ExecState& st, const Value& obj, const std::string& name);
  bool has_attr(ExecState& st, const Value& obj, const std::string& name);
  Value get_item(ExecState& st, const Value& obj, const Value& index);
  void set_item(ExecState& st, const Value& obj, const Value& index, const Value& v, const Expr* obj_expr);
  void del_item(ExecState& st, const Value& obj, const Value& index, const Expr* obj_expr);
  void set_attr(ExecState& st, const Value& obj, const std::string& name, const Value& v, const Expr* obj_expr);
  std::int64_t length(ExecState& st, const Value& v);
  bool contains(ExecState& st, const Value& container, const Value& item);
  std::string str(ExecState& st, const Value& v);
  std::string repr(ExecState& st, const Value& v);

  /// RecursionError (without location) when recursion over deeply nested
  /// data gets close to the end of the stack (natives call this). Natives run
  /// below the interpreter's frames, so they may use half of the reserve.
  void check_native_stack(const ExecState& st) const {
    char probe = 0;
    if (st.stack_floor != nullptr &&
        reinterpret_cast<std::uintptr_t>(&probe) < reinterpret_cast<std::uintptr_t>(st.stack_floor) - kStackReserve / 2) {
      native_stack_exhausted();
    }
  }

  // --- errors --------------------------------------------------------------
  /// Throws ProgramError `kind` located at `pos` with the current traceback.
  [[noreturn]] void raise_at(ExecState& st, Pos pos, std::string kind, std::string message, std::string hint = {});
  /// Adds where / source_line / traceback / device to an error that has none.
  void annotate(Error& e, ExecState& st, Pos pos);
  std::vector<std::string> traceback(const ExecState& st, Pos innermost) const;
  std::vector<TraceEntry> trace_entries(const ExecState& st) const;

  // --- side effects and output ---------------------------------------------
  /// Decides whether a mutation of `obj` may happen now. Inside a traced
  /// device function, mutating an object created outside the current
  /// invocation is a trace-time side effect: it happens on the trace device
  /// only, with a warning once per line. `what` is e.g. "appending to 'results'".
  bool allow_mutation(ExecState& st, const Object& obj, const std::string& what, const Value& stored);
  /// Writes program output (print) atomically.
  void write_out(const std::string& text);
  /// Writes `warning: file:line: text` to the error stream once per (key, line).
  void warn_once(const std::string& key, Pos pos, const std::string& text);
  /// Locks the shared heap when `st` (a device) touches an object it does not own.
  class HeapGuard {
   public:
    HeapGuard(Interpreter& interp, const ExecState& st, const Object* obj);
    ~HeapGuard();
    HeapGuard(const HeapGuard&) = delete;
    HeapGuard& operator=(const HeapGuard&) = delete;

   private:
    std::recursive_mutex* mu_ = nullptr;
  };

  // --- modules and runtime --------------------------------------------------
  Value import_module(ExecState& st, const std::string& name, Pos pos);
  /// The module `name` (built once per interpreter), or undefined if there is none.
  Value module(const std::string& name);
  Runtime& runtime() const { return *runtime_; }
  const SourceText& source() const { return module_.source(); }
  SourceLoc loc(Pos pos) const { return module_.source().loc(pos); }
  std::uint64_t new_token() { return next_token_.fetch_add(1) + 1; }
  const Value& builtin(const std::string& name) const;
  const PyDict& builtins() const { return builtins_; }
  bool global_disable_jit() const { return global_disable_jit_.load(); }
  void set_global_disable_jit(bool on) { global_disable_jit_.store(on); }

  /// A new closure cell. Cells are remembered (weakly) so that the reference
  /// cycles they form with functions (a nested function that refers to
  /// itself) are broken when the interpreter finishes.
  std::shared_ptr<CellObject> new_cell(std::uint64_t owner);

  /// Creates the frame state for a device invocation of a pmap-ed function.
  void enter_device(ExecState& dst, const ExecState& caller, const std::vector<TraceEntry>& outer);

 private:
  enum class Flow : std::uint8_t { kNormal, kBreak, kContinue, kReturn };

  Flow exec_block(ExecState& st, Frame& f, const Block& b);
  Flow exec_stmt(ExecState& st, Frame& f, const Stmt& s);
  Flow exec_for(ExecState& st, Frame& f, const ForStmt& s);
  Flow exec_while(ExecState& st, Frame& f, const WhileStmt& s);
  Flow exec_try(ExecState& st, Frame& f, const TryStmt& s);
  Flow exec_with(ExecState& st, Frame& f, const WithStmt& s);
  void exec_import(ExecState& st, Frame& f, const ImportStmt& s);
  void exec_import_from(ExecState& st, Frame& f, const ImportFromStmt& s);
  void exec_def(ExecState& st, Frame& f, const FunctionDefStmt& s);
  void exec_raise(ExecState& st, Frame& f, const RaiseStmt& s);
  void exec_assert(ExecState& st, Frame& f, const AssertStmt& s);
  void exec_del(ExecState& st, Frame& f, const Expr& target);
  void exec_aug_assign(ExecState& st, Frame& f, const AugAssignStmt& s);

  Value eval_inner(ExecState& st, Frame& f, const Expr& e);
  Value eval_call(ExecState& st, Frame& f, const CallExpr& c);
  Value eval_fstring(ExecState& st, Frame& f, const FStringExpr& e);
  Value eval_comprehension(ExecState& st, Frame& f, const CompExpr& e);
  Value eval_subscript(ExecState& st, Frame& f, const SubscriptExpr& e);
  Value eval_sequence(ExecState& st, Frame& f, const SequenceExpr& e);
  Value eval_dict(ExecState& st, Frame& f, const DictExpr& e);
  Value eval_compare(ExecState& st, Frame& f, const CompareExpr& e);
  Value eval_boolop(ExecState& st, Frame& f, const BoolOpExpr& e);
  Value make_function(ExecState& st, Frame& f, const FunctionCode& code);
  Value eval_index(ExecState& st, Frame& f, const Expr& index);

  Value load_name(ExecState& st, Frame& f, const NameExpr& n);
  void store_name(ExecState& st, Frame& f, const NameExpr& n, const Value& v);
  void store_ref(ExecState& st, Frame& f, const NameRef& ref, const std::string& name, const Value& v, Pos pos);
  void delete_name(ExecState& st, Frame& f, const NameExpr& n);
  void assign(ExecState& st, Frame& f, const Expr& target, const Value& v);
  [[noreturn]] void name_error(ExecState& st, Frame& f, const NameExpr& n);

  void bind_arguments(ExecState& st, const FunctionObject& fn, Frame& f, CallArgs& args);
  void expand_call_args(ExecState& st, Frame& f, const CallExpr& c, CallArgs& args);
  /// RecursionError when the stack grew below ExecState::stack_floor.
  void check_stack(ExecState& st, Pos pos) {
    char probe = 0;
    if (st.stack_floor != nullptr &&
        reinterpret_cast<std::uintptr_t>(&probe) < reinterpret_cast<std::uintptr_t>(st.stack_floor)) {
      stack_exhausted(st, pos);
    }
  }
  // Cold paths, out of line so that the recursive evaluation frames stay small.
  [[noreturn, gnu::noinline]] void stack_exhausted(ExecState& st, Pos pos);
  [[noreturn, gnu::noinline]] static void not_callable(const Value& callee);
  [[noreturn, gnu::noinline]] static void too_deep(const ExecState& st);
  [[noreturn, gnu::noinline]] static void native_stack_exhausted();
  void init_builtins();

  const Module& module_;
  std::ostream* out_;
  std::ostream* err_;
  Runtime* runtime_;
  std::shared_ptr<DictObject> globals_;
  PyDict builtins_;
  std::map<std::string, Value> modules_;
  std::mutex modules_mutex_;
  std::mutex out_mutex_;
  std::set<std::pair<std::string, std::uint32_t>> warned_;
  std::recursive_mutex heap_mutex_;
  std::atomic<std::uint64_t> next_token_{0};
  std::atomic<bool> global_disable_jit_{false};
  Frame module_frame_;
  std::mutex cells_mutex_;
  std::vector<std::weak_ptr<CellObject>> cells_;
  std::size_t cells_compacted_at_ = 1024;
  const char* host_stack_floor_ = nullptr;
};

// Registration of the built-in namespaces (defined in builtins.cc, jax_*.cc).
void register_builtins(PyDict& builtins);
Value build_module(Interpreter& interp, const std::string& name);  // null Value: no such module

}  // namespace spmd::scenario
