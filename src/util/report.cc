#include "spmd/report.h"

#include <algorithm>

#include "spmd/util/json.h"

namespace spmd {

std::string ReportTable::to_text(const std::string& indent, bool all_rows) const {
  std::string out;
  const ReportTable& t = *this;
  const std::size_t shown = all_rows || text_rows == 0 ? t.rows.size() : std::min(text_rows, t.rows.size());
  std::vector<std::size_t> width(t.columns.size(), 0);
  for (std::size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
  for (std::size_t r = 0; r < shown; ++r) {
    const auto& row = t.rows[r];
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (std::size_t c = 0; c < width.size(); ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      s += cell;
      if (c + 1 < width.size()) s.append(width[c] - cell.size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  };
  line(t.columns);
  for (std::size_t r = 0; r < shown; ++r) line(t.rows[r]);
  if (shown < t.rows.size()) {
    out += indent + "... and " + std::to_string(t.rows.size() - shown) +
           " more rows (all of them with --explain, or in --format json)\n";
  }
  return out;
}

std::string Report::to_text(bool all_rows) const {
  std::string out = "error[" + kind + "]: " + message + "\n";
  if (where.valid()) {
    out += "  --> " + where.to_string() + "\n";
    if (!source_line.empty()) {
      std::string num = std::to_string(where.line);
      std::string pad(num.size(), ' ');
      out += "   " + pad + " |\n";
      out += "   " + num + " | " + source_line + "\n";
      if (where.column > 0) out += "   " + pad + " | " + std::string(where.column - 1, ' ') + "^\n";
    }
  }
  if (device >= 0) out += "  device: " + std::to_string(device) + "\n";
  for (const auto& d : details) out += "  " + d + "\n";
  if (!table.empty()) {
    out += "\n";
    out += table.to_text("    ", all_rows);
  }
  if (!devices.empty()) {
    out += "\n  devices:\n";
    ReportTable t;
    t.columns = {"device", "state", "at", "where", "collectives"};
    for (const auto& d : devices) {
      t.rows.push_back({d.label.empty() ? std::to_string(d.device) : d.label, d.state, d.detail,
                        d.loc.valid() ? d.loc.to_string() : "", std::to_string(d.collectives_done)});
    }
    out += t.to_text("    ");
    bool any_recent = std::any_of(devices.begin(), devices.end(), [](const auto& d) { return !d.recent.empty(); });
    if (any_recent) {
      out += "\n  last events:\n";
      for (const auto& d : devices) {
        if (d.recent.empty()) continue;
        out += "    " + (d.label.empty() ? "device " + std::to_string(d.device) : d.label) + ":\n";
        for (const auto& e : d.recent) out += "      " + e + "\n";
      }
    }
  }
  if (!divergence.empty()) {
    out += "\n  divergence:\n";
    if (divergence.decision_loc.valid()) out += "    first differing decision: " + divergence.decision_summary + "\n";
    if (divergence.collective_index >= 0) {
      out += "    first differing collective: " + divergence.collective_summary + "\n";
    }
  }
  if (!hint.empty()) out += "\n  hint: " + hint + "\n";
  if (!repro.empty()) out += "  reproduce: " + repro + "\n";
  return out;
}

Json Report::to_json() const {
  Json j = Json::object();
  j.set("kind", kind);
  j.set("message", message);
  if (!details.empty()) {
    Json d = Json::array();
    for (const auto& s : details) d.push(s);
    j.set("details", std::move(d));
  }
  j.set("hint", hint);
  j.set("where", loc_to_json(where));
  if (!source_line.empty()) j.set("source_line", source_line);
  j.set("device", device >= 0 ? Json(device) : Json());
  if (!op.empty()) j.set("op", op);
  if (!axis.empty()) j.set("axis", axis);
  if (!table.empty()) {
    Json t = Json::object();
    Json cols = Json::array();
    for (const auto& c : table.columns) cols.push(c);
    t.set("columns", std::move(cols));
    Json rows = Json::array();
    for (const auto& row : table.rows) {
      Json r = Json::array();
      for (const auto& cell : row) r.push(cell);
      rows.push(std::move(r));
    }
    t.set("rows", std::move(rows));
    if (table.text_rows > 0) t.set("text_rows", static_cast<std::int64_t>(table.text_rows));
    j.set("table", std::move(t));
  }
  if (!devices.empty()) {
    Json ds = Json::array();
    for (const auto& d : devices) ds.push(device_status_to_json(d));
    j.set("devices", std::move(ds));
  }
  if (!divergence.empty()) {
    Json dv = Json::object();
    dv.set("collective_index", divergence.collective_index);
    dv.set("collective", divergence.collective_summary);
    dv.set("decision_where", loc_to_json(divergence.decision_loc));
    dv.set("decision", divergence.decision_summary);
    j.set("divergence", std::move(dv));
  }
  if (!repro.empty()) j.set("repro", repro);
  return j;
}

namespace {

std::vector<std::string> strings_of(const Json* j) {
  std::vector<std::string> out;
  if (j == nullptr || !j->is_array()) return out;
  for (const Json& e : j->as_array()) out.push_back(e.is_string() ? e.as_string() : e.dump());
  return out;
}

}  // namespace

Json device_status_to_json(const DeviceStatus& d) {
  Json dj = Json::object();
  dj.set("id", d.device);
  dj.set("label", d.label);
  dj.set("state", d.state);
  dj.set("detail", d.detail);
  dj.set("where", loc_to_json(d.loc));
  dj.set("collectives_done", d.collectives_done);
  Json recent = Json::array();
  for (const auto& e : d.recent) recent.push(e);
  dj.set("recent_events", std::move(recent));
  return dj;
}

Json loc_to_json(const SourceLoc& loc) {
  if (!loc.valid()) return Json();
  Json j = Json::object();
  j.set("file", loc.file);
  j.set("line", static_cast<std::int64_t>(loc.line));
  j.set("column", static_cast<std::int64_t>(loc.column));
  return j;
}

SourceLoc loc_from_json(const Json* j) {
  if (j == nullptr) return {};
  std::string file = j->string_at("file");
  std::int64_t line = j->int_at("line", 0);
  if (file.empty() || line < 1) return {};
  return SourceLoc{intern_path(file), static_cast<std::uint32_t>(line),
                   static_cast<std::uint32_t>(std::max<std::int64_t>(0, j->int_at("column", 0)))};
}

Report Report::from_json(const Json& j) {
  Report r;
  if (!j.is_object()) return r;
  r.kind = j.string_at("kind");
  r.message = j.string_at("message");
  r.details = strings_of(j.find("details"));
  r.hint = j.string_at("hint");
  r.where = loc_from_json(j.find("where"));
  r.source_line = j.string_at("source_line");
  r.device = static_cast<int>(j.int_at("device", -1));
  r.op = j.string_at("op");
  r.axis = j.string_at("axis");
  if (const Json* t = j.find("table"); t != nullptr && t->is_object()) {
    r.table.columns = strings_of(t->find("columns"));
    if (const Json* rows = t->find("rows"); rows != nullptr && rows->is_array()) {
      for (const Json& row : rows->as_array()) r.table.rows.push_back(strings_of(&row));
    }
    r.table.text_rows = static_cast<std::size_t>(std::max<std::int64_t>(0, t->int_at("text_rows", 0)));
  }
  if (const Json* ds = j.find("devices"); ds != nullptr && ds->is_array()) {
    for (const Json& dj : ds->as_array()) {
      DeviceStatus d;
      d.device = static_cast<int>(dj.int_at("id", -1));
      d.label = dj.string_at("label");
      d.state = dj.string_at("state");
      d.detail = dj.string_at("detail");
      d.loc = loc_from_json(dj.find("where"));
      d.collectives_done = dj.int_at("collectives_done", 0);
      d.recent = strings_of(dj.find("recent_events"));
      r.devices.push_back(std::move(d));
    }
  }
  if (const Json* dv = j.find("divergence"); dv != nullptr && dv->is_object()) {
    r.divergence.collective_index = dv->int_at("collective_index", -1);
    r.divergence.collective_summary = dv->string_at("collective");
    r.divergence.decision_loc = loc_from_json(dv->find("decision_where"));
    r.divergence.decision_summary = dv->string_at("decision");
  }
  r.repro = j.string_at("repro");
  return r;
}

}  // namespace spmd
