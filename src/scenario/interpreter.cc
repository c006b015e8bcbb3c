#include "scenario/interpreter.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <iostream>

#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/operators.h"
#include "scenario/py_format.h"
#include "scenario/python_errors.h"
#include "spmd/runtime/device.h"
#include "spmd/runtime/runtime.h"

namespace spmd::scenario {

namespace {

// Hints for names that are usually missing an import.
const char* import_hint(const std::string& name) {
  if (name == "jnp") return "add `import jax.numpy as jnp`";
  if (name == "np") return "add `import numpy as np` (spmdsim maps numpy to jax.numpy)";
  if (name == "lax") return "add `from jax import lax`";
  if (name == "jax") return "add `import jax`";
  if (name == "pmap") return "add `from jax import pmap` (or call it as jax.pmap)";
  if (name == "partial") return "add `from functools import partial`";
  if (name == "functools") return "add `import functools`";
  if (name == "random") return "add `from jax import random`";
  if (name == "math") return "add `import math`";
  if (name == "vmap") return "add `from jax import vmap`";
  if (name == "jit") return "add `from jax import jit`";
  if (name == "nn") return "add `from jax import nn`";
  return nullptr;
}

bool is_catchable(const Error& e) {
  return dynamic_cast<const ProgramError*>(&e) != nullptr || dynamic_cast<const InvalidArgument*>(&e) != nullptr;
}

// Frames of the calling stack, popped on scope exit.
struct FrameScope {
  FrameScope(ExecState& st, Frame& f) : st_(st) {
    ++st_.depth;
    st_.frames.push_back(&f);
  }
  ~FrameScope() {
    --st_.depth;
    st_.frames.pop_back();
  }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;
  ExecState& st_;
};

const char* host_stack_floor() {
  char here = 0;
  auto cur = reinterpret_cast<std::uintptr_t>(&here);
  std::uintptr_t floor = cur > (std::uintptr_t{1} << 20) ? cur - (std::uintptr_t{1} << 20) : 0;  // 1 MiB fallback
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr != nullptr) {
      auto lo = reinterpret_cast<std::uintptr_t>(addr);
      if (cur > lo && cur - lo > kStackReserve) floor = lo + kStackReserve;
    }
    pthread_attr_destroy(&attr);
  }
  return reinterpret_cast<const char*>(floor);
}

}  // namespace

// ============================================================================
// setup

Interpreter::Interpreter(const Module& m, const InterpreterOptions& options)
    : module_(m),
      out_(options.out ? options.out : &std::cout),
      err_(options.err ? options.err : &std::cerr),
      runtime_(options.runtime),
      globals_(std::make_shared<DictObject>(0)) {
  if (runtime_ == nullptr) {
    throw_invalid_argument("InvalidArgument", "run_module: InterpreterOptions::runtime is required",
                           "create a spmd::Runtime and pass its address");
  }
  register_builtins(builtins_);
  globals_->map.set(Value::str("__name__"), Value::str("__main__"));
  globals_->map.set(Value::str("__file__"), Value::str(m.source().path()));
  static const std::string kModuleName = "<module>";
  module_frame_.scope = &m.scope;
  module_frame_.name = &kModuleName;
  module_frame_.fast.resize(m.scope.fast_names.size());
  for (std::size_t i = 0; i < m.scope.cell_names.size(); ++i) {
    module_frame_.cells.push_back(std::make_shared<CellObject>(0));
  }
  host_stack_floor_ = host_stack_floor();
}

Interpreter::~Interpreter() {
  // Break function <-> cell cycles; everything else is released by ownership.
  for (auto& w : cells_) {
    if (auto c = w.lock()) c->value = Value();
  }
  for (auto& c : module_frame_.cells) c->value = Value();
}

std::shared_ptr<CellObject> Interpreter::new_cell(std::uint64_t owner) {
  // A separate control block: a weak_ptr then keeps only that block alive.
  std::shared_ptr<CellObject> cell(new CellObject(owner));
  std::lock_guard<std::mutex> lock(cells_mutex_);
  if (cells_.size() >= cells_compacted_at_) {
    cells_.erase(std::remove_if(cells_.begin(), cells_.end(), [](const auto& w) { return w.expired(); }), cells_.end());
    cells_compacted_at_ = std::max<std::size_t>(1024, cells_.size() * 2);
  }
  cells_.push_back(cell);
  return cell;
}

void Interpreter::run() {
  ExecState st;
  st.stack_floor = host_stack_floor_;
  st.frames.push_back(&module_frame_);
  exec_block(st, module_frame_, module_.body);
}

const Value& Interpreter::builtin(const std::string& name) const {
  static const Value kUndefined;
  const Value* v = builtins_.find(Value::str(name));
  return v ? *v : kUndefined;
}

void Interpreter::enter_device(ExecState& dst, const ExecState& caller, const std::vector<TraceEntry>& outer) {
  DeviceInfo info = current_device();
  dst.in_device = true;
  dst.device = info.id;
  dst.trace_device = std::all_of(info.axes.begin(), info.axes.end(), [](const AxisBinding& b) { return b.index == 0; });
  dst.disable_jit = caller.disable_jit || global_disable_jit();
  dst.token = new_token();
  dst.outer = outer;
  dst.max_depth = kDeviceMaxDepth;
  char here = 0;
  std::size_t stack = runtime_->options().fiber_stack_size;
  std::size_t usable = stack > 2 * kStackReserve ? stack - kStackReserve : stack / 2;
  dst.stack_floor = &here - usable;
}

// ============================================================================
// errors

std::vector<TraceEntry> Interpreter::trace_entries(const ExecState& st) const {
  std::vector<TraceEntry> out = st.outer;
  for (const Frame* f : st.frames) out.push_back({*f->name, f->pos});
  return out;
}

std::vector<std::string> Interpreter::traceback(const ExecState& st, Pos innermost) const {
  std::vector<TraceEntry> entries = trace_entries(st);
  if (!entries.empty()) entries.back().pos = innermost;
  std::vector<std::string> lines{"Traceback (most recent call last):"};
  const std::string& path = source().path();
  std::size_t i = 0;
  while (i < entries.size()) {
    std::size_t j = i + 1;
    while (j < entries.size() && entries[j].func == entries[i].func && entries[j].pos.line == entries[i].pos.line) ++j;
    std::size_t run = j - i;
    std::size_t shown = std::min<std::size_t>(run, 3);
    for (std::size_t k = 0; k < shown; ++k) {
      const TraceEntry& e = entries[i + k];
      lines.push_back("  " + path + ":" + std::to_string(e.pos.line) + " in " + e.func);
      std::string text = source().line(e.pos.line);
      std::size_t b = text.find_first_not_of(" \t");
      if (b != std::string::npos) lines.push_back("    " + text.substr(b));
    }
    if (run > shown) lines.push_back("  [Previous line repeated " + std::to_string(run - shown) + " more times]");
    i = j;
  }
  return lines;
}

void Interpreter::raise_at(ExecState& st, Pos pos, std::string kind, std::string message, std::string hint) {
  Report r = make_report(std::move(kind), std::move(message), std::move(hint));
  r.where = loc(pos);
  r.source_line = source().line(pos.line);
  r.details = traceback(st, pos);
  if (st.in_device) r.device = st.device;
  throw ProgramError(std::move(r));
}

void Interpreter::annotate(Error& e, ExecState& st, Pos pos) {
  const Report& r = e.report();
  bool need_where = !r.where.valid();
  // A location in this file set by the runtime or an op (from the SourceLoc we
  // passed): it still lacks the source line and the traceback.
  bool need_line = !need_where && r.source_line.empty() && r.where.file != nullptr &&
                   std::string_view(r.where.file) == source().path();
  bool need_device = st.in_device && r.device < 0;
  if (!need_where && !need_line && !need_device) return;
  Report& m = e.mutable_report();
  if (need_where || need_line) {
    if (need_where) m.where = loc(pos);
    m.source_line = source().line(m.where.line);
    // Our frames explain the error only when it happened here (not, say, a
    // deadlock reported on the host at a line some device was executing).
    if (need_where || m.where.line == pos.line) {
      Pos at = need_where ? pos : Pos{m.where.line, m.where.column};
      std::vector<std::string> tb = traceback(st, at);
      m.details.insert(m.details.end(), tb.begin(), tb.end());
    }
  }
  if (need_device) m.device = st.device;
}

void Interpreter::stack_exhausted(ExecState& st, Pos pos) {
  {
    // kStackReserve below the floor leaves room for building the report.
    raise_at(st, pos, "RecursionError", "maximum recursion depth exceeded",
             st.in_device ? "the device's fiber stack is full (RuntimeOptions::fiber_stack_size is " +
                                std::to_string(runtime_->options().fiber_stack_size / 1024) +
                                " KiB): recurse less deeply, or run with a larger fiber stack"
                          : "recurse less deeply, or use a loop");
  }
}

// ============================================================================
// output and side effects

void Interpreter::write_out(const std::string& text) {
  std::lock_guard<std::mutex> lock(out_mutex_);
  *out_ << text << std::flush;
}

void Interpreter::warn_once(const std::string& key, Pos pos, const std::string& text) {
  std::lock_guard<std::mutex> lock(out_mutex_);
  if (!warned_.insert({key, pos.line}).second) return;
  *err_ << "warning: " << source().path() << ":" << pos.line << ": " << text << "\n" << std::flush;
}

Interpreter::HeapGuard::HeapGuard(Interpreter& interp, const ExecState& st, const Object* obj) {
  if (st.in_device && obj != nullptr && obj->owner() != st.token) {
    mu_ = &interp.heap_mutex_;
    mu_->lock();
  }
}

Interpreter::HeapGuard::~HeapGuard() {
  if (mu_) mu_->unlock();
}

namespace {

bool contains_device_array(const Value& v, int depth = 0) {
  if (depth > 8) return false;
  switch (v.kind()) {
    case Kind::kArray:
      return v.as_array().device() != kHost;
    case Kind::kTuple:
      for (const auto& x : v.tuple_items()) {
        if (contains_device_array(x, depth + 1)) return true;
      }
      return false;
    case Kind::kList:
      for (const auto& x : v.as<ListObject>().items) {
        if (contains_device_array(x, depth + 1)) return true;
      }
      return false;
    case Kind::kDict: {
      bool found = false;
      v.as<DictObject>().map.for_each([&](const Value&, const Value& x) { found = found || contains_device_array(x, depth + 1); });
      return found;
    }
    default:
      return false;
  }
}

}  // namespace

bool Interpreter::allow_mutation(ExecState& st, const Object& obj, const std::string& what, const Value& stored) {
  if (!st.tracing() || obj.owner() == st.token) return true;
  Pos pos = st.frames.empty() ? Pos{} : st.frames.back()->pos;
  std::string text = "side effect inside a pmap-ed function: " + what +
                     " (defined outside the function) happens once while tracing, not once per device";
  if (contains_device_array(stored)) text += ", and stores a tracer";
  text += "; return values from the function instead";
  warn_once("side-effect", pos, text);
  return st.trace_device;
}

// ============================================================================
// statements

Interpreter::Flow Interpreter::exec_block(ExecState& st, Frame& f, const Block& b) {
  for (const auto& s : b) {
    Flow fl = exec_stmt(st, f, *s);
    if (fl != Flow::kNormal) return fl;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec_stmt(ExecState& st, Frame& f, const Stmt& s) {
  f.pos = s.pos;
  set_current_location(loc(s.pos));
  count_steps();
  try {
    switch (s.kind) {
      case StmtKind::kExpr:
        eval_inner(st, f, *static_cast<const ExprStmt&>(s).value);
        return Flow::kNormal;
      case StmtKind::kAssign: {
        const auto& x = static_cast<const AssignStmt&>(s);
        Value v = eval_inner(st, f, *x.value);
        for (const auto& t : x.targets) assign(st, f, *t, v);
        return Flow::kNormal;
      }
      case StmtKind::kAugAssign:
        exec_aug_assign(st, f, static_cast<const AugAssignStmt&>(s));
        return Flow::kNormal;
      case StmtKind::kAnnAssign: {
        const auto& x = static_cast<const AnnAssignStmt&>(s);
        if (x.value) assign(st, f, *x.target, eval_inner(st, f, *x.value));
        return Flow::kNormal;
      }
      case StmtKind::kReturn: {
        const auto& x = static_cast<const ReturnStmt&>(s);
        f.ret = x.value ? eval_inner(st, f, *x.value) : Value::none();
        return Flow::kReturn;
      }
      case StmtKind::kIf: {
        const auto& x = static_cast<const IfStmt&>(s);
        bool taken = truth(st, eval_inner(st, f, *x.test), x.test->pos);
        // Per-device Python branches (possible under disable_jit) are decisions too.
        if (st.in_device) record_decision("if", taken ? 1 : 0, loc(s.pos));
        if (taken) return exec_block(st, f, x.body);
        return exec_block(st, f, x.orelse);
      }
      case StmtKind::kFor:
        return exec_for(st, f, static_cast<const ForStmt&>(s));
      case StmtKind::kWhile:
        return exec_while(st, f, static_cast<const WhileStmt&>(s));
      case StmtKind::kBreak:
        return Flow::kBreak;
      case StmtKind::kContinue:
        return Flow::kContinue;
      case StmtKind::kPass:
      case StmtKind::kGlobal:
      case StmtKind::kNonlocal:
        return Flow::kNormal;
      case StmtKind::kFunctionDef:
        exec_def(st, f, static_cast<const FunctionDefStmt&>(s));
        return Flow::kNormal;
      case StmtKind::kImport:
        exec_import(st, f, static_cast<const ImportStmt&>(s));
        return Flow::kNormal;
      case StmtKind::kImportFrom:
        exec_import_from(st, f, static_cast<const ImportFromStmt&>(s));
        return Flow::kNormal;
      case StmtKind::kAssert:
        exec_assert(st, f, static_cast<const AssertStmt&>(s));
        return Flow::kNormal;
      case StmtKind::kWith:
        return exec_with(st, f, static_cast<const WithStmt&>(s));
      case StmtKind::kTry:
        return exec_try(st, f, static_cast<const TryStmt&>(s));
      case StmtKind::kRaise:
        exec_raise(st, f, static_cast<const RaiseStmt&>(s));
        return Flow::kNormal;
      case StmtKind::kDel:
        for (const auto& t : static_cast<const DelStmt&>(s).targets) exec_del(st, f, *t);
        return Flow::kNormal;
    }
  } catch (Error& e) {
    annotate(e, st, s.pos);
    throw;
  }
  return Flow::kNormal;
}

namespace {

// Calls `fn(item)` for each element of an iterable; `fn` returns false to stop.
// Ranges are walked lazily; everything else is snapshotted first.
template <class F>
void for_each_item(Interpreter& interp, ExecState& st, const Value& it, F&& fn) {
  if (it.is(Kind::kRange)) {
    const auto& r = it.as<RangeObject>();
    std::int64_t n = r.length();
    for (std::int64_t k = 0; k < n; ++k) {
      if (!fn(Value::integer(r.start + k * r.step))) return;
    }
    return;
  }
  if (it.is(Kind::kIterator)) {
    auto& iter = it.as<IteratorObject>();
    while (iter.next < iter.items.size()) {
      Value v = iter.items[iter.next++];
      if (!fn(v)) return;
    }
    return;
  }
  std::vector<Value> items = interp.iterate(st, it);
  for (const auto& v : items) {
    if (!fn(v)) return;
  }
}

}  // namespace

Interpreter::Flow Interpreter::exec_for(ExecState& st, Frame& f, const ForStmt& s) {
  Value it = eval_inner(st, f, *s.iter);
  if (st.in_device && it.is(Kind::kRange)) record_decision("for", it.as<RangeObject>().length(), loc(s.pos));
  bool broke = false;
  bool returned = false;
  for_each_item(*this, st, it, [&](const Value& item) {
    count_steps();
    assign(st, f, *s.target, item);
    Flow fl = exec_block(st, f, s.body);
    if (fl == Flow::kBreak) {
      broke = true;
      return false;
    }
    if (fl == Flow::kReturn) {
      returned = true;
      return false;
    }
    f.pos = s.pos;
    return true;
  });
  if (returned) return Flow::kReturn;
  if (!broke) return exec_block(st, f, s.orelse);
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::exec_while(ExecState& st, Frame& f, const WhileStmt& s) {
  while (true) {
    f.pos = s.pos;
    set_current_location(loc(s.pos));
    count_steps();
    bool go = truth(st, eval_inner(st, f, *s.test), s.test->pos);
    if (st.in_device) record_decision("while", go ? 1 : 0, loc(s.pos));
    if (!go) break;
    Flow fl = exec_block(st, f, s.body);
    if (fl == Flow::kBreak) return Flow::kNormal;
    if (fl == Flow::kReturn) return fl;
  }
  return exec_block(st, f, s.orelse);
}

Interpreter::Flow Interpreter::exec_try(ExecState& st, Frame& f, const TryStmt& s) {
  Flow result = Flow::kNormal;
  auto run_finally = [&] {
    if (s.finalbody.empty()) return;
    Flow ff = exec_block(st, f, s.finalbody);
    if (ff != Flow::kNormal) result = ff;
  };
  bool raised = false;
  try {
    result = exec_block(st, f, s.body);
  } catch (Error& e) {
    raised = true;
    // Runtime stops (deadlock, mismatch, budget) are not Python exceptions:
    // they pass through untouched, without running handlers or finally blocks.
    if (!is_catchable(e)) throw;
    const ExceptHandler* handler = nullptr;
    for (const auto& h : s.handlers) {
      if (!h.type) {
        handler = &h;
        break;
      }
      Value t = eval_inner(st, f, *h.type);
      std::vector<Value> classes = t.is(Kind::kTuple) ? t.tuple_items() : std::vector<Value>{t};
      bool match = false;
      for (const auto& c : classes) {
        if (!c.is(Kind::kType) || c.as<TypeObject>().instance_kind != Kind::kException) {
          raise_at(st, h.type->pos, "TypeError", "catching classes that do not inherit from BaseException is not allowed");
        }
        match = match || exception_matches(e.kind(), c.as<TypeObject>().name);
      }
      if (match) {
        handler = &h;
        break;
      }
    }
    if (!handler) {
      run_finally();
      throw;
    }
    st.handling.push_back(std::current_exception());
    struct Pop {
      ExecState& st;
      ~Pop() { st.handling.pop_back(); }
    } pop{st};
    if (handler->target) {
      store_name(st, f, *handler->target,
                 Value::object(Kind::kException, std::make_shared<ExceptionObject>(e.kind(), e.report().message)));
    }
    try {
      result = exec_block(st, f, handler->body);
    } catch (Error& inner) {
      if (is_catchable(inner)) run_finally();
      throw;
    }
  }
  if (!raised && result == Flow::kNormal && !s.orelse.empty()) {
    try {
      result = exec_block(st, f, s.orelse);
    } catch (Error& e) {
      if (is_catchable(e)) run_finally();
      throw;
    }
  }
  run_finally();
  return result;
}

Interpreter::Flow Interpreter::exec_with(ExecState& st, Frame& f, const WithStmt& s) {
  struct Exit {
    Interpreter& interp;
    ExecState& st;
    std::vector<Value> managers;
    ~Exit() {
      for (auto it = managers.rbegin(); it != managers.rend(); ++it) it->as<CustomObject>().exit(interp, st);
    }
  } exits{*this, st, {}};
  for (const auto& item : s.items) {
    Value m = eval_inner(st, f, *item.context);
    if (!m.is(Kind::kOther) || !m.as<CustomObject>().is_context_manager()) {
      raise_at(st, item.context->pos, "TypeError",
               "'" + type_name(m) + "' object does not support the context manager protocol",
               "spmdsim supports `with jax.disable_jit():` as a context manager");
    }
    Value entered = m.as<CustomObject>().enter(*this, st);
    exits.managers.push_back(m);
    if (item.target) assign(st, f, *item.target, entered);
  }
  return exec_block(st, f, s.body);
}

void Interpreter::exec_import(ExecState& st, Frame& f, const ImportStmt& s) {
  for (const auto& a : s.names) {
    Value m = import_module(st, a.name, a.pos);
    if (a.asname.empty()) {
      // `import jax.numpy` binds `jax`.
      std::string top = a.name.substr(0, a.name.find('.'));
      if (top != a.name) m = import_module(st, top, a.pos);
    }
    store_name(st, f, *a.target, m);
  }
}

void Interpreter::exec_import_from(ExecState& st, Frame& f, const ImportFromStmt& s) {
  Value m = import_module(st, s.module, s.module_pos);
  auto& mod = m.as<ModuleObject>();
  for (const auto& a : s.names) {
    const Value* v = mod.attrs.find(Value::str(a.name));
    Value result;
    if (v) {
      result = *v;
    } else {
      // A submodule: from jax import numpy
      Value sub = module(s.module + "." + a.name);
      if (sub.is_undefined()) {
        std::vector<std::string> names;
        for (const auto& k : mod.attrs.keys()) names.push_back(k.as_str());
        std::string close = closest_name(a.name, names);
        raise_at(st, a.pos, "ImportError", "cannot import name '" + a.name + "' from '" + s.module + "'",
                 close.empty() ? "spmdsim implements a subset of " + s.module
                               : "did you mean '" + close + "'?");
      }
      result = sub;
    }
    store_name(st, f, *a.target, result);
  }
}

Value Interpreter::module(const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(modules_mutex_);
    auto it = modules_.find(name);
    if (it != modules_.end()) return it->second;
  }
  Value m = build_module(*this, name);
  if (m.is_undefined()) return m;
  std::lock_guard<std::mutex> lock(modules_mutex_);
  return modules_.emplace(name, m).first->second;
}

Value Interpreter::import_module(ExecState& st, const std::string& name, Pos pos) {
  Value m = module(name);
  if (m.is_undefined()) {
    std::string hint =
        "spmdsim provides jax (jax.numpy, jax.lax, jax.random, jax.nn, jax.debug, jax.tree_util), numpy (as "
        "jax.numpy), functools, math, time and typing";
    if (name == "flax" || name == "optax" || name == "haiku" || name == "equinox" || name == "torch") {
      hint = "libraries beyond jax are not available in spmdsim; write the model with jax.numpy directly";
    }
    raise_at(st, pos, "ModuleNotFoundError", "No module named '" + name + "'", hint);
  }
  return m;
}

void Interpreter::exec_def(ExecState& st, Frame& f, const FunctionDefStmt& s) {
  std::vector<Value> decorators;
  for (const auto& d : s.decorators) decorators.push_back(eval_inner(st, f, *d));
  Value fn = make_function(st, f, *s.code);
  for (auto it = decorators.rbegin(); it != decorators.rend(); ++it) {
    CallArgs args;
    args.pos.push_back(fn);
    CallSite site{s.pos, nullptr};
    fn = call(st, *it, args, site);
  }
  store_name(st, f, *s.target, fn);
}

Value Interpreter::make_function(ExecState& st, Frame& f, const FunctionCode& code) {
  auto fn = std::make_shared<FunctionObject>(&code, st.token);
  fn->defaults.resize(code.params.size());
  for (std::size_t i = 0; i < code.params.size(); ++i) {
    if (code.params[i].default_value) fn->defaults[i] = eval_inner(st, f, *code.params[i].default_value);
  }
  for (int src : code.scope.freevar_sources) fn->closure.push_back(f.cells[static_cast<std::size_t>(src)]);
  return Value::object(Kind::kFunction, std::move(fn));
}

void Interpreter::exec_raise(ExecState& st, Frame& f, const RaiseStmt& s) {
  if (!s.exc) {
    if (st.handling.empty()) raise_at(st, s.pos, "RuntimeError", "No active exception to reraise");
    std::rethrow_exception(st.handling.back());
  }
  Value e = eval_inner(st, f, *s.exc);
  if (e.is(Kind::kType) && e.as<TypeObject>().instance_kind == Kind::kException) {
    raise_at(st, s.pos, e.as<TypeObject>().name, "");
  }
  if (e.is(Kind::kException)) {
    const auto& x = e.as<ExceptionObject>();
    raise_at(st, s.pos, x.kind, x.message);
  }
  raise_at(st, s.exc->pos, "TypeError", "exceptions must derive from BaseException",
           "raise an exception class or instance, e.g. raise ValueError(\"message\")");
}

void Interpreter::exec_assert(ExecState& st, Frame& f, const AssertStmt& s) {
  Value v = eval_inner(st, f, *s.test);
  if (truth(st, v, s.test->pos)) return;
  std::string message;
  if (s.msg) {
    message = str(st, eval_inner(st, f, *s.msg));
  } else {
    message = "assert " + expr_to_source(*s.test);
  }
  raise_at(st, s.pos, "AssertionError", message);
}

void Interpreter::exec_aug_assign(ExecState& st, Frame& f, const AugAssignStmt& s) {
  const Expr& t = *s.target;
  auto combine = [&](const Value& cur) -> Value {
    Value rhs = eval_inner(st, f, *s.value);
    // list += iterable extends in place (it mutates the list, as Python does).
    if (s.op == BinOp::kAdd && cur.is(Kind::kList)) {
      std::vector<Value> items = iterate(st, rhs);
      auto& l = cur.as<ListObject>();
      std::string what = "extending '" + expr_to_source(t) + "'";
      if (allow_mutation(st, l, what, rhs)) {
        HeapGuard g(*this, st, &l);
        l.items.insert(l.items.end(), items.begin(), items.end());
      }
      return cur;
    }
    try {
      return binary_op(*this, st, s.op, cur, rhs);
    } catch (Error& e) {
      annotate(e, st, s.pos);
      throw;
    }
  };
  switch (t.kind) {
    case ExprKind::kName: {
      const auto& n = static_cast<const NameExpr&>(t);
      Value cur = load_name(st, f, n);
      Value v = combine(cur);
      store_name(st, f, n, v);
      return;
    }
    case ExprKind::kSubscript: {
      const auto& x = static_cast<const SubscriptExpr&>(t);
      Value obj = eval_inner(st, f, *x.value);
      Value idx = eval_index(st, f, *x.index);
      Value cur = get_item(st, obj, idx);
      Value v = combine(cur);
      set_item(st, obj, idx, v, x.value.get());
      return;
    }
    case ExprKind::kAttribute: {
      const auto& x = static_cast<const AttributeExpr&>(t);
      Value obj = eval_inner(st, f, *x.value);
      Value cur = get_attr(st, obj, x.attr);
      Value v = combine(cur);
      set_attr(st, obj, x.attr, v, x.value.get());
      return;
    }
    default:
      raise_at(st, t.pos, "SyntaxError", "illegal expression for augmented assignment");
  }
}

void Interpreter::exec_del(ExecState& st, Frame& f, const Expr& target) {
  switch (target.kind) {
    case ExprKind::kName:
      delete_name(st, f, static_cast<const NameExpr&>(target));
      return;
    case ExprKind::kSubscript: {
      const auto& x = static_cast<const SubscriptExpr&>(target);
      Value obj = eval_inner(st, f, *x.value);
      Value idx = eval_index(st, f, *x.index);
      del_item(st, obj, idx, x.value.get());
      return;
    }
    case ExprKind::kTuple:
    case ExprKind::kList:
      for (const auto& e : static_cast<const SequenceExpr&>(target).elts) exec_del(st, f, *e);
      return;
    case ExprKind::kAttribute: {
      const auto& x = static_cast<const AttributeExpr&>(target);
      Value obj = eval_inner(st, f, *x.value);
      if (obj.is(Kind::kFunction)) {
        auto& fn = obj.as<FunctionObject>();
        if (allow_mutation(st, fn, "deleting attribute '" + x.attr + "' of '" + expr_to_source(*x.value) + "'", {})) {
          HeapGuard g(*this, st, &fn);
          if (!fn.attrs.erase(Value::str(x.attr))) raise_at(st, x.attr_pos, "AttributeError", x.attr);
        }
        return;
      }
      raise_at(st, x.attr_pos, "AttributeError",
               "'" + type_name(obj) + "' object has no attribute '" + x.attr + "' that can be deleted");
    }
    default:
      raise_at(st, target.pos, "SyntaxError", "cannot delete expression");
  }
}

// ============================================================================
// names and assignment

Value Interpreter::load_name(ExecState& st, Frame& f, const NameExpr& n) {
  switch (n.ref.scope) {
    case NameRef::Scope::kFast: {
      const Value& v = f.fast[static_cast<std::size_t>(n.ref.index)];
      if (v.is_undefined()) {
        raise_at(st, n.pos, "UnboundLocalError",
                 "cannot access local variable '" + n.id + "' where it is not associated with a value",
                 "assign '" + n.id + "' before using it; if you meant the variable outside this function, declare "
                 "it `global " + n.id + "` (or `nonlocal`)");
      }
      return v;
    }
    case NameRef::Scope::kCell: {
      const auto& cell = f.cells[static_cast<std::size_t>(n.ref.index)];
      Value v;
      {
        HeapGuard g(*this, st, cell.get());
        v = cell->value;
      }
      if (v.is_undefined()) {
        if (n.ref.index < f.scope->ncellvars) {
          raise_at(st, n.pos, "UnboundLocalError",
                   "cannot access local variable '" + n.id + "' where it is not associated with a value");
        }
        raise_at(st, n.pos, "NameError",
                 "cannot access free variable '" + n.id + "' where it is not associated with a value in enclosing scope");
      }
      return v;
    }
    case NameRef::Scope::kGlobal:
    case NameRef::Scope::kUnresolved: {
      {
        HeapGuard g(*this, st, globals_.get());
        if (const Value* v = globals_->map.find(n.key)) return *v;
      }
      if (const Value* v = builtins_.find(n.key)) return *v;
      name_error(st, f, n);
    }
  }
  name_error(st, f, n);
}

void Interpreter::name_error(ExecState& st, Frame& f, const NameExpr& n) {
  std::string hint;
  if (const char* h = import_hint(n.id)) {
    hint = h;
  } else {
    std::vector<std::string> candidates;
    for (std::size_t i = 0; i < f.fast.size(); ++i) {
      if (!f.fast[i].is_undefined() && f.scope->fast_names[i].find('.') == std::string::npos) {
        candidates.push_back(f.scope->fast_names[i]);
      }
    }
    for (std::size_t i = 0; i < f.cells.size(); ++i) {
      if (!f.cells[i]->value.is_undefined() && f.scope->cell_names[i].find('.') == std::string::npos) {
        candidates.push_back(f.scope->cell_names[i]);
      }
    }
    {
      HeapGuard g(*this, st, globals_.get());
      for (const auto& k : globals_->map.keys()) candidates.push_back(k.as_str());
    }
    for (const auto& k : builtins_.keys()) candidates.push_back(k.as_str());
    std::string close = closest_name(n.id, candidates);
    if (!close.empty()) hint = "did you mean '" + close + "'?";
  }
  raise_at(st, n.pos, "NameError", "name '" + n.id + "' is not defined", hint);
}

void Interpreter::store_ref(ExecState& st, Frame& f, const NameRef& ref, const std::string& name, const Value& v,
                            Pos pos) {
  switch (ref.scope) {
    case NameRef::Scope::kFast:
      f.fast[static_cast<std::size_t>(ref.index)] = v;
      return;
    case NameRef::Scope::kCell: {
      const auto& cell = f.cells[static_cast<std::size_t>(ref.index)];
      if (allow_mutation(st, *cell, "assigning to nonlocal '" + name + "'", v)) {
        HeapGuard g(*this, st, cell.get());
        cell->value = v;
      }
      return;
    }
    case NameRef::Scope::kGlobal:
    case NameRef::Scope::kUnresolved:
      if (allow_mutation(st, *globals_, "assigning to global '" + name + "'", v)) {
        HeapGuard g(*this, st, globals_.get());
        globals_->map.set(Value::str(name), v);
      }
      return;
  }
  (void)pos;
}

void Interpreter::store_name(ExecState& st, Frame& f, const NameExpr& n, const Value& v) {
  if (n.ref.scope == NameRef::Scope::kGlobal || n.ref.scope == NameRef::Scope::kUnresolved) {
    if (allow_mutation(st, *globals_, "assigning to global '" + n.id + "'", v)) {
      HeapGuard g(*this, st, globals_.get());
      globals_->map.set(n.key, v);
    }
    return;
  }
  store_ref(st, f, n.ref, n.id, v, n.pos);
}

void Interpreter::delete_name(ExecState& st, Frame& f, const NameExpr& n) {
  load_name(st, f, n);  // NameError / UnboundLocalError when unbound
  switch (n.ref.scope) {
    case NameRef::Scope::kFast:
      f.fast[static_cast<std::size_t>(n.ref.index)] = Value();
      return;
    case NameRef::Scope::kCell: {
      const auto& cell = f.cells[static_cast<std::size_t>(n.ref.index)];
      if (allow_mutation(st, *cell, "deleting nonlocal '" + n.id + "'", {})) {
        HeapGuard g(*this, st, cell.get());
        cell->value = Value();
      }
      return;
    }
    default:
      if (allow_mutation(st, *globals_, "deleting global '" + n.id + "'", {})) {
        HeapGuard g(*this, st, globals_.get());
        globals_->map.erase(n.key);
      }
  }
}

void Interpreter::assign(ExecState& st, Frame& f, const Expr& target, const Value& v) {
  switch (target.kind) {
    case ExprKind::kName:
      store_name(st, f, static_cast<const NameExpr&>(target), v);
      return;
    case ExprKind::kTuple:
    case ExprKind::kList: {
      const auto& seq = static_cast<const SequenceExpr&>(target);
      std::vector<Value> items;
      try {
        if (!v.is(Kind::kTuple) && !v.is(Kind::kList) && !v.is(Kind::kArray) && !v.is(Kind::kStr) &&
            !v.is(Kind::kDict) && !v.is(Kind::kRange) && !v.is(Kind::kIterator) && !v.is(Kind::kSet)) {
          raise_type_error("cannot unpack non-iterable " + type_name(v) + " object");
        }
        items = iterate(st, v);
      } catch (Error& e) {
        annotate(e, st, target.pos);
        throw;
      }
      std::size_t n = seq.elts.size();
      std::size_t star = n;
      for (std::size_t i = 0; i < n; ++i) {
        if (seq.elts[i]->kind == ExprKind::kStarred) star = i;
      }
      if (star == n) {
        if (items.size() < n) {
          raise_at(st, target.pos, "ValueError",
                   "not enough values to unpack (expected " + std::to_string(n) + ", got " +
                       std::to_string(items.size()) + ")");
        }
        if (items.size() > n) {
          raise_at(st, target.pos, "ValueError", "too many values to unpack (expected " + std::to_string(n) + ")");
        }
        for (std::size_t i = 0; i < n; ++i) assign(st, f, *seq.elts[i], items[i]);
        return;
      }
      std::size_t after = n - star - 1;
      if (items.size() < n - 1) {
        raise_at(st, target.pos, "ValueError",
                 "not enough values to unpack (expected at least " + std::to_string(n - 1) + ", got " +
                     std::to_string(items.size()) + ")");
      }
      for (std::size_t i = 0; i < star; ++i) assign(st, f, *seq.elts[i], items[i]);
      std::vector<Value> middle(items.begin() + static_cast<std::ptrdiff_t>(star),
                                items.end() - static_cast<std::ptrdiff_t>(after));
      assign(st, f, *static_cast<const StarredExpr&>(*seq.elts[star]).value, Value::list(std::move(middle), st.token));
      for (std::size_t i = 0; i < after; ++i) assign(st, f, *seq.elts[star + 1 + i], items[items.size() - after + i]);
      return;
    }
    case ExprKind::kSubscript: {
      const auto& x = static_cast<const SubscriptExpr&>(target);
      Value obj = eval_inner(st, f, *x.value);
      Value idx = eval_index(st, f, *x.index);
      try {
        set_item(st, obj, idx, v, x.value.get());
      } catch (Error& e) {
        annotate(e, st, target.pos);
        throw;
      }
      return;
    }
    case ExprKind::kAttribute: {
      const auto& x = static_cast<const AttributeExpr&>(target);
      Value obj = eval_inner(st, f, *x.value);
      try {
        set_attr(st, obj, x.attr, v, x.value.get());
      } catch (Error& e) {
        annotate(e, st, x.attr_pos);
        throw;
      }
      return;
    }
    case ExprKind::kStarred:
      raise_at(st, target.pos, "SyntaxError", "starred assignment target must be in a list or tuple");
    default:
      raise_at(st, target.pos, "SyntaxError", "cannot assign to expression");
  }
}

// ============================================================================
// expressions

Value Interpreter::eval(ExecState& st, const Expr& e) { return eval_inner(st, *st.frames.back(), e); }

bool Interpreter::truth(ExecState& st, const Value& v, Pos pos) {
  try {
    return truthy(st, v);
  } catch (Error& e) {
    annotate(e, st, pos);
    throw;
  }
}

Value Interpreter::eval_inner(ExecState& st, Frame& f, const Expr& e) {
  check_stack(st, e.pos);
  try {
    switch (e.kind) {
      case ExprKind::kName:
        return load_name(st, f, static_cast<const NameExpr&>(e));
      case ExprKind::kConstant:
        return static_cast<const ConstantExpr&>(e).value;
      case ExprKind::kFString:
        return eval_fstring(st, f, static_cast<const FStringExpr&>(e));
      case ExprKind::kBinOp: {
        const auto& x = static_cast<const BinOpExpr&>(e);
        Value l = eval_inner(st, f, *x.left);
        Value r = eval_inner(st, f, *x.right);
        return binary_op(*this, st, x.op, l, r);
      }
      case ExprKind::kUnaryOp: {
        const auto& x = static_cast<const UnaryExpr&>(e);
        Value v = eval_inner(st, f, *x.operand);
        if (x.op == UnOp::kNot) return Value::boolean(!truth(st, v, x.operand->pos));
        return unary_op(*this, st, x.op, v);
      }
      case ExprKind::kBoolOp:
        return eval_boolop(st, f, static_cast<const BoolOpExpr&>(e));
      case ExprKind::kCompare:
        return eval_compare(st, f, static_cast<const CompareExpr&>(e));
      case ExprKind::kCall:
        return eval_call(st, f, static_cast<const CallExpr&>(e));
      case ExprKind::kAttribute: {
        const auto& x = static_cast<const AttributeExpr&>(e);
        Value obj = eval_inner(st, f, *x.value);
        return get_attr(st, obj, x.attr);
      }
      case ExprKind::kSubscript:
        return eval_subscript(st, f, static_cast<const SubscriptExpr&>(e));
      case ExprKind::kSlice:
        return eval_index(st, f, e);
      case ExprKind::kTuple:
      case ExprKind::kList:
      case ExprKind::kSet:
        return eval_sequence(st, f, static_cast<const SequenceExpr&>(e));
      case ExprKind::kDict:
        return eval_dict(st, f, static_cast<const DictExpr&>(e));
      case ExprKind::kListComp:
      case ExprKind::kSetComp:
      case ExprKind::kDictComp:
      case ExprKind::kGenExp:
        return eval_comprehension(st, f, static_cast<const CompExpr&>(e));
      case ExprKind::kLambda:
        return make_function(st, f, *static_cast<const LambdaExpr&>(e).code);
      case ExprKind::kIfExp: {
        const auto& x = static_cast<const IfExpExpr&>(e);
        bool c = truth(st, eval_inner(st, f, *x.test), x.test->pos);
        return eval_inner(st, f, c ? *x.body : *x.orelse);
      }
      case ExprKind::kStarred:
        raise_at(st, e.pos, "SyntaxError", "can't use starred expression here");
    }
  } catch (Error& err) {
    annotate(err, st, e.pos);
    throw;
  }
  return Value::none();
}

Value Interpreter::eval_boolop(ExecState& st, Frame& f, const BoolOpExpr& e) {
  Value v;
  for (std::size_t i = 0; i < e.values.size(); ++i) {
    v = eval_inner(st, f, *e.values[i]);
    if (i + 1 == e.values.size()) break;
    bool t = truth(st, v, e.values[i]->pos);
    if (e.is_and ? !t : t) break;
  }
  return v;
}

Value Interpreter::eval_compare(ExecState& st, Frame& f, const CompareExpr& e) {
  Value left = eval_inner(st, f, *e.left);
  for (std::size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval_inner(st, f, *e.comparators[i]);
    Value r = compare_op(*this, st, e.ops[i], left, right);
    if (i + 1 == e.ops.size()) return r;
    // Chained comparisons: a < b < c is (a < b) and (b < c).
    if (!truth(st, r, e.pos)) return r;
    left = std::move(right);
  }
  return Value::none();
}

Value Interpreter::eval_sequence(ExecState& st, Frame& f, const SequenceExpr& e) {
  std::vector<Value> items;
  items.reserve(e.elts.size());
  for (const auto& elt : e.elts) {
    if (elt->kind == ExprKind::kStarred) {
      Value v = eval_inner(st, f, *static_cast<const StarredExpr&>(*elt).value);
      std::vector<Value> more = iterate(st, v);
      items.insert(items.end(), more.begin(), more.end());
    } else {
      items.push_back(eval_inner(st, f, *elt));
    }
  }
  if (e.kind == ExprKind::kTuple) return Value::tuple(std::move(items));
  if (e.kind == ExprKind::kList) return Value::list(std::move(items), st.token);
  Value s = make_set(st.token);
  for (auto& v : items) s.as<SetObject>().map.set(v, Value::none());
  return s;
}

Value Interpreter::eval_dict(ExecState& st, Frame& f, const DictExpr& e) {
  Value d = make_dict(st.token);
  auto& map = d.as<DictObject>().map;
  for (std::size_t i = 0; i < e.values.size(); ++i) {
    if (!e.keys[i]) {
      Value m = eval_inner(st, f, *e.values[i]);
      if (!m.is(Kind::kDict)) {
        raise_at(st, e.values[i]->pos, "TypeError", "'" + type_name(m) + "' object is not a mapping");
      }
      HeapGuard g(*this, st, m.object());
      m.as<DictObject>().map.for_each([&](const Value& k, const Value& v) { map.set(k, v); });
      continue;
    }
    Value k = eval_inner(st, f, *e.keys[i]);
    Value v = eval_inner(st, f, *e.values[i]);
    try {
      map.set(k, v);
    } catch (Error& err) {
      annotate(err, st, e.keys[i]->pos);
      throw;
    }
  }
  return d;
}

Value Interpreter::eval_index(ExecState& st, Frame& f, const Expr& index) {
  if (index.kind == ExprKind::kSlice) {
    const auto& s = static_cast<const SliceExpr&>(index);
    Value a = s.lower ? eval_inner(st, f, *s.lower) : Value::none();
    Value b = s.upper ? eval_inner(st, f, *s.upper) : Value::none();
    Value c = s.step ? eval_inner(st, f, *s.step) : Value::none();
    return Value::object(Kind::kSlice, std::make_shared<SliceObject>(a, b, c));
  }
  if (index.kind == ExprKind::kTuple) {
    const auto& t = static_cast<const SequenceExpr&>(index);
    bool any_slice = false;
    for (const auto& e : t.elts) any_slice = any_slice || e->kind == ExprKind::kSlice;
    if (any_slice) {
      std::vector<Value> items;
      for (const auto& e : t.elts) items.push_back(eval_index(st, f, *e));
      return Value::tuple(std::move(items));
    }
  }
  return eval_inner(st, f, index);
}

Value Interpreter::eval_subscript(ExecState& st, Frame& f, const SubscriptExpr& e) {
  Value obj = eval_inner(st, f, *e.value);
  Value idx = eval_index(st, f, *e.index);
  return get_item(st, obj, idx);
}

Value Interpreter::eval_fstring(ExecState& st, Frame& f, const FStringExpr& e) {
  std::string out;
  for (const auto& p : e.parts) {
    out += p.literal;
    if (!p.expr) continue;
    Value v = eval_inner(st, f, *p.expr);
    out += p.debug_text;
    if (p.conversion == 'r' || p.conversion == 'a') {
      std::string r = repr(st, v);
      if (p.spec) {
        std::string spec = eval_fstring(st, f, *p.spec).as_str();
        r = format_value(*this, st, Value::str(r), spec);
      }
      out += r;
    } else if (p.spec) {
      std::string spec = eval_fstring(st, f, *p.spec).as_str();
      try {
        out += format_value(*this, st, p.conversion == 's' ? Value::str(str(st, v)) : v, spec);
      } catch (Error& err) {
        annotate(err, st, p.expr->pos);
        throw;
      }
    } else {
      out += str(st, v);
    }
  }
  return Value::str(std::move(out));
}

Value Interpreter::eval_comprehension(ExecState& st, Frame& f, const CompExpr& e) {
  std::vector<Value> items;
  Value dict;
  if (e.kind == ExprKind::kDictComp) dict = make_dict(st.token);
  Value first = eval_inner(st, f, *e.generators[0].iter);
  // Recursive walk over the generators; the innermost produces elements.
  auto walk = [&](auto& self, std::size_t k, const Value& iterable) -> void {
    const Comprehension& g = e.generators[k];
    for_each_item(*this, st, iterable, [&](const Value& item) {
      count_steps();
      assign(st, f, *g.target, item);
      for (const auto& cond : g.ifs) {
        if (!truth(st, eval_inner(st, f, *cond), cond->pos)) return true;
      }
      if (k + 1 < e.generators.size()) {
        self(self, k + 1, eval_inner(st, f, *e.generators[k + 1].iter));
        return true;
      }
      if (e.kind == ExprKind::kDictComp) {
        Value key = eval_inner(st, f, *e.elt);
        Value value = eval_inner(st, f, *e.value);
        dict.as<DictObject>().map.set(key, value);
      } else {
        items.push_back(eval_inner(st, f, *e.elt));
      }
      return true;
    });
  };
  walk(walk, 0, first);
  switch (e.kind) {
    case ExprKind::kListComp:
      return Value::list(std::move(items), st.token);
    case ExprKind::kSetComp: {
      Value s = make_set(st.token);
      for (auto& v : items) s.as<SetObject>().map.set(v, Value::none());
      return s;
    }
    case ExprKind::kDictComp:
      return dict;
    default:
      return Value::object(Kind::kIterator, std::make_shared<IteratorObject>("generator", std::move(items), st.token));
  }
}

Value Interpreter::eval_call(ExecState& st, Frame& f, const CallExpr& c) {
  Value callee = eval_inner(st, f, *c.func);
  CallArgs args;
  if (c.simple) {
    args.pos.reserve(c.args.size());
    for (const auto& a : c.args) {
      if (a.kind == Argument::Kind::kPositional) {
        args.pos.push_back(eval_inner(st, f, *a.value));
      } else {
        args.kw.emplace_back(a.keyword, eval_inner(st, f, *a.value));
      }
    }
  } else {
    expand_call_args(st, f, c, args);
  }
  CallSite site{c.pos, &c};
  return call(st, callee, args, site);
}

// Calls with *args / **kwargs (kept out of eval_call to keep its frame small:
// it is on the stack once per nested Python call).
void Interpreter::expand_call_args(ExecState& st, Frame& f, const CallExpr& c, CallArgs& args) {
  for (const auto& a : c.args) {
    switch (a.kind) {
      case Argument::Kind::kPositional:
        args.pos.push_back(eval_inner(st, f, *a.value));
        break;
      case Argument::Kind::kKeyword:
        args.kw.emplace_back(a.keyword, eval_inner(st, f, *a.value));
        break;
      case Argument::Kind::kStar: {
        Value v = eval_inner(st, f, *a.value);
        std::vector<Value> more;
        try {
          more = iterate(st, v);
        } catch (Error& e) {
          annotate(e, st, a.value->pos);
          throw;
        }
        args.pos.insert(args.pos.end(), more.begin(), more.end());
        break;
      }
      case Argument::Kind::kDoubleStar: {
        Value v = eval_inner(st, f, *a.value);
        if (!v.is(Kind::kDict)) {
          raise_at(st, a.value->pos, "TypeError",
                   expr_to_source(*c.func) + "() argument after ** must be a mapping, not " + type_name(v));
        }
        HeapGuard g(*this, st, v.object());
        for (const auto& [k, val] : v.as<DictObject>().map.items()) {
          if (!k.is(Kind::kStr)) raise_at(st, a.value->pos, "TypeError", "keywords must be strings");
          for (const auto& existing : args.kw) {
            if (existing.first == k.as_str()) {
              raise_at(st, a.value->pos, "TypeError",
                       expr_to_source(*c.func) + "() got multiple values for keyword argument '" + k.as_str() + "'");
            }
          }
          args.kw.emplace_back(k.as_str(), val);
        }
        break;
      }
    }
  }
}

// ============================================================================
// calls

Value CustomObject::call(Interpreter& interp, ExecState& st, const Value& self, CallArgs& args, const CallSite& site) {
  raise_type_error("'" + type_name() + "' object is not callable");
}

Value Interpreter::call(ExecState& st, const Value& callee, CallArgs& args, const CallSite& site) {
  switch (callee.kind()) {
    case Kind::kFunction:
      return call_function(st, callee, args, site);
    case Kind::kNative: {
      const auto& n = callee.as<NativeObject>();
      NativeCall c{*this, st, site, n.self, n.data, n.name};
      return n.fn(c, args);
    }
    case Kind::kType: {
      const auto& t = callee.as<TypeObject>();
      if (t.ctor.is_undefined()) not_callable(callee);
      return call(st, t.ctor, args, site);
    }
    case Kind::kOther: {
      auto& o = callee.as<CustomObject>();
      if (o.callable()) return o.call(*this, st, callee, args, site);
      break;
    }
    case Kind::kDType:
      return dtype_call(*this, st, callee.as_dtype(), args);
    default:
      break;
  }
  not_callable(callee);
}

void Interpreter::not_callable(const Value& callee) {
  raise_type_error("'" + type_name(callee) + "' object is not callable");
}

void Interpreter::bind_arguments(ExecState& st, const FunctionObject& fn, Frame& f, CallArgs& args) {
  const FunctionCode& code = *fn.code;
  const auto& params = code.params;
  const std::size_t npos = static_cast<std::size_t>(code.num_positional);
  std::vector<char> bound(params.size(), 0);
  auto bind = [&](std::size_t i, Value v) {
    const Param& p = params[i];
    if (p.ref.scope == NameRef::Scope::kCell) {
      f.cells[static_cast<std::size_t>(p.ref.index)]->value = std::move(v);
    } else {
      f.fast[static_cast<std::size_t>(p.ref.index)] = std::move(v);
    }
    bound[i] = 1;
  };
  const std::string& name = code.name;
  std::size_t given = args.pos.size();
  for (std::size_t i = 0; i < std::min(given, npos); ++i) bind(i, args.pos[i]);
  if (given > npos) {
    if (code.vararg < 0) {
      std::size_t required = 0;
      for (std::size_t i = 0; i < npos; ++i) required += fn.defaults[i].is_undefined() ? 1 : 0;
      std::string takes = required == npos ? std::to_string(npos)
                                           : "from " + std::to_string(required) + " to " + std::to_string(npos);
      raise_type_error(name + "() takes " + takes + " positional argument" + (npos == 1 && required == npos ? "" : "s") +
                       " but " + std::to_string(given) + (given == 1 ? " was" : " were") + " given");
    }
    bind(static_cast<std::size_t>(code.vararg),
         Value::tuple(std::vector<Value>(args.pos.begin() + static_cast<std::ptrdiff_t>(npos), args.pos.end())));
  } else if (code.vararg >= 0) {
    bind(static_cast<std::size_t>(code.vararg), Value::tuple({}));
  }
  Value kwargs;
  if (code.kwarg >= 0) kwargs = make_dict(st.token);
  for (auto& [k, v] : args.kw) {
    int idx = -1;
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (static_cast<int>(i) == code.vararg || static_cast<int>(i) == code.kwarg) continue;
      if (params[i].name == k) {
        idx = static_cast<int>(i);
        break;
      }
    }
    if (idx >= 0) {
      if (bound[static_cast<std::size_t>(idx)]) raise_type_error(name + "() got multiple values for argument '" + k + "'");
      bind(static_cast<std::size_t>(idx), v);
    } else if (code.kwarg >= 0) {
      kwargs.as<DictObject>().map.set(Value::str(k), v);
    } else {
      std::vector<std::string> names;
      for (const auto& p : params) names.push_back(p.name);
      std::string close = closest_name(k, names);
      raise_type_error(name + "() got an unexpected keyword argument '" + k + "'",
                       close.empty() ? "" : "did you mean '" + close + "'?");
    }
  }
  if (code.kwarg >= 0) bind(static_cast<std::size_t>(code.kwarg), kwargs);
  std::vector<std::string> missing_pos;
  std::vector<std::string> missing_kw;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (bound[i]) continue;
    if (!fn.defaults[i].is_undefined()) {
      bind(i, fn.defaults[i]);
    } else {
      (i < npos ? missing_pos : missing_kw).push_back("'" + params[i].name + "'");
    }
  }
  auto report = [&](std::vector<std::string>& missing, const char* what) {
    std::string list;
    for (std::size_t i = 0; i < missing.size(); ++i) {
      if (i > 0) list += missing.size() == 2 ? " and " : (i + 1 == missing.size() ? ", and " : ", ");
      list += missing[i];
    }
    raise_type_error(name + "() missing " + std::to_string(missing.size()) + " required " + what + " argument" +
                     (missing.size() == 1 ? "" : "s") + ": " + list);
  };
  if (!missing_pos.empty()) report(missing_pos, "positional");
  if (!missing_kw.empty()) report(missing_kw, "keyword-only");
}

void Interpreter::native_stack_exhausted() {
  raise_error("RecursionError", "maximum recursion depth exceeded while processing nested data",
              "the data (lists, tuples or dicts inside each other) is nested too deeply");
}

void Interpreter::too_deep(const ExecState& st) {
  raise_error("RecursionError", "maximum recursion depth exceeded",
              "Python calls may nest " + std::to_string(st.max_depth) + " deep in spmdsim; recurse less deeply");
}

Value Interpreter::call_function(ExecState& st, const Value& fnv, CallArgs& args, const CallSite& site) {
  const auto& fn = fnv.as<FunctionObject>();
  const FunctionCode& code = *fn.code;
  if (st.depth + 1 > st.max_depth) too_deep(st);
  Frame frame;
  frame.scope = &code.scope;
  frame.name = &code.name;
  frame.pos = code.pos;
  frame.fast.resize(code.scope.fast_names.size());
  frame.cells.reserve(code.scope.cell_names.size());
  for (int i = 0; i < code.scope.ncellvars; ++i) frame.cells.push_back(new_cell(st.token));
  for (const auto& c : fn.closure) frame.cells.push_back(c);
  bind_arguments(st, fn, frame, args);
  FrameScope scope(st, frame);
  if (code.lambda_body) {
    frame.pos = code.lambda_body->pos;
    return eval_inner(st, frame, *code.lambda_body);
  }
  (void)site;
  if (exec_block(st, frame, code.body) == Flow::kReturn) return std::move(frame.ret);
  return Value::none();
}

}  // namespace spmd::scenario
