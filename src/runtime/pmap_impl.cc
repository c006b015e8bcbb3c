#include "runtime/pmap_impl.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "backend/backend.h"
#include "core/arena.h"
#include "core/device_ops.h"
#include "core/replicas.h"
#include "runtime/run_reports.h"
#include "runtime/run.h"
#include "runtime/shard.h"
#include "spmd/error.h"

namespace spmd::detail {

namespace {

struct PmapPlan {
  std::vector<MeshAxis> axes;           // bound by this pmap, outermost first
  int devices = 0;                      // product of the axis sizes
  std::vector<MapAxis> in_axes;         // normalised, one per argument
  std::vector<DeviceId> device_ids;     // physical device of each new context
  // The indices this process runs: all (0, devices), or its local devices.
  int first = 0;
  int count = 0;
};

std::string arg_label(const PmapOptions& o, std::size_t k) {
  std::string s = "argument " + std::to_string(k);
  if (k < o.arg_names.size() && !o.arg_names[k].empty()) s += " '" + o.arg_names[k] + "'";
  return s;
}

// "output 1" without names; with them the path the user wrote, e.g.
// "output[0]['loss']", and "the output" for a single unnamed-by-path one.
std::string out_label(const PmapOptions& o, std::size_t k) {
  if (k >= o.out_names.size() || o.out_names[k].empty()) return "output " + std::to_string(k);
  if (o.out_names[k] == "output") return "the output";
  return o.out_names[k];
}

[[noreturn]] void fail(std::string kind, const PmapOptions& o, std::string message, std::string hint,
                       std::vector<std::string> details = {}, ReportTable table = {}) {
  Report r = make_report(std::move(kind), "pmap: " + std::move(message), std::move(hint));
  r.where = o.loc;
  r.op = "pmap";
  r.details = std::move(details);
  r.table = std::move(table);
  throw InvalidArgument(std::move(r));
}

// A mapped leaf as JAX's size errors name it: "argument params['w']" (the
// pytree path) or "args[3]" without names, and its type "float32[8,3]".
bool has_name(const PmapOptions& o, std::size_t k) { return k < o.arg_names.size() && !o.arg_names[k].empty(); }
std::string leaf_path(const PmapOptions& o, std::size_t k) {
  return has_name(o, k) ? o.arg_names[k] : "args[" + std::to_string(k) + "]";
}
std::string leaf_name(const PmapOptions& o, std::size_t k) {
  return has_name(o, k) ? "argument " + o.arg_names[k] : leaf_path(o, k);
}
std::string leaf_type(const Array& a) {
  std::string dims;
  for (std::int64_t d : a.shape()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
  return std::string(dtype_name(a.dtype())) + "[" + dims + "]";
}

// Rows of the per-leaf table a terminal shows; --explain and JSON have all.
constexpr std::size_t kSplitTableRows = 8;

struct SplitSizes {
  std::string odd_one_out;           // "axis 0 of argument batch has size 7, where 102 others have size 8"
  std::vector<std::string> details;  // one line per size, as JAX prints them, and a few more leaves of each
};

// Mapped sizes that disagree, grouped as JAX's _mapped_axis_size groups them
// (a line per size, the most common first, with its first leaf), so a pytree
// of hundreds of leaves takes a few lines; each group also names up to three
// more of its leaves, and the message names the odd one out (the rarest
// size) first.
SplitSizes group_split_sizes(const PmapOptions& o, std::span<const Array> args,
                             const std::vector<std::optional<int>>& in_axes,
                             const std::vector<std::pair<std::size_t, std::int64_t>>& sizes) {
  constexpr std::size_t kMaxGroups = 10, kMoreNames = 3;
  std::vector<std::pair<std::int64_t, std::vector<std::size_t>>> groups;  // size -> leaves, first seen first
  for (const auto& leaf : sizes) {
    const std::int64_t n = leaf.second;
    auto g = std::find_if(groups.begin(), groups.end(), [n](const auto& e) { return e.first == n; });
    if (g == groups.end()) groups.push_back({n, {leaf.first}});
    else g->second.push_back(leaf.first);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  auto where = [&](std::size_t k) {
    return "axis " + std::to_string(*in_axes[k]) + " of " + leaf_name(o, k) + " of type " + leaf_type(args[k]);
  };
  SplitSizes out;
  for (std::size_t g = 0; g < groups.size() && g < kMaxGroups; ++g) {
    const auto& [n, leaves] = groups[g];
    const std::string size = std::to_string(n);
    if (leaves.size() == 1) {
      out.details.push_back("* one axis had size " + size + ": " + where(leaves[0]) + ";");
    } else {
      out.details.push_back(std::string(g == 0 ? "* most" : "* some") + " axes (" + std::to_string(leaves.size()) +
                            " of them) had size " + size + ", e.g. " + where(leaves[0]) + ";");
      std::string also;
      for (std::size_t i = 1; i < leaves.size() && i <= kMoreNames; ++i) {
        also += (also.empty() ? "" : ", ") + leaf_path(o, leaves[i]);
      }
      if (leaves.size() > kMoreNames + 1) also += " and " + std::to_string(leaves.size() - kMoreNames - 1) + " more";
      out.details.push_back("  also " + also);
    }
  }
  if (groups.size() > kMaxGroups) {
    out.details.push_back("* and " + std::to_string(groups.size() - kMaxGroups) + " more sizes");
  }
  // JAX's last line has no semicolon.
  for (auto it = out.details.rbegin(); it != out.details.rend(); ++it) {
    if (it->starts_with("* ") && it->ends_with(";")) {
      it->pop_back();
      break;
    }
  }
  // "argument batch has size 7 along axis 0, where 102 others have size 8"
  auto has = [&](const std::pair<std::int64_t, std::vector<std::size_t>>& g) {
    const std::size_t k = g.second[0];
    return g.second.size() == 1 ? leaf_name(o, k) + " has size " + std::to_string(g.first) + " along axis " +
                                      std::to_string(*in_axes[k])
                                : std::to_string(g.second.size()) + " axes have size " + std::to_string(g.first);
  };
  if (groups.size() == 1) {  // the leaves agree; axis_size does not
    out.odd_one_out = "the `axis_size` argument is " + std::to_string(*o.axis_size) + ", where every mapped axis has size " +
                      std::to_string(groups[0].first);
    return out;
  }
  const auto& odd = groups.back();
  const std::size_t others = sizes.size() - odd.second.size();
  out.odd_one_out = has(odd) + ", where ";
  if (groups.size() == 2 && others == 1) out.odd_one_out += leaf_name(o, groups[0].second[0]) + " has size " + std::to_string(groups[0].first);
  else if (groups.size() == 2) out.odd_one_out += std::to_string(others) + " others have size " + std::to_string(groups[0].first);
  else out.odd_one_out += std::to_string(others) + " others have " + std::to_string(groups.size() - 1) + " other sizes";
  return out;
}

std::string axes_text(const std::vector<MeshAxis>& axes) {
  std::string s;
  for (const auto& a : axes) s += (s.empty() ? "" : ",") + (a.name.empty() ? "<unnamed>" : a.name) + "=" + std::to_string(a.size);
  return s;
}

std::string shape_hint_for(const Array& x, int axis, int devices) {
  // Suggest the reshape that gives every device an equal slice.
  std::int64_t dim = x.shape()[static_cast<std::size_t>(axis)];
  if (devices <= 0 || dim % devices != 0 || dim == devices) return {};
  Shape s = x.shape();
  s[static_cast<std::size_t>(axis)] = dim / devices;
  s.insert(s.begin() + axis, devices);
  return "; e.g. reshape it to " + shape_to_string(s) + " to give each of the " + std::to_string(devices) +
         " devices " + std::to_string(dim / devices) + " rows";
}

// A run with local devices (RuntimeOptions::process_local_devices): this
// process maps over its own devices only, as a JAX process does on one host.
void plan_local_devices(PmapPlan& plan, const RuntimeOptions& ropts, LocalDevices local, const DeviceContext* parent,
                        std::span<const Array> args, const PmapOptions& o) {
  const std::string layout = "process " + std::to_string(ropts.process_index) + " of " +
                             std::to_string(ropts.process_count) + " runs devices " + std::to_string(local.first) +
                             ".." + std::to_string(local.first + local.count - 1) + " of " +
                             std::to_string(ropts.devices);
  if (parent) {
    fail("InvalidArgument", o, "a nested pmap cannot run with local devices (" + layout + ")",
         "map one axis per process with a top-level pmap, or run every device in every process "
         "(no --process-devices local)");
  }
  if (!o.mesh.empty() || !o.devices.empty()) {
    fail("InvalidArgument", o,
         std::string(o.mesh.empty() ? "devices=" : "a mesh") + " cannot be used with local devices (" + layout + ")",
         "with local devices a pmap maps one named axis over this process's devices; run every device in every "
         "process (no --process-devices local) for meshes and devices=");
  }
  const int n = plan.axes[0].size;
  if (n != local.count) {
    std::string what = "the mapped axis has size " + std::to_string(n);
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (plan.in_axes[k]) {
        what += " (axis " + std::to_string(*plan.in_axes[k]) + " of " + arg_label(o, k) + ", shape " +
                shape_to_string(args[k].shape()) + ")";
        break;
      }
    }
    const std::string l = std::to_string(local.count);
    std::string hint = "a pmap maps over jax.local_device_count() = " + l + " devices in each process, not over "
                       "jax.device_count() = " + std::to_string(ropts.devices);
    if (n == ropts.devices) {
      hint += "; pass each process only its devices' rows, e.g. x[jax.process_index() * " + l +
              ":(jax.process_index() + 1) * " + l + "]";
    }
    fail("InputSplitError", o, what + " but this process runs " + l + " local devices (" + layout + ")", hint);
  }
  plan.axes[0].size = ropts.devices;
  plan.devices = ropts.devices;
  plan.first = local.first;
  plan.count = local.count;
}

PmapPlan plan_pmap(const RuntimeOptions& ropts, LocalDevices local, const DeviceContext* parent,
                   std::span<const Array> args, const PmapOptions& o) {
  PmapPlan plan;
  const std::size_t nargs = args.size();
  if (!o.in_axes.empty() && o.in_axes.size() != nargs) {
    fail("InputSplitError", o,
         "in_axes has " + std::to_string(o.in_axes.size()) + " entries but the function is called with " +
             std::to_string(nargs) + " argument" + (nargs == 1 ? "" : "s"),
         "give one in_axes entry per positional argument (an int to split that axis, None to replicate)");
  }
  plan.in_axes = o.in_axes.empty() ? std::vector<MapAxis>(nargs, MapAxis{0}) : o.in_axes;

  const bool mesh = !o.mesh.empty();
  const int mapped_dims = mesh ? static_cast<int>(o.mesh.size()) : 1;
  for (std::size_t k = 0; k < nargs; ++k) {
    if (!args[k].valid()) fail("InvalidArgument", o, arg_label(o, k) + " is a null Array", "pass a created array");
    if (!plan.in_axes[k]) continue;
    int rank = args[k].ndim();
    int a = *plan.in_axes[k];
    int max_start = rank - mapped_dims;  // the mapped dims must fit
    if (a < -rank || a > max_start || (a < 0 && a + rank > max_start)) {
      fail("InputSplitError", o,
           "in_axes[" + std::to_string(k) + "]=" + std::to_string(a) + " is out of bounds for " + arg_label(o, k) +
               " of shape " + shape_to_string(args[k].shape()) + " (rank " + std::to_string(rank) + ")",
           rank == 0 ? "a scalar has no axis to split: replicate it with in_axes=None"
                     : "valid axes are " + std::to_string(-rank) + ".." + std::to_string(rank - 1) +
                           ", or None to replicate the argument");
    }
    plan.in_axes[k] = a < 0 ? a + rank : a;
  }

  if (mesh) {
    plan.axes = o.mesh;
    std::set<std::string> names;
    for (const auto& ax : plan.axes) {
      if (ax.size < 1) fail("InvalidArgument", o, "mesh axis '" + ax.name + "' has size " + std::to_string(ax.size), "mesh axes need size >= 1");
      if (!names.insert(ax.name).second) fail("InvalidArgument", o, "mesh axis '" + ax.name + "' is named twice", "give each mesh axis its own name");
    }
    for (std::size_t k = 0; k < nargs; ++k) {
      if (!plan.in_axes[k]) continue;
      int a = *plan.in_axes[k];
      for (std::size_t m = 0; m < plan.axes.size(); ++m) {
        std::int64_t dim = args[k].shape()[static_cast<std::size_t>(a) + m];
        if (dim != plan.axes[m].size) {
          fail("InputSplitError", o,
               arg_label(o, k) + " of shape " + shape_to_string(args[k].shape()) + " has size " + std::to_string(dim) +
                   " along axis " + std::to_string(a + static_cast<int>(m)) + " but mesh axis '" + plan.axes[m].name +
                   "' has " + std::to_string(plan.axes[m].size) + " devices",
               "a mapped argument needs the mesh sizes (" + axes_text(plan.axes) +
                   ") as consecutive dimensions starting at its in_axis; or replicate it with in_axes=None");
        }
      }
    }
  } else {
    // One axis: its size comes from the mapped arguments (or axis_size).
    std::vector<std::pair<std::size_t, std::int64_t>> sizes;
    for (std::size_t k = 0; k < nargs; ++k) {
      if (plan.in_axes[k]) sizes.push_back({k, args[k].shape()[static_cast<std::size_t>(*plan.in_axes[k])]});
    }
    std::set<std::int64_t> distinct;
    for (auto& s : sizes) distinct.insert(s.second);
    if (o.axis_size) distinct.insert(*o.axis_size);
    if (distinct.empty()) {
      fail("InputSplitError", o, "no argument is mapped and no axis_size is given, so the device count is unknown",
           "map at least one argument (in_axes=0) or pass axis_size=N");
    }
    if (distinct.size() > 1) {
      SplitSizes grouped = group_split_sizes(o, args, plan.in_axes, sizes);
      ReportTable t;
      t.columns = {"argument", "shape", "in_axis", "size"};
      t.text_rows = kSplitTableRows;
      for (auto& [k, n] : sizes) {
        t.rows.push_back({arg_label(o, k), shape_to_string(args[k].shape()), std::to_string(*plan.in_axes[k]),
                          std::to_string(n)});
      }
      if (o.axis_size) grouped.details.insert(grouped.details.begin(), "* the `axis_size` argument was " + std::to_string(*o.axis_size) + ";");
      fail("InputSplitError", o, "got inconsistent sizes for array axes to be mapped: " + grouped.odd_one_out,
           "every mapped axis must have the same size, the number of devices; an argument that every device "
           "should see whole must be replicated with in_axes=None",
           std::move(grouped.details), std::move(t));
    }
    std::int64_t n = *distinct.begin();
    if (n < 1) {
      fail("InputSplitError", o, "the mapped axis has size 0: there would be no device to run on",
           "map an axis with at least one element per device");
    }
    plan.axes = {MeshAxis{o.axis_name, static_cast<int>(n)}};
  }
  plan.devices = 1;
  for (const auto& ax : plan.axes) plan.devices *= ax.size;
  plan.count = plan.devices;
  if (local.count != ropts.devices) plan_local_devices(plan, ropts, local, parent, args, o);

  // Enough devices? Nested pmaps multiply with their parents.
  int level = 1;
  if (parent) {
    for (const auto& b : parent->env) level *= b.size;
  }
  long long needed = static_cast<long long>(level) * plan.devices;
  if (needed > ropts.devices) {
    std::string what;
    for (std::size_t k = 0; k < nargs; ++k) {
      if (plan.in_axes[k] && !mesh) {
        what = "; it is the size of axis " + std::to_string(*plan.in_axes[k]) + " of " + arg_label(o, k) +
               " (shape " + shape_to_string(args[k].shape()) + ")" + shape_hint_for(args[k], *plan.in_axes[k], ropts.devices / level);
        break;
      }
    }
    std::string msg = parent ? "the nested pmap needs " + std::to_string(level) + " x " + std::to_string(plan.devices) +
                                   " = " + std::to_string(needed) + " devices, but only " +
                                   std::to_string(ropts.devices) + " are available"
                             : "the computation needs " + std::to_string(plan.devices) + " devices, but only " +
                                   std::to_string(ropts.devices) + " are available";
    fail("DeviceCountError", o, msg + what,
         "the mapped axis must not exceed jax.device_count() (" + std::to_string(ropts.devices) +
             "); reshape the data so the mapped axis equals the device count, or run with more devices "
             "(--devices N)");
  }

  if (!o.devices.empty()) {
    // One device per row-major position of the whole nest (at top level: per index).
    if (static_cast<long long>(o.devices.size()) != needed) {
      fail("DeviceCountError", o,
           "devices= lists " + std::to_string(o.devices.size()) + " devices but the mapped axis has size " +
               std::to_string(plan.devices) + (parent ? " in a nest of " + std::to_string(needed) + " positions" : ""),
           parent ? "a nested pmap lists one device per position of the whole nest (a mesh's devices, row-major)"
                  : "list exactly one device per index of the mapped axis");
    }
    std::set<int> seen;
    for (int d : o.devices) {
      if (d < 0 || d >= ropts.devices || !seen.insert(d).second) {
        fail("DeviceCountError", o,
             "devices= contains " + std::to_string(d) + (d < 0 || d >= ropts.devices ? ", which does not exist" : " twice"),
             "device ids are 0.." + std::to_string(ropts.devices - 1) + ", each at most once");
      }
    }
    const std::size_t first = parent ? static_cast<std::size_t>(parent->device) * static_cast<std::size_t>(plan.devices) : 0;
    for (int i = 0; i < plan.devices; ++i) plan.device_ids.push_back(o.devices.at(first + static_cast<std::size_t>(i)));
  } else {
    for (int i = 0; i < plan.devices; ++i) {
      plan.device_ids.push_back(parent ? parent->device * plan.devices + i : i);
    }
  }
  return plan;
}

// How argument k reaches the devices (RunInfo::arguments, for --explain).
ValueLayout argument_layout(const PmapPlan& plan, const Array& arg, const PmapOptions& o, std::size_t k) {
  ValueLayout v;
  v.name = arg_label(o, k);
  v.shape = arg.shape();
  v.dtype = arg.dtype();
  v.per_device = arg.shape();
  if (plan.in_axes[k]) {
    v.mapped_axis = *plan.in_axes[k];
    const auto first = v.per_device.begin() + v.mapped_axis;
    v.per_device.erase(first, first + static_cast<std::ptrdiff_t>(plan.axes.size()));
  }
  return v;
}

// Coordinates of flat index i over the plan's axes (row-major).
std::vector<int> coordinates(const PmapPlan& plan, int i) {
  std::vector<int> c(plan.axes.size());
  for (std::size_t a = plan.axes.size(); a-- > 0;) {
    c[a] = i % plan.axes[a].size;
    i /= plan.axes[a].size;
  }
  return c;
}

// `shared[k]`: argument k's contents for the devices to read in place, where
// it is in host memory and replicated or mapped along its first axis (the
// mapped axes merged into one).
std::vector<Array> shard_inputs(const PmapPlan& plan, std::span<const Array> args,
                                std::span<const std::optional<SharedContents>> shared, const DeviceContext& ctx) {
  PlacementScope scope(&ctx.placement);
  std::vector<Array> mine;
  mine.reserve(args.size());
  const int mapped_dims = static_cast<int>(plan.axes.size());
  const bool host_arena = ctx.placement.arena->memory_kind() == MemoryKind::kHost;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (plan.in_axes[k] && shared[k] && host_arena) {
      // A row of the argument's own block, charged to this device's arena
      // as its copy would be: no copy of the batch per call.
      mine.push_back(shared[k]->row(ctx.index_in_pmap).on(ctx.placement.arena, "pmap input shard"));
    } else if (plan.in_axes[k]) {
      int a = *plan.in_axes[k];
      mine.push_back(take_slice(merge_dims(args[k], a, mapped_dims), a, ctx.index_in_pmap));
    } else if (shared[k] && host_arena) {
      // Replicated: every device reads the argument's own block, charged to
      // its arena as its own copy would be (arrays are never written).
      mine.push_back(shared[k]->on(ctx.placement.arena, "replicated pmap input"));
    } else {
      // Replicated: every device gets its own copy in its own arena.
      Array copy = Array::uninitialized(args[k].shape(), args[k].dtype(), "replicated pmap input");
      copy_bytes(copy.mutable_raw_data(), copy.memory_kind(), copy.device(), args[k].raw_data(),
                 args[k].memory_kind(), args[k].device(), copy.nbytes(), "replicated pmap input");
      mine.push_back(copy.with_weak_type(args[k].weak_type()));
    }
  }
  return mine;
}

std::vector<Array> stack_outputs(const PmapPlan& plan, const std::vector<std::vector<Array>>& results,
                                 const PmapOptions& o, const std::vector<DeviceContext*>& contexts) {
  // Same number of outputs everywhere?
  std::vector<std::pair<std::size_t, int>> counts;
  for (std::size_t i = 0; i < results.size(); ++i) counts.push_back({results[i].size(), contexts[i]->device});
  std::map<std::size_t, std::vector<int>> by_count;
  for (auto& [c, d] : counts) by_count[c].push_back(d);
  if (by_count.size() > 1) {
    std::string msg = "devices returned different numbers of outputs:";
    for (auto& [c, ids] : by_count) msg += " " + format_devices(ids) + " returned " + std::to_string(c) + ";";
    msg.pop_back();
    fail("OutAxesError", o, msg, "every device must return the same structure of outputs");
  }
  const std::size_t nout = results.empty() ? 0 : results[0].size();
  if (!o.out_axes.empty() && o.out_axes.size() != nout) {
    fail("OutAxesError", o,
         "out_axes has " + std::to_string(o.out_axes.size()) + " entries but the function returns " +
             std::to_string(nout) + " output" + (nout == 1 ? "" : "s"),
         "give one out_axes entry per output (an int to stack along, None for a value equal on all devices)");
  }
  std::vector<Array> out;
  const int mapped_dims = static_cast<int>(plan.axes.size());
  std::vector<std::int64_t> sizes;
  for (const auto& ax : plan.axes) sizes.push_back(ax.size);
  if (plan.count != plan.devices) sizes = {plan.count};  // this process's devices only
  for (std::size_t j = 0; j < nout; ++j) {
    // Same type everywhere? (Compared directly; the texts only for a report.)
    const bool same_type = std::all_of(results.begin(), results.end(), [&](const std::vector<Array>& r) {
      return r[j].dtype() == results[0][j].dtype() && r[j].shape() == results[0][j].shape();
    });
    if (!same_type) {
      std::map<std::string, std::vector<int>> by_type;
      for (std::size_t i = 0; i < results.size(); ++i) {
        by_type[results[i][j].abstract_type()].push_back(contexts[i]->device);
      }
      ReportTable t;
      t.columns = {"devices", "returned"};
      std::string msg = "cannot stack " + out_label(o, j) + ": devices returned different shapes or dtypes:";
      for (auto& [ty, ids] : by_type) {
        t.rows.push_back({format_devices(ids), ty});
        msg += " " + format_devices(ids) + " " + ty + ";";
      }
      msg.pop_back();
      fail("OutAxesError", o, msg,
           "per-device outputs are stacked along out_axes, so they must agree in shape and dtype on every device; "
           "look for device-dependent slicing or branches before the return",
           {}, std::move(t));
    }
    MapAxis axis = o.out_axes.empty() ? MapAxis{0} : o.out_axes[j];
    const Array& first = results[0][j];
    if (!axis) {
      for (std::size_t i = 1; i < results.size(); ++i) {
        if (!results[i][j].identical(first)) {
          fail("OutAxesError", o,
               "out_axes=None for " + out_label(o, j) + " but its value differs between devices (" +
                   contexts[0]->label + " and " + contexts[i]->label + " differ)",
               "out_axes=None returns one copy, so it is only for values equal on every device (e.g. the result "
               "of a psum or pmean); parameters updated from each device's own gradients differ unless the "
               "gradients are averaged first (grads = lax.pmean(grads, axis_name)); use out_axes=0 to stack "
               "per-device values");
        }
      }
      Array copy = Array::uninitialized(first.shape(), first.dtype(), "pmap output");
      copy_bytes(copy.mutable_raw_data(), copy.memory_kind(), copy.device(), first.raw_data(), first.memory_kind(),
                 first.device(), copy.nbytes(), "pmap output");
      out.push_back(copy.with_weak_type(first.weak_type()));
      continue;
    }
    int rank = first.ndim();
    int a = *axis;
    if (a < -(rank + 1) || a > rank) {
      fail("OutAxesError", o,
           "out_axes[" + std::to_string(j) + "]=" + std::to_string(a) + " is out of bounds for " + out_label(o, j) +
               " of per-device shape " + shape_to_string(first.shape()),
           "a per-device output of rank " + std::to_string(rank) + " can be stacked along axes " +
               std::to_string(-(rank + 1)) + ".." + std::to_string(rank));
    }
    if (a < 0) a += rank + 1;
    std::vector<const Array*> parts;
    for (const auto& r : results) parts.push_back(&r[j]);
    out.push_back(split_dim(stack_along(parts, a), a, sizes));
    (void)mapped_dims;
  }
  return out;
}

struct LaunchResult {
  std::vector<std::vector<Array>> results;
  std::vector<DeviceContext*> contexts;
};

LaunchResult launch_devices(Run& run, DeviceContext* parent, const PmapPlan& plan, const DeviceFn& fn,
                            std::span<const Array> args) {
  LaunchResult lr;
  std::vector<AxisBinding> base = parent ? parent->env : std::vector<AxisBinding>{};
  for (int i = plan.first; i < plan.first + plan.count; ++i) {
    std::vector<AxisBinding> env = base;
    std::vector<int> c = coordinates(plan, i);
    for (std::size_t a = 0; a < plan.axes.size(); ++a) env.push_back({plan.axes[a].name, c[a], plan.axes[a].size});
    lr.contexts.push_back(&run.add_context(parent, plan.device_ids[static_cast<std::size_t>(i)], std::move(env),
                                           i - plan.first, plan.count, static_cast<int>(plan.axes.size())));
  }
  std::vector<std::optional<SharedContents>> shared(args.size());
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (!args[k].valid()) continue;
    if (!plan.in_axes[k]) {
      shared[k] = SharedContents::of(args[k]);
    } else if (*plan.in_axes[k] == 0 && args[k].nbytes() > 0) {
      // Mapped along its first axis: each device's shard is one contiguous row.
      shared[k] = SharedContents::of(merge_dims(args[k], 0, static_cast<int>(plan.axes.size())));
    }
  }
  std::vector<std::vector<Array>> shards;
  shards.reserve(lr.contexts.size());
  for (DeviceContext* ctx : lr.contexts) shards.push_back(shard_inputs(plan, args, shared, *ctx));
  lr.results.resize(lr.contexts.size());
  DeviceBody body = [&](DeviceContext& ctx) {
    std::size_t i = static_cast<std::size_t>(ctx.index_in_pmap);
    std::vector<Array> mine = std::move(shards[i]);
    lr.results[i] = fn(std::span<const Array>(mine));
  };
  if (parent) {
    run.begin_nested(*parent, plan.count);
    if (std::exception_ptr refused = run.backend().nested_launch_error()) {
      for (DeviceContext* ctx : lr.contexts) run.refuse_device(*ctx, refused);
      return lr;
    }
  }
  run.backend().launch(run, lr.contexts, [&run, &body](DeviceContext& ctx) { run.run_device(ctx, body); });
  return lr;
}

}  // namespace

void add_replication_notes(Error& e, std::span<const Array> args, const PmapOptions& o, int device_count) {
  for (std::size_t k = 0; k < args.size(); ++k) {
    bool replicated = !o.in_axes.empty() && k < o.in_axes.size() && !o.in_axes[k];
    if (!replicated || args[k].ndim() == 0) continue;
    if (args[k].shape()[0] == device_count && device_count > 1) {
      e.mutable_report().details.push_back(
          "note: " + arg_label(o, k) + " (shape " + shape_to_string(args[k].shape()) +
          ") is replicated (in_axes=None), yet its axis 0 equals the device count " + std::to_string(device_count) +
          ": if each device should get one slice, use in_axes=0");
    }
  }
}

std::vector<Array> pmap_top_level(RuntimeState& runtime, const DeviceFn& fn, std::span<const Array> args,
                                  const PmapOptions& options) {
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k].valid()) check_placement(args[k], "pmap");
  }
  PmapPlan plan = plan_pmap(runtime.options, runtime.local, nullptr, args, options);
  RunInfo info{std::string(runtime.backend->name()), plan.devices, axes_text(plan.axes), options.loc, {}, {}};
  for (std::size_t k = 0; k < args.size(); ++k) info.arguments.push_back(argument_layout(plan, args[k], options, k));
  Run run(runtime, info);
  {
    std::lock_guard<std::mutex> lock(runtime.active_mu);
    runtime.active = &run;
    runtime.active_since = std::chrono::steady_clock::now();
    // Interrupted before this run began: its devices stop before they run.
    if (runtime.interrupted.load(std::memory_order_acquire)) {
      run.abort(runtime.interrupt_error_locked());
      runtime.interrupt_reached_run = true;
    }
  }
  struct Inactive {
    RuntimeState& rt;
    ~Inactive() {
      std::lock_guard<std::mutex> lock(rt.active_mu);
      rt.active = nullptr;
      rt.finished_run_time += std::chrono::steady_clock::now() - rt.active_since;
    }
  } inactive{runtime};
  for (const auto& o : runtime.options.observers) o->on_run_start(info);
  LaunchResult lr;
  std::exception_ptr error;
  try {
    lr = launch_devices(run, nullptr, plan, fn, args);
  } catch (...) {
    run.abort(std::current_exception());
  }
  run.flush_prints(true);
  // The decisions this process took, for a report across processes that
  // another rank builds while this one has moved on (or finished).
  if (runtime.processes && !lr.contexts.empty()) {
    runtime.processes->post_context(lr.contexts.front()->decisions.to_json().dump());
  }
  error = run.error();
  if (error) {
    run.finalize_error_report();
    try {
      std::rethrow_exception(error);
    } catch (Error& e) {
      add_replication_notes(e, args, options, plan.count);
      // The other processes stop too, naming this one (no-op when the error
      // came from them: this process has stopped already).
      if (runtime.processes) runtime.processes->fail(e.kind() + ": " + e.report().message);
      for (const auto& o : runtime.options.observers) o->on_run_end(info, &e.report());
      throw;
    } catch (...) {
      Report r = make_report("DeviceError", "a device raised a non-spmd exception");
      for (const auto& o : runtime.options.observers) o->on_run_end(info, &r);
      throw;
    }
  }
  std::vector<Array> outs;
  try {
    outs = stack_outputs(plan, lr.results, options, lr.contexts);
  } catch (Error& e) {
    for (const auto& o : runtime.options.observers) o->on_run_end(info, &e.report());
    throw;
  }
  for (std::size_t j = 0; j < outs.size(); ++j) {
    ValueLayout v;
    v.name = out_label(options, j);
    v.shape = outs[j].shape();
    v.dtype = outs[j].dtype();
    const MapAxis axis = options.out_axes.empty() ? MapAxis{0} : options.out_axes[j];
    v.per_device = lr.results.empty() ? outs[j].shape() : lr.results[0][j].shape();
    if (axis) v.mapped_axis = *axis < 0 ? *axis + static_cast<int>(v.per_device.size()) + 1 : *axis;
    info.outputs.push_back(std::move(v));
  }
  for (const auto& o : runtime.options.observers) o->on_run_end(info, nullptr);
  return outs;
}

int plan_top_level_axis_size(RuntimeState& runtime, std::span<const Array> args, const PmapOptions& options) {
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k].valid()) check_placement(args[k], "pmap");
  }
  return plan_pmap(runtime.options, runtime.local, nullptr, args, options).axes.at(0).size;
}

std::vector<Array> pmap_nested(const DeviceFn& fn, std::span<const Array> args, const PmapOptions& options) {
  DeviceContext* parent = current_context();
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k].valid()) check_placement(args[k], "pmap");
  }
  Run& run = parent->run;
  PmapPlan plan = plan_pmap(run.options(), run.runtime().local, parent, args, options);
  {
    RecentEvent ev{EventKind::kNestedPmap};
    ev.axes = axes_text(plan.axes);
    ev.loc = options.loc;
    run.record_event(*parent, std::move(ev));
  }
  LaunchResult lr = launch_devices(run, parent, plan, fn, args);
  run.end_nested(*parent);
  return stack_outputs(plan, lr.results, options, lr.contexts);
}

}  // namespace spmd::detail
