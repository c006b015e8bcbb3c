#include "cli/explain_observer.h"

#include "runtime/run_reports.h"
#include "spmd/core/shape.h"
#include "spmd/report.h"

namespace spmd::cli {

namespace {

std::string axis_text(int axis) { return axis < 0 ? "None" : std::to_string(axis); }

Json layout_json(const ValueLayout& v, const char* axis_key) {
  Json j = Json::object();
  j.set("name", v.name);
  j.set("shape", abstract_type(v.dtype, v.shape));
  j.set(axis_key, v.mapped_axis < 0 ? Json() : Json(v.mapped_axis));
  j.set("per_device", abstract_type(v.dtype, v.per_device));
  return j;
}

}  // namespace

void ExplainObserver::on_run_start(const RunInfo&) {
  std::lock_guard<std::mutex> lock(mu_);
  collectives_.clear();
  index_.clear();
}

void ExplainObserver::on_event(const Event& e) {
  if (e.kind != EventKind::kCollectiveEnter) return;
  std::string what = e.op + " over";
  for (std::size_t i = 0; i < e.axes.size(); ++i) what += (i ? ", '" : " '") + e.axes[i] + "'";
  for (const std::string& t : e.operands) what += " " + t;
  if (!e.params.empty()) what += " " + e.params;
  if (e.loc.valid()) what += " at " + e.loc.to_string();
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = index_.emplace(what, collectives_.size());
  if (added) collectives_.push_back({what, {}});
  ++collectives_[it->second].count[e.device];
}

void ExplainObserver::on_run_end(const RunInfo& info, const Report* failure) {
  std::lock_guard<std::mutex> lock(mu_);
  ReportTable args{{"argument", "global", "in_axes", "per device", "how"}, {}};
  Json jargs = Json::array();
  for (const ValueLayout& v : info.arguments) {
    args.rows.push_back({v.name, abstract_type(v.dtype, v.shape), axis_text(v.mapped_axis),
                         abstract_type(v.dtype, v.per_device),
                         v.mapped_axis < 0 ? "replicated: every device gets all of it" : "split"});
    jargs.push(layout_json(v, "in_axes"));
  }
  ReportTable outs{{"output", "per device", "out_axes", "returned", "how"}, {}};
  Json jouts = Json::array();
  for (const ValueLayout& v : info.outputs) {
    outs.rows.push_back({v.name, abstract_type(v.dtype, v.per_device), axis_text(v.mapped_axis),
                         abstract_type(v.dtype, v.shape),
                         v.mapped_axis < 0 ? "one copy (equal on every device)" : "stacked"});
    jouts.push(layout_json(v, "out_axes"));
  }
  ReportTable coll{{"collective", "devices", "times each"}, {}};
  Json jcoll = Json::array();
  for (const Collective& c : collectives_) {
    // Devices grouped by how often they entered it: a device that skipped it shows.
    std::map<int, std::vector<int>> by_count;
    for (const auto& [device, n] : c.count) by_count[n].push_back(device);
    for (const auto& [n, devices] : by_count) {
      coll.rows.push_back({c.what, detail::format_devices(devices), std::to_string(n)});
      Json j = Json::object();
      j.set("collective", c.what);
      Json ds = Json::array();
      for (int d : devices) ds.push(d);
      j.set("devices", std::move(ds));
      j.set("times", n);
      jcoll.push(std::move(j));
    }
  }
  Json run = Json::object();
  run.set("pmap", loc_to_json(info.pmap_loc));
  run.set("devices", info.devices);
  run.set("axes", info.axes);
  run.set("arguments", std::move(jargs));
  run.set("outputs", failure ? Json() : std::move(jouts));
  run.set("collectives", std::move(jcoll));
  run.set("failed", failure ? Json(failure->kind) : Json());
  runs_.push(std::move(run));
  if (out_ == nullptr) return;
  std::string text = "explain: pmap";
  if (info.pmap_loc.valid()) text += " at " + info.pmap_loc.to_string();
  text += " on " + std::to_string(info.devices) + " devices (" + info.axes + ")" +
          (failure ? ", ended with " + failure->kind : "") + "\n";
  text += args.rows.empty() ? "  no arguments\n" : args.to_text("  ");
  if (!failure) text += outs.rows.empty() ? "  no outputs\n" : outs.to_text("  ");
  text += coll.rows.empty() ? "  no collectives\n" : coll.to_text("  ");
  *out_ << text << std::flush;
}

Json ExplainObserver::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

}  // namespace spmd::cli
