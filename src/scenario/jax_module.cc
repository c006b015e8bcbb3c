// The `jax` module: pmap, vmap, jit, device queries, disable_jit, config,
// jax.debug, jax.tree_util and jax.errors.

#include <algorithm>
#include <mutex>
#include <optional>

#include "scenario/builtins.h"
#include "scenario/interpreter.h"
#include "scenario/modules.h"
#include "scenario/natives.h"
#include "scenario/py_format.h"
#include "scenario/python_errors.h"
#include "scenario/pytree.h"
#include "spmd/core/creation.h"
#include "spmd/core/format.h"
#include "spmd/core/layout.h"
#include "spmd/debug/breakpoint.h"
#include "spmd/debug/debug_print.h"
#include "spmd/pmap/pmap.h"
#include "spmd/runtime/device.h"
#include "spmd/runtime/runtime.h"

namespace spmd::scenario {

std::shared_ptr<ModuleObject> new_module(const std::string& name) { return std::make_shared<ModuleObject>(name); }

void add_fn(ModuleObject& m, const std::string& name, NativeFn fn, Value data) {
  m.set(name, make_native(m.name + "." + name, fn, Value(), std::move(data)));
}

namespace {

Value module_value(std::shared_ptr<ModuleObject> m) { return Value::object(Kind::kModule, std::move(m)); }

std::string function_name(const Value& f) {
  if (f.is(Kind::kFunction)) return f.as<FunctionObject>().code->name;
  if (f.is(Kind::kNative)) {
    const std::string& n = f.as<NativeObject>().name;
    return n.substr(n.rfind('.') + 1);
  }
  return "function";
}

/// Runs `body` with arrays shown by value (jax.debug.print formats concrete data).
struct ConcreteScope {
  explicit ConcreteScope(ExecState& st) : st_(st), saved_(st.disable_jit) { st_.disable_jit = true; }
  ~ConcreteScope() { st_.disable_jit = saved_; }
  ConcreteScope(const ConcreteScope&) = delete;
  ConcreteScope& operator=(const ConcreteScope&) = delete;
  ExecState& st_;
  bool saved_;
};

// ============================================================================
// devices

class SimDevice : public CustomObject {
 public:
  SimDevice(int id, int process) : id_(id), process_(process) {}
  std::string type_name() const override { return "SimDevice"; }
  std::string repr(ExecState&) const override { return "SimDevice(id=" + std::to_string(id_) + ")"; }
  bool get_attr(Interpreter&, ExecState&, const Value&, const std::string& name, Value& out) const override {
    if (name == "id") return out = Value::integer(id_), true;
    if (name == "platform") return out = Value::str("sim"), true;
    if (name == "device_kind") return out = Value::str("spmdsim virtual device"), true;
    if (name == "process_index" || name == "host_id") return out = Value::integer(process_), true;
    return false;
  }
  int id() const { return id_; }

 private:
  int id_;
  int process_;
};

Value fn_device_count(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"backend"}, 0);
  return Value::integer(c.interp.runtime().device_count());
}

// With local devices (RuntimeOptions::process_local_devices) each process
// runs its share of the devices: local_device_count() < device_count(), and
// a device's process_index says whose it is.
Value fn_local_device_count(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"backend"}, 0);
  return Value::integer(c.interp.runtime().local_device_count());
}

Value device_list(NativeCall& c, int first, int count) {
  const Runtime& rt = c.interp.runtime();
  std::vector<Value> out;
  for (int i = first; i < first + count; ++i) {
    const int process = rt.options().process_local_devices ? i / rt.local_device_count() : 0;
    out.push_back(Value::object(Kind::kOther, std::make_shared<SimDevice>(i, process)));
  }
  return Value::list(std::move(out), c.st.token);
}

Value fn_devices(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"backend"}, 0);
  return device_list(c, 0, c.interp.runtime().device_count());
}

Value fn_local_devices(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"backend"}, 0);
  return device_list(c, c.interp.runtime().first_local_device(), c.interp.runtime().local_device_count());
}

// Multi-process runs (RuntimeOptions::process_count): this process's rank and their number.
Value fn_process_index(NativeCall& c, CallArgs& a) {
  Args args(c, a, {}, 0);
  return Value::integer(c.interp.runtime().options().process_index);
}
Value fn_process_count(NativeCall& c, CallArgs& a) {
  Args args(c, a, {}, 0);
  return Value::integer(c.interp.runtime().options().process_count);
}

// ============================================================================
// pmap

class PmapFunction : public CustomObject {
 public:
  Value fun, axis_name, in_axes, out_axes;
  std::optional<int> axis_size;
  std::vector<int> devices;
  std::vector<std::int64_t> static_argnums;

  std::string type_name() const override { return "PmapFunction"; }
  std::string repr(ExecState&) const override { return "<PmapFunction of <function " + function_name(fun) + ">>"; }
  bool callable() const override { return true; }
  bool get_attr(Interpreter&, ExecState&, const Value&, const std::string& name, Value& out) const override {
    if (name == "__name__") return out = Value::str(function_name(fun)), true;
    if (name == "__wrapped__") return out = fun, true;
    return false;
  }
  Value call(Interpreter& interp, ExecState& st, const Value& self, CallArgs& args, const CallSite& site) override;
};

MapAxis to_map_axis(Interpreter& interp, ExecState& st, const Value& v, const char* what) {
  if (v.is_none()) return kReplicated;
  if (v.is(Kind::kInt)) return static_cast<int>(v.as_int());
  raise_value_error(std::string("pmap ") + what + " must be an int, None, or (nested) container with those types as "
                    "leaves, but got " + interp.repr(st, v) + ".");
}

std::vector<std::string> argument_names(const Value& fun, const std::vector<std::size_t>& positions) {
  std::vector<std::string> names;
  const FunctionCode* code = fun.is(Kind::kFunction) ? fun.as<FunctionObject>().code : nullptr;
  for (std::size_t i : positions) {
    if (code && i < static_cast<std::size_t>(code->num_positional)) {
      names.push_back(code->params[i].name);
    } else if (code && code->vararg >= 0) {
      names.push_back(code->params[static_cast<std::size_t>(code->vararg)].name + "[" +
                      std::to_string(i - static_cast<std::size_t>(code->num_positional)) + "]");
    } else {
      names.push_back("args[" + std::to_string(i) + "]");
    }
  }
  return names;
}

Array leaf_to_array(Interpreter& interp, ExecState& st, const Value& v, const std::string& name, const char* role) {
  if (v.is(Kind::kArray) || v.is_number()) return to_array(st, v);
  raise_type_error(std::string(role) + " '" + name + "' of type <class '" + type_name(v) + "'> is not a valid JAX type",
                   std::string(role) == "Argument"
                       ? "pmap arguments must be arrays, Python numbers, or tuples/lists/dicts of them; pass other "
                         "values through static_broadcasted_argnums or a closure"
                       : "return arrays or numbers (in tuples/lists/dicts) from a pmap-ed function");
}

Value PmapFunction::call(Interpreter& interp, ExecState& st, const Value& self, CallArgs& args, const CallSite& site) {
  SourceLoc loc = interp.loc(site.pos);
  // Split static (broadcast as Python values) and mapped positional arguments.
  std::vector<Value> dynamic;
  std::vector<std::size_t> dynamic_pos;
  std::vector<std::pair<std::size_t, Value>> statics;
  for (std::size_t i = 0; i < args.pos.size(); ++i) {
    bool is_static = std::find(static_argnums.begin(), static_argnums.end(), static_cast<std::int64_t>(i)) !=
                     static_argnums.end();
    if (is_static) {
      statics.emplace_back(i, args.pos[i]);
    } else {
      dynamic.push_back(args.pos[i]);
      dynamic_pos.push_back(i);
    }
  }
  Value args_tuple = Value::tuple(dynamic);
  std::vector<Value> leaves;
  TreeDef tree = tree_flatten(interp, st, args_tuple, leaves);
  Value spec = in_axes.is(Kind::kList) ? Value::tuple(in_axes.as<ListObject>().items) : in_axes;
  std::vector<Value> axes;
  if (!broadcast_prefix(interp, st, spec, tree, axes)) {
    raise_value_error("pmap in_axes specification must be a tree prefix of the corresponding value, got specification " +
                          interp.repr(st, spec) + " for value tree " + tree.to_string(interp, st) + ".",
                      "give in_axes one entry per positional argument (a tuple such as (0, None)), or a single "
                      "int/None for all; nested entries must mirror the argument's tuple/list/dict structure");
  }
  // Keyword arguments are always mapped over axis 0 (as in JAX).
  std::vector<std::string> kw_names;
  std::vector<Value> kw_values;
  TreeDef kw_tree;
  std::vector<Value> kw_leaves;
  if (!args.kw.empty()) {
    for (auto& [k, v] : args.kw) {
      kw_names.push_back(k);
      kw_values.push_back(v);
    }
    kw_tree = tree_flatten(interp, st, Value::tuple(kw_values), kw_leaves);
  }
  std::vector<std::string> names;
  {
    std::vector<std::string> top = argument_names(fun, dynamic_pos);
    for (std::size_t i = 0; i < tree.children.size(); ++i) leaf_paths(interp, st, tree.children[i], top[i], names);
    for (std::size_t i = 0; i < kw_tree.children.size() && !kw_names.empty(); ++i) {
      leaf_paths(interp, st, kw_tree.children[i], kw_names[i], names);
    }
  }
  PmapOptions opts;
  opts.axis_name = axis_name.is(Kind::kStr) ? axis_name.as_str() : "";
  opts.axis_size = axis_size;
  opts.devices = devices;
  opts.loc = loc;
  opts.arg_names = names;
  std::vector<Array> arrays;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    opts.in_axes.push_back(to_map_axis(interp, st, axes[i], "in_axes"));
    arrays.push_back(leaf_to_array(interp, st, leaves[i], names[i], "Argument"));
  }
  for (std::size_t i = 0; i < kw_leaves.size(); ++i) {
    opts.in_axes.push_back(0);
    arrays.push_back(leaf_to_array(interp, st, kw_leaves[i], names[leaves.size() + i], "Argument"));
  }

  std::mutex mu;
  std::optional<TreeDef> out_tree;
  std::vector<TraceEntry> outer = interp.trace_entries(st);
  if (!outer.empty()) outer.back().pos = site.pos;
  const std::size_t nleaves = leaves.size();
  DeviceFn fn = [&](std::span<const Array> shards) -> std::vector<Array> {
    ExecState dst;
    interp.enter_device(dst, st, outer);
    try {
      std::vector<Value> mine;
      for (std::size_t i = 0; i < nleaves; ++i) mine.push_back(Value::array(shards[i]));
      Value dev_args = tree_unflatten(dst, tree, mine);
      CallArgs call_args;
      call_args.pos = dev_args.tuple_items();
      for (auto& [i, v] : statics) {
        call_args.pos.insert(call_args.pos.begin() + static_cast<std::ptrdiff_t>(std::min(i, call_args.pos.size())), v);
      }
      if (!kw_names.empty()) {
        std::vector<Value> kw_mine;
        for (std::size_t i = nleaves; i < shards.size(); ++i) kw_mine.push_back(Value::array(shards[i]));
        Value kw_vals = tree_unflatten(dst, kw_tree, kw_mine);
        for (std::size_t i = 0; i < kw_names.size(); ++i) call_args.kw.emplace_back(kw_names[i], kw_vals.tuple_items()[i]);
      }
      Value result = interp.call(dst, fun, call_args, site);
      std::vector<Value> out_leaves;
      TreeDef t = tree_flatten(interp, dst, result, out_leaves);
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!out_tree) {
          out_tree = t;
        } else if (!out_tree->same_structure(t)) {
          raise_value_error("pmap: devices returned different output structures: " + out_tree->to_string(interp, dst) +
                                " and " + t.to_string(interp, dst),
                            "every device must return the same tuple/list/dict structure");
        }
      }
      std::vector<Array> out;
      std::vector<std::string> out_names;
      leaf_paths(interp, dst, t, "output", out_names);
      for (std::size_t i = 0; i < out_leaves.size(); ++i) {
        out.push_back(leaf_to_array(interp, dst, out_leaves[i], out_names[i], "Output"));
      }
      return out;
    } catch (Error& e) {
      interp.annotate(e, dst, site.pos);
      throw;
    }
  };
  std::vector<Array> outs =
      st.in_device ? spmd::pmap(fn, arrays, opts) : interp.runtime().pmap(fn, arrays, opts);
  if (!out_tree) return Value::none();
  // out_axes: the runtime stacks every output along axis 0; move or unstack here,
  // since the output structure is only known once the function ran.
  std::vector<Value> oaxes;
  if (!broadcast_prefix(interp, st, out_axes, *out_tree, oaxes)) {
    raise_value_error("pmap out_axes specification must be a tree prefix of the corresponding value, got "
                      "specification " + interp.repr(st, out_axes) + " for value tree " +
                          out_tree->to_string(interp, st) + ".",
                      "give out_axes one entry per output, or a single int/None for all");
  }
  std::vector<std::string> out_names;
  leaf_paths(interp, st, *out_tree, "output", out_names);
  std::vector<Value> results;
  for (std::size_t j = 0; j < outs.size(); ++j) {
    MapAxis ax = to_map_axis(interp, st, oaxes[j], "out_axes");
    const Array& stacked = outs[j];
    if (!ax) {
      std::int64_t n = stacked.shape()[0];
      Array first = index(stacked, {IndexItem::at(0)});
      for (std::int64_t k = 1; k < n; ++k) {
        if (!index(stacked, {IndexItem::at(k)}).identical(first)) {
          Report r = make_report("OutAxesError",
                                 "pmap: out_axes=None for " + out_names[j] +
                                     " but its value differs between devices (index 0 and index " + std::to_string(k) +
                                     " of the mapped axis differ)",
                                 "out_axes=None returns one copy, so it is only for values equal on every device "
                                 "(e.g. the result of a psum); use out_axes=0 to stack per-device values");
          r.op = "pmap";
          throw InvalidArgument(std::move(r));
        }
      }
      results.push_back(Value::array(first));
      continue;
    }
    int a = *ax;
    int rank = stacked.ndim();
    if (a < -rank || a >= rank) {
      Report r = make_report("OutAxesError",
                             "pmap: out_axes=" + std::to_string(a) + " is out of bounds for " + out_names[j] +
                                 " of per-device shape " +
                                 shape_to_string(Shape(stacked.shape().begin() + 1, stacked.shape().end())),
                             "a per-device output of rank " + std::to_string(rank - 1) + " can be stacked along axes " +
                                 std::to_string(-rank) + ".." + std::to_string(rank - 1));
      r.op = "pmap";
      throw InvalidArgument(std::move(r));
    }
    if (a < 0) a += rank;
    results.push_back(Value::array(a == 0 ? stacked : moveaxis(stacked, 0, a)));
  }
  return tree_unflatten(st, *out_tree, results);
}

Value fn_pmap(NativeCall& c, CallArgs& a) {
  Args args(c, a,
            {"fun", "axis_name", "in_axes", "out_axes", "static_broadcasted_argnums", "devices", "backend",
             "axis_size", "donate_argnums", "global_arg_shapes"},
            1, 2);
  auto p = std::make_shared<PmapFunction>();
  const Value& fun = args[0];
  bool callable = fun.is(Kind::kFunction) || fun.is(Kind::kNative) ||
                  (fun.is(Kind::kOther) && fun.as<CustomObject>().callable());
  if (!callable) {
    raise_type_error("Expected a callable value, got " + c.interp.repr(c.st, fun),
                     "pass the function to map: jax.pmap(f, axis_name='i'), or use @partial(jax.pmap, axis_name='i')");
  }
  p->fun = fun;
  p->axis_name = args.given(1) ? args[1] : Value::none();
  if (!p->axis_name.is_none() && !p->axis_name.is(Kind::kStr)) {
    raise_type_error("pmap axis_name must be a string, got " + type_name(p->axis_name));
  }
  p->in_axes = args.given(2) ? args[2] : Value::integer(0);
  p->out_axes = args.given(3) ? args[3] : Value::integer(0);
  if (args.has(4)) {
    if (args[4].is_int_like()) {
      p->static_argnums.push_back(args[4].as_int());
    } else {
      for (const auto& v : c.interp.iterate(c.st, args[4])) p->static_argnums.push_back(to_int(c.st, v, "static_broadcasted_argnums"));
    }
  }
  if (args.has(5)) {
    for (const auto& d : c.interp.iterate(c.st, args[5])) {
      if (d.is(Kind::kOther) && d.as<CustomObject>().type_name() == "SimDevice") {
        p->devices.push_back(static_cast<const SimDevice&>(d.as<CustomObject>()).id());
      } else {
        p->devices.push_back(static_cast<int>(to_int(c.st, d, "devices")));
      }
    }
  }
  if (args.has(7)) p->axis_size = static_cast<int>(to_int(c.st, args[7], "axis_size"));
  return Value::object(Kind::kOther, std::move(p));
}

// ============================================================================
// vmap (a loop over the mapped axis)

class VmapFunction : public CustomObject {
 public:
  Value fun, in_axes, out_axes;
  std::optional<std::int64_t> axis_size;
  std::string type_name() const override { return "function"; }
  std::string repr(ExecState&) const override { return "<function vmap(" + function_name(fun) + ")>"; }
  bool callable() const override { return true; }
  Value call(Interpreter& interp, ExecState& st, const Value& self, CallArgs& args, const CallSite& site) override {
    Value args_tuple = Value::tuple(args.pos);
    std::vector<Value> leaves;
    TreeDef tree = tree_flatten(interp, st, args_tuple, leaves);
    Value spec = in_axes.is(Kind::kList) ? Value::tuple(in_axes.as<ListObject>().items) : in_axes;
    std::vector<Value> axes;
    if (!broadcast_prefix(interp, st, spec, tree, axes)) {
      raise_value_error("vmap in_axes specification must be a tree prefix of the corresponding value, got "
                        "specification " + interp.repr(st, spec) + " for value tree " + tree.to_string(interp, st) + ".");
    }
    std::vector<Array> arrays(leaves.size());
    std::vector<std::optional<int>> ax(leaves.size());
    std::optional<std::int64_t> n = axis_size;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      if (axes[i].is_none()) continue;
      arrays[i] = to_array(st, leaves[i]);
      int a = static_cast<int>(to_int(st, axes[i], "in_axes"));
      if (a < 0) a += arrays[i].ndim();
      if (a < 0 || a >= arrays[i].ndim()) {
        raise_value_error("vmap was requested to map its argument along axis " + std::to_string(a) +
                          ", which implies that its rank should be at least " + std::to_string(a + 1) +
                          ", but is only " + std::to_string(arrays[i].ndim()));
      }
      ax[i] = a;
      std::int64_t d = arrays[i].shape()[static_cast<std::size_t>(a)];
      if (n && *n != d) raise_value_error("vmap got inconsistent sizes for array axes to be mapped");
      n = d;
    }
    if (!n) raise_value_error("vmap must have at least one non-None value in in_axes");
    std::vector<std::vector<Value>> per_out;
    std::optional<TreeDef> out_tree;
    for (std::int64_t k = 0; k < *n; ++k) {
      std::vector<Value> mine;
      for (std::size_t i = 0; i < leaves.size(); ++i) {
        if (!ax[i]) {
          mine.push_back(leaves[i]);
          continue;
        }
        std::vector<IndexItem> items(static_cast<std::size_t>(*ax[i]), IndexItem::slice());
        items.push_back(IndexItem::at(k));
        mine.push_back(Value::array(index(arrays[i], items)));
      }
      CallArgs call_args;
      call_args.pos = tree_unflatten(st, tree, mine).tuple_items();
      call_args.kw = args.kw;
      Value r = interp.call(st, fun, call_args, site);
      std::vector<Value> outs;
      TreeDef t = tree_flatten(interp, st, r, outs);
      if (!out_tree) out_tree = t;
      per_out.push_back(std::move(outs));
    }
    std::vector<Value> oaxes;
    if (!broadcast_prefix(interp, st, out_axes, *out_tree, oaxes)) {
      raise_value_error("vmap out_axes specification must be a tree prefix of the corresponding value");
    }
    std::vector<Value> results;
    for (std::size_t j = 0; j < oaxes.size(); ++j) {
      if (oaxes[j].is_none()) {
        results.push_back(per_out[0][j]);
        continue;
      }
      std::vector<Array> parts;
      for (auto& o : per_out) parts.push_back(to_array(st, o[j]));
      int a = static_cast<int>(to_int(st, oaxes[j], "out_axes"));
      if (a < 0) a += parts[0].ndim() + 1;
      results.push_back(Value::array(stack(parts, a)));
    }
    return tree_unflatten(st, *out_tree, results);
  }
};

Value fn_vmap(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"fun", "in_axes", "out_axes", "axis_name", "axis_size", "spmd_axis_name"}, 1, 3);
  if (args.has(3)) {
    raise_not_implemented("jax.vmap(axis_name=...) (collectives over a vmapped axis)",
                          "use jax.pmap for named axes; vmap here is a loop over the mapped axis");
  }
  auto v = std::make_shared<VmapFunction>();
  v->fun = args[0];
  v->in_axes = args.given(1) ? args[1] : Value::integer(0);
  v->out_axes = args.given(2) ? args[2] : Value::integer(0);
  if (args.has(4)) v->axis_size = to_int(c.st, args[4], "axis_size");
  return Value::object(Kind::kOther, std::move(v));
}

// ============================================================================
// jit, grad, misc

Value fn_identity_decorator(NativeCall& c, CallArgs& a) {
  // jax.jit(f, ...) is f; jax.jit(static_argnums=...) returns a decorator.
  if (!a.pos.empty()) return a.pos[0];
  return make_native(c.name, [](NativeCall&, CallArgs& inner) -> Value {
    if (inner.pos.empty()) raise_type_error("jit decorator expects a function");
    return inner.pos[0];
  });
}

Value fn_autodiff(NativeCall& c, CallArgs& a) {
  raise_not_implemented("automatic differentiation (" + c.name + ")",
                        "spmdsim has no autodiff; write the gradient explicitly");
}

Value fn_not_available(NativeCall& c, CallArgs& a) {
  raise_not_implemented(c.name, "spmdsim interprets JAX programs directly; there is no jaxpr or compilation step");
}

Value fn_return_first(NativeCall& c, CallArgs& a) {
  if (a.pos.empty()) raise_type_error(c.name + "() missing 1 required positional argument");
  return a.pos[0];
}

Value fn_device_put_replicated(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"x", "devices"}, 2);
  std::int64_t n = c.interp.length(c.st, args[1]);
  std::vector<Value> leaves;
  TreeDef t = tree_flatten(c.interp, c.st, args[0], leaves);
  std::vector<Value> out;
  for (const auto& l : leaves) {
    Array x = to_array(c.st, l);
    out.push_back(Value::array(stack(std::vector<Array>(static_cast<std::size_t>(n), x), 0)));
  }
  return tree_unflatten(c.st, t, out);
}

Value fn_device_put_sharded(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"shards", "devices"}, 2);
  std::vector<Value> shards = c.interp.iterate(c.st, args[0]);
  if (shards.empty()) raise_value_error("device_put_sharded: no shards");
  std::vector<std::vector<Value>> leaves(shards.size());
  TreeDef t;
  for (std::size_t i = 0; i < shards.size(); ++i) t = tree_flatten(c.interp, c.st, shards[i], leaves[i]);
  std::vector<Value> out;
  for (std::size_t j = 0; j < leaves[0].size(); ++j) {
    std::vector<Array> parts;
    for (auto& l : leaves) parts.push_back(to_array(c.st, l.at(j)));
    out.push_back(Value::array(stack(parts, 0)));
  }
  return tree_unflatten(c.st, t, out);
}

// ============================================================================
// disable_jit and config

class DisableJit : public CustomObject {
 public:
  explicit DisableJit(bool disable) : disable_(disable) {}
  std::string type_name() const override { return "_GeneratorContextManager"; }
  std::string repr(ExecState&) const override { return "<jax.disable_jit context manager>"; }
  bool is_context_manager() const override { return true; }
  Value enter(Interpreter&, ExecState& st) const override {
    saved_.push_back(st.disable_jit);
    st.disable_jit = disable_;
    return Value::none();
  }
  void exit(Interpreter&, ExecState& st) const noexcept override {
    if (saved_.empty()) return;
    st.disable_jit = saved_.back();
    saved_.pop_back();
  }

 private:
  bool disable_;
  mutable std::vector<bool> saved_;
};

Value fn_disable_jit(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"disable"}, 0);
  bool disable = !args.given(0) || c.interp.truthy(c.st, args[0]);
  return Value::object(Kind::kOther, std::make_shared<DisableJit>(disable));
}

Value fn_config_update(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"name", "value"}, 2);
  std::string name = to_str(args[0], "config name");
  if (name == "jax_disable_jit") {
    c.interp.set_global_disable_jit(c.interp.truthy(c.st, args[1]));
  } else if (name == "jax_enable_x64") {
    if (c.interp.truthy(c.st, args[1])) {
      raise_not_implemented("jax_enable_x64", "spmdsim uses JAX's default 32-bit types; request float64 explicitly with dtype=");
    }
  }
  // Other flags (platforms, logging, debug_nans, ...) do not apply to the simulator.
  return Value::none();
}

class ConfigObject : public CustomObject {
 public:
  std::string type_name() const override { return "Config"; }
  std::string repr(ExecState&) const override { return "<jax.config>"; }
  bool get_attr(Interpreter& interp, ExecState&, const Value&, const std::string& name, Value& out) const override {
    if (name == "update") return out = make_native("jax.config.update", fn_config_update), true;
    if (name == "jax_disable_jit") return out = Value::boolean(interp.global_disable_jit()), true;
    if (name == "jax_enable_x64") return out = Value::boolean(false), true;
    return false;
  }
};

// ============================================================================
// jax.debug

Value fn_debug_print(NativeCall& c, CallArgs& a) {
  if (a.pos.empty()) raise_type_error("print() missing 1 required positional argument: 'fmt'");
  std::string fmt = to_str(a.pos[0], "jax.debug.print format");
  std::vector<Value> pos(a.pos.begin() + 1, a.pos.end());
  std::vector<std::pair<std::string, Value>> kw;
  for (auto& [k, v] : a.kw) {
    if (k != "ordered") kw.emplace_back(k, v);
  }
  std::string text;
  {
    ConcreteScope concrete(c.st);
    text = format_string(c.interp, c.st, fmt, pos, kw);
  }
  if (c.st.in_device) {
    debug_print(std::move(text), c.loc());
  } else {
    c.interp.write_out(text + "\n");
  }
  return Value::none();
}

Value fn_debug_breakpoint(NativeCall& c, CallArgs& a) {
  std::vector<std::pair<std::string, Array>> values;
  if (!c.st.frames.empty()) {
    const Frame& f = *c.st.frames.back();
    for (std::size_t i = 0; i < f.fast.size(); ++i) {
      const std::string& n = f.scope->fast_names[i];
      if (f.fast[i].is(Kind::kArray) && n.find('.') == std::string::npos) values.emplace_back(n, f.fast[i].as_array());
    }
    for (std::size_t i = 0; i < f.cells.size(); ++i) {
      const std::string& n = f.scope->cell_names[i];
      const Value& v = f.cells[i]->value;
      if (v.is(Kind::kArray) && n.find('.') == std::string::npos) values.emplace_back(n, v.as_array());
    }
  }
  if (c.st.in_device) {
    breakpoint(std::move(values), c.loc());
  } else {
    std::string text = "breakpoint at " + c.loc().to_string() + " (host)\n";
    for (const auto& [name, v] : values) text += "  " + name + " = " + to_string(v) + "\n";
    c.interp.write_out(text);
  }
  return Value::none();
}

Value fn_debug_callback(NativeCall& c, CallArgs& a) {
  if (a.pos.empty()) raise_type_error("callback() missing 1 required positional argument: 'callback'");
  CallArgs inner;
  inner.pos.assign(a.pos.begin() + 1, a.pos.end());
  for (auto& [k, v] : a.kw) {
    if (k != "ordered") inner.kw.emplace_back(k, v);
  }
  ConcreteScope concrete(c.st);
  c.interp.call(c.st, a.pos[0], inner, c.site);
  return Value::none();
}

// ============================================================================
// jax.tree_util

class TreeDefObject : public CustomObject {
 public:
  explicit TreeDefObject(TreeDef t, std::string text) : tree(std::move(t)), text_(std::move(text)) {}
  std::string type_name() const override { return "PyTreeDef"; }
  std::string repr(ExecState&) const override { return text_; }
  bool get_attr(Interpreter&, ExecState&, const Value&, const std::string& name, Value& out) const override {
    if (name == "num_leaves") return out = Value::integer(static_cast<std::int64_t>(tree.num_leaves)), true;
    return false;
  }
  TreeDef tree;

 private:
  std::string text_;
};

Value treedef_value(Interpreter& interp, ExecState& st, TreeDef t) {
  std::string text = t.to_string(interp, st);
  return Value::object(Kind::kOther, std::make_shared<TreeDefObject>(std::move(t), std::move(text)));
}

Value fn_tree_map(NativeCall& c, CallArgs& a) {
  if (a.pos.size() < 2) raise_type_error("tree_map() missing required arguments: 'f' and 'tree'");
  for (auto& [k, v] : a.kw) {
    if (k != "is_leaf") raise_type_error("tree_map() got an unexpected keyword argument '" + k + "'");
    if (!v.is_none()) raise_not_implemented("tree_map(is_leaf=...)", "restructure the tree instead");
  }
  std::vector<Value> leaves;
  TreeDef t = tree_flatten(c.interp, c.st, a.pos[1], leaves);
  std::vector<std::vector<Value>> rest;
  for (std::size_t k = 2; k < a.pos.size(); ++k) {
    std::vector<Value> r;
    TreeDef rt = tree_flatten(c.interp, c.st, a.pos[k], r);
    if (!rt.same_structure(t)) {
      raise_value_error("Custom node type mismatch; expected structure " + t.to_string(c.interp, c.st) + ", got " +
                        rt.to_string(c.interp, c.st));
    }
    rest.push_back(std::move(r));
  }
  std::vector<Value> out;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    CallArgs args;
    args.pos.push_back(leaves[i]);
    for (auto& r : rest) args.pos.push_back(r[i]);
    out.push_back(c.interp.call(c.st, a.pos[0], args, c.site));
  }
  return tree_unflatten(c.st, t, out);
}

Value fn_tree_leaves(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"tree", "is_leaf"}, 1);
  std::vector<Value> leaves;
  tree_flatten(c.interp, c.st, args[0], leaves);
  return Value::list(std::move(leaves), c.st.token);
}

Value fn_tree_flatten(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"tree", "is_leaf"}, 1);
  std::vector<Value> leaves;
  TreeDef t = tree_flatten(c.interp, c.st, args[0], leaves);
  return Value::tuple({Value::list(std::move(leaves), c.st.token), treedef_value(c.interp, c.st, std::move(t))});
}

Value fn_tree_structure(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"tree", "is_leaf"}, 1);
  std::vector<Value> leaves;
  return treedef_value(c.interp, c.st, tree_flatten(c.interp, c.st, args[0], leaves));
}

Value fn_tree_unflatten(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"treedef", "leaves"}, 2);
  if (!args[0].is(Kind::kOther) || args[0].as<CustomObject>().type_name() != "PyTreeDef") {
    raise_type_error("tree_unflatten() expects a PyTreeDef as its first argument");
  }
  const TreeDef& t = static_cast<const TreeDefObject&>(args[0].as<CustomObject>()).tree;
  std::vector<Value> leaves = c.interp.iterate(c.st, args[1]);
  if (leaves.size() != t.num_leaves) {
    raise_value_error("Too " + std::string(leaves.size() < t.num_leaves ? "few" : "many") + " leaves for PyTreeDef; expected " +
                      std::to_string(t.num_leaves) + ", got " + std::to_string(leaves.size()) + ".");
  }
  return tree_unflatten(c.st, t, leaves);
}

Value fn_tree_reduce(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"function", "tree", "initializer", "is_leaf"}, 2);
  std::vector<Value> leaves;
  tree_flatten(c.interp, c.st, args[1], leaves);
  std::size_t start = 0;
  Value acc;
  if (args.given(2)) {
    acc = args[2];
  } else {
    if (leaves.empty()) raise_type_error("reduce() of empty iterable with no initial value");
    acc = leaves[0];
    start = 1;
  }
  for (std::size_t i = start; i < leaves.size(); ++i) {
    CallArgs call_args;
    call_args.pos = {acc, leaves[i]};
    acc = c.interp.call(c.st, args[0], call_args, c.site);
  }
  return acc;
}

Value fn_tree_all(NativeCall& c, CallArgs& a) {
  Args args(c, a, {"tree", "is_leaf"}, 1);
  std::vector<Value> leaves;
  tree_flatten(c.interp, c.st, args[0], leaves);
  for (const auto& l : leaves) {
    if (!c.interp.truthy(c.st, l)) return Value::boolean(false);
  }
  return Value::boolean(true);
}

}  // namespace

// ============================================================================
// modules

Value build_debug_module(Interpreter& interp) {
  auto m = new_module("jax.debug");
  add_fn(*m, "print", fn_debug_print);
  add_fn(*m, "breakpoint", fn_debug_breakpoint);
  add_fn(*m, "callback", fn_debug_callback);
  return module_value(m);
}

Value build_tree_util_module(Interpreter& interp, const std::string& name) {
  auto m = new_module(name);
  bool short_names = name == "jax.tree";
  add_fn(*m, short_names ? "map" : "tree_map", fn_tree_map);
  add_fn(*m, short_names ? "leaves" : "tree_leaves", fn_tree_leaves);
  add_fn(*m, short_names ? "flatten" : "tree_flatten", fn_tree_flatten);
  add_fn(*m, short_names ? "unflatten" : "tree_unflatten", fn_tree_unflatten);
  add_fn(*m, short_names ? "structure" : "tree_structure", fn_tree_structure);
  add_fn(*m, short_names ? "reduce" : "tree_reduce", fn_tree_reduce);
  add_fn(*m, short_names ? "all" : "tree_all", fn_tree_all);
  return module_value(m);
}

Value build_errors_module(Interpreter& interp) {
  auto m = new_module("jax.errors");
  for (const char* n : {"ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
                        "UnexpectedTracerError"}) {
    m->set(n, exception_class(n));
  }
  return module_value(m);
}

Value build_jax_module(Interpreter& interp) {
  auto m = new_module("jax");
  add_fn(*m, "pmap", fn_pmap);
  add_fn(*m, "vmap", fn_vmap);
  add_fn(*m, "jit", fn_identity_decorator);
  add_fn(*m, "checkpoint", fn_identity_decorator);
  add_fn(*m, "remat", fn_identity_decorator);
  for (const char* n : {"grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vjp", "jvp", "linearize", "custom_vjp",
                        "custom_jvp"}) {
    add_fn(*m, n, fn_autodiff);
  }
  for (const char* n : {"make_jaxpr", "eval_shape", "xla_computation", "named_call", "shard_map"}) add_fn(*m, n, fn_not_available);
  add_fn(*m, "device_count", fn_device_count);
  add_fn(*m, "local_device_count", fn_local_device_count);
  add_fn(*m, "devices", fn_devices);
  add_fn(*m, "local_devices", fn_local_devices);
  add_fn(*m, "process_index", fn_process_index);
  add_fn(*m, "process_count", fn_process_count);
  add_fn(*m, "disable_jit", fn_disable_jit);
  add_fn(*m, "block_until_ready", fn_return_first);
  add_fn(*m, "device_get", fn_return_first);
  add_fn(*m, "device_put", fn_return_first);
  add_fn(*m, "device_put_replicated", fn_device_put_replicated);
  add_fn(*m, "device_put_sharded", fn_device_put_sharded);
  add_fn(*m, "tree_map", fn_tree_map);
  add_fn(*m, "tree_leaves", fn_tree_leaves);
  add_fn(*m, "tree_flatten", fn_tree_flatten);
  add_fn(*m, "tree_unflatten", fn_tree_unflatten);
  add_fn(*m, "tree_structure", fn_tree_structure);
  m->set("Array", array_type());
  m->set("config", Value::object(Kind::kOther, std::make_shared<ConfigObject>()));
  for (const char* sub : {"numpy", "lax", "random", "nn", "debug", "tree_util", "tree", "errors"}) {
    m->set(sub, interp.module(std::string("jax.") + sub));
  }
  return module_value(m);
}

Value build_module(Interpreter& interp, const std::string& name) {
  if (name == "jax") return build_jax_module(interp);
  if (name == "jax.numpy" || name == "numpy") return build_numpy_module(interp, name);
  if (name == "jax.lax") return build_lax_module(interp);
  if (name == "jax.random") return build_random_module(interp);
  if (name == "jax.nn") return build_nn_module(interp);
  if (name == "jax.debug") return build_debug_module(interp);
  if (name == "jax.tree_util" || name == "jax.tree") return build_tree_util_module(interp, name);
  if (name == "jax.errors") return build_errors_module(interp);
  if (name == "functools") return build_functools_module(interp);
  if (name == "math") return build_math_module(interp);
  if (name == "typing") return build_typing_module(interp);
  if (name == "time") return build_time_module(interp);
  return Value();
}

}  // namespace spmd::scenario
