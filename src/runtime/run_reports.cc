#include "runtime/run_reports.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "rendezvous/communicator.h"
#include "spmd/error.h"
#include "util/id_sets.h"
#include "runtime/device_context.h"
#include "runtime/run.h"

namespace spmd::detail {


namespace {

std::string status_detail(const DeviceContext& c) {
  switch (c.state()) {
    case DeviceState::kWaitingCollective:
      return c.waiting()->sig->op_and_axes() + " #" + std::to_string(c.waiting()->seq) +
             (c.waiting()->sig->operands.empty() ? "" : " " + c.waiting()->sig->operand_types());
    case DeviceState::kAtBreakpoint: return "jax.debug.breakpoint";
    case DeviceState::kWaitingChildren: return "waiting for its nested pmap";
    case DeviceState::kFinished:
      return "returned after " + std::to_string(c.collectives_done()) + " collective" +
             (c.collectives_done() == 1 ? "" : "s");
    case DeviceState::kRaised: return c.raised() ? c.raised()->text() : c.end_detail();
    default: return c.end_detail();
  }
}

SourceLoc status_loc(const DeviceContext& c) {
  switch (c.state()) {
    case DeviceState::kWaitingCollective: return c.waiting()->sig->loc;
    case DeviceState::kAtBreakpoint: return c.breakpoint_loc();
    case DeviceState::kWaitingChildren: return c.current_loc;
    default: return c.end_loc();
  }
}

// Where a member that never arrived stands, in a few words.
std::string whereabouts(const DeviceContext& c) {
  std::string loc = status_loc(c).valid() ? " (" + status_loc(c).to_string() + ")" : "";
  switch (c.state()) {
    case DeviceState::kFinished: return "returned after " + std::to_string(c.collectives_done()) + " collective" +
                                        (c.collectives_done() == 1 ? "" : "s");
    case DeviceState::kWaitingCollective: return "waits at " + c.waiting()->sig->op_and_axes() + loc;
    case DeviceState::kAtBreakpoint: return "is at a breakpoint" + loc;
    case DeviceState::kWaitingChildren: return "waits for its nested pmap" + loc;
    case DeviceState::kRaised: return c.raised() ? c.raised()->text() : c.end_detail();
    default: return std::string(device_state_name(c.state()));
  }
}

bool same_group(const DeviceContext& member, const DeviceContext& other, const Communicator& comm) {
  if (member.env.size() != other.env.size()) return false;
  for (std::size_t i = 0; i < member.env.size(); ++i) {
    if (member.env[i].name != other.env[i].name || member.env[i].size != other.env[i].size) return false;
    bool reduced = std::find(comm.reduced.begin(), comm.reduced.end(), static_cast<int>(i)) != comm.reduced.end();
    if (!reduced && member.env[i].index != other.env[i].index) return false;
  }
  return true;
}

// Devices of the same level as `ctx` (same bound axes): the ones whose
// sequences should agree.
std::vector<DeviceContext*> peers_of(const DeviceContext& ctx,
                                     const std::vector<std::unique_ptr<DeviceContext>>& contexts) {
  std::vector<DeviceContext*> out;
  for (const auto& c : contexts) {
    if (c->env.size() != ctx.env.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < ctx.env.size() && same; ++i) same = c->env[i].name == ctx.env[i].name;
    if (same) out.push_back(c.get());
  }
  return out;
}

template <class Key>
std::vector<std::pair<Key, std::vector<int>>> group_by(const std::vector<std::pair<Key, int>>& items) {
  std::vector<std::pair<Key, std::vector<int>>> groups;
  for (const auto& item : items) {
    const Key& key = item.first;
    int id = item.second;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {id}});
    } else {
      it->second.push_back(id);
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  return groups;
}

}  // namespace

std::vector<DeviceStatus> describe_devices(const std::vector<std::unique_ptr<DeviceContext>>& contexts) {
  // A context that ran a nested pmap (an outer level of nested pmaps, or of
  // a shard_map's mesh) is a level, not a device of its own: it is named by
  // its coordinates ("outer data=0"), so its row is not read as the device
  // that holds the same id among the inner ones.
  std::set<const DeviceContext*> parents;
  for (const auto& c : contexts) {
    if (c->parent != nullptr) parents.insert(c->parent);
  }
  std::vector<DeviceStatus> out;
  for (const auto& c : contexts) {
    DeviceStatus s;
    s.device = c->device;
    s.label = c->label;
    if (parents.count(c.get()) != 0 && !c->env.empty()) {
      s.label = "outer";
      for (std::size_t i = 0; i < c->env.size(); ++i) {
        s.label += (i ? ", " : " ") + c->env[i].name + "=" + std::to_string(c->env[i].index);
      }
    }
    s.state = std::string(device_state_name(c->state()));
    s.detail = status_detail(*c);
    s.loc = status_loc(*c);
    s.collectives_done = c->collectives_done();
    for (const auto& e : c->recent()) s.recent.push_back(e.render());
    out.push_back(std::move(s));
  }
  return out;
}

std::string describe_outcome(const std::string& what, std::int64_t outcome) {
  if (what == "lax.cond") return outcome ? "took the true branch" : "took the false branch";
  if (what == "lax.while_loop" || what == "while") return outcome ? "continued" : "exited";
  if (what == "lax.fori_loop" || what == "for") {
    return "ran " + std::to_string(outcome) + " iteration" + (outcome == 1 ? "" : "s");
  }
  if (what == "if") return outcome ? "was true" : "was false";
  if (what == "lax.switch") return "took branch " + std::to_string(outcome);
  return "gave " + std::to_string(outcome);
}

Divergence find_divergence(const std::vector<DeviceContext*>& devices) {
  Divergence d;
  if (devices.size() < 2) return d;

  // Collectives: the first index where the devices' entries differ.
  std::int64_t lo = 0, common = INT64_MAX, most = 0;
  for (auto* c : devices) {
    std::int64_t retained = std::min(c->history_size(), c->history_capacity());
    lo = std::max(lo, c->history_size() - retained);
    common = std::min(common, c->history_size());
    most = std::max(most, c->history_size());
  }
  std::int64_t at = -1;
  for (std::int64_t n = lo; n < common && at < 0; ++n) {
    const CollectiveSite* ref = devices[0]->history_at(n);
    for (auto* c : devices) {
      if (!(*c->history_at(n) == *ref)) {
        at = n;
        break;
      }
    }
  }
  if (at < 0 && common < most) at = common;
  if (at >= 0) {
    std::vector<std::pair<std::string, int>> items;
    for (auto* c : devices) {
      const CollectiveSite* e = c->history_at(at);
      std::string what = e ? e->describe()
                       : c->history_size() > at ? "(no longer retained)"
                                                : "no collective #" + std::to_string(at) + ": " + whereabouts(*c);
      items.push_back({what, c->device});
    }
    std::string summary = "#" + std::to_string(at) + ": ";
    bool first = true;
    for (const auto& [what, ids] : group_by(items)) {
      if (!first) summary += "; ";
      first = false;
      summary += format_devices(ids) + " " + what;
    }
    d.collective_index = at;
    d.collective_summary = summary;
  }

  std::vector<std::pair<const DecisionLog*, int>> logs;
  for (auto* c : devices) logs.push_back({&c->decisions, c->device});
  find_decision_divergence(d, logs, "device", "devices");
  return d;
}

void find_decision_divergence(Divergence& d, const std::vector<std::pair<const DecisionLog*, int>>& logs,
                              std::string_view one, std::string_view many) {
  // The first position where some log decided differently.
  std::optional<std::uint64_t> pos;
  for (std::size_t i = 1; i < logs.size(); ++i) {
    auto p = DecisionLog::first_difference(*logs[0].first, *logs[i].first);
    if (p && (!pos || *p < *pos)) pos = p;
  }
  if (!pos) return;
  std::vector<std::pair<std::string, int>> items;
  Decision sample;
  for (const auto& [log, id] : logs) {
    auto dec = log->at(*pos);
    if (dec && !sample.loc.valid()) sample = *dec;
    items.push_back({dec ? describe_outcome(dec->what, dec->outcome) : "made no such decision", id});
  }
  std::uint64_t occurrence = logs[0].first->occurrences_before(*pos, sample.loc);
  std::string summary = sample.what + " at " + sample.loc.to_string();
  if (occurrence > 0) summary += " (evaluation #" + std::to_string(occurrence + 1) + ")";
  summary += ":";
  bool first = true;
  for (const auto& [what, ids] : group_by(items)) {
    summary += first ? " " : "; ";
    first = false;
    summary += what + " on " + format_ids(ids, one, many);
  }
  d.decision_loc = sample.loc;
  d.decision_summary = summary;
}

namespace {

void describe_rendezvous(const Communicator& comm, const std::vector<std::unique_ptr<DeviceContext>>& contexts,
                         std::vector<int>& arrived, std::vector<const DeviceContext*>& missing) {
  const DeviceContext* any = nullptr;
  for (Arrival* a : comm.slots) {
    if (!a) continue;
    arrived.push_back(a->ctx->device);
    any = a->ctx;
  }
  if (any == nullptr) return;
  for (const auto& c : contexts) {
    if (!same_group(*any, *c, comm)) continue;
    bool here = std::any_of(comm.slots.begin(), comm.slots.end(), [&](Arrival* a) { return a && a->ctx == c.get(); });
    if (!here) missing.push_back(c.get());
  }
}

std::string mismatch_hint(const std::string& field) {
  if (field == "op") {
    return "every device must call the same collective at the same point of the program; a condition that "
           "differs across devices (lax.cond on lax.axis_index or on device data) makes them call different ones";
  }
  if (field == "axis") {
    return "all devices must name the same axes, in the same order, for the same collective";
  }
  if (field == "dtype") {
    return "the operands of a collective must have the same dtype on every device; look for a branch or an input "
           "that promotes the dtype on some devices only (e.g. int32 vs float32 data)";
  }
  if (field == "shape" || field == "operand count") {
    return "the operands of a collective must have the same shape on every device; look for uneven per-device "
           "data or a device-dependent slice or reshape before the collective";
  }
  if (field == "parameters") {
    return "pass the same parameters (axis, tiled, perm, axis_index_groups) on every device";
  }
  return "the devices reached this collective from different calls; in JAX each call site is its own "
         "collective, so a device-dependent branch makes them diverge: hoist the collective out of the branch";
}

}  // namespace

namespace {

Report mismatch_report(const std::vector<Arrival*>& arrivals, const std::vector<const DeviceContext*>& missing,
                       const std::vector<std::unique_ptr<DeviceContext>>* contexts, const std::string& repro) {
  // Group members by signature, most common first.
  std::vector<std::pair<const CollectiveSignature*, int>> brought;
  for (Arrival* a : arrivals) brought.emplace_back(a->sig, a->ctx->device);
  SignatureGroups groups = group_signatures(brought);
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  const CollectiveSignature& ref = *groups[0].first;
  std::string field = ref.first_difference(*groups[1].first);
  auto what = [&](const CollectiveSignature& s) {
    if (field == "op") return std::string(collective_name(s.kind));
    if (field == "axis") return s.axes.text();
    if (field == "dtype" || field == "shape" || field == "operand count") return s.operand_types();
    if (field == "parameters") return s.params();
    return s.loc.to_string();
  };
  std::int64_t seq = arrivals[0]->seq;
  Report r;
  r.kind = "CollectiveMismatch";
  std::string headline = "collective mismatch at " + ref.op_and_axes() + " (collective #" + std::to_string(seq) +
                         "): devices disagree on the " + field + ":";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const bool one = groups[i].second.size() == 1;
    headline += (i ? "; " : " ") + format_devices(groups[i].second) + " " +
                (field == "op" ? (one ? "calls " : "call ") : (one ? "brings " : "bring ")) + what(*groups[i].first);
  }
  r.message = headline;
  r.where = ref.loc;
  r.op = std::string(collective_name(ref.kind));
  r.axis = ref.axes.text();
  r.hint = mismatch_hint(field);
  r.table = signature_table(groups, "device", "devices");
  for (const DeviceContext* m : missing) {
    r.details.push_back(m->label + " has not arrived: it " + whereabouts(*m));
  }
  std::vector<DeviceContext*> members;
  for (Arrival* a : arrivals) members.push_back(a->ctx);
  for (const DeviceContext* m : missing) members.push_back(const_cast<DeviceContext*>(m));
  std::sort(members.begin(), members.end(), [](auto* a, auto* b) { return a->uid < b->uid; });
  r.divergence = find_divergence(members);
  lead_hint_with_decision(r);
  if (contexts) r.devices = describe_devices(*contexts);
  r.repro = repro;
  return r;
}

}  // namespace

Report build_mismatch_report(const Communicator& comm, const std::string& repro) {
  std::vector<Arrival*> arrivals;
  for (Arrival* a : comm.slots) {
    if (a) arrivals.push_back(a);
  }
  return mismatch_report(arrivals, {}, nullptr, repro);
}

Report build_deadlock_report(const std::vector<std::unique_ptr<DeviceContext>>& contexts,
                             const std::vector<const Communicator*>& pending, const std::string& repro) {
  // The rendezvous most devices wait at leads the report.
  std::vector<const Communicator*> comms = pending;
  std::stable_sort(comms.begin(), comms.end(), [](const Communicator* a, const Communicator* b) {
    if (a->arrived != b->arrived) return a->arrived > b->arrived;
    return a->key < b->key;
  });

  for (const Communicator* comm : comms) {
    if (!comm->mismatch) continue;
    std::vector<int> arrived;
    std::vector<const DeviceContext*> missing;
    describe_rendezvous(*comm, contexts, arrived, missing);
    std::vector<Arrival*> arrivals;
    for (Arrival* a : comm->slots) {
      if (a) arrivals.push_back(a);
    }
    return mismatch_report(arrivals, missing, &contexts, repro);
  }

  Report r;
  r.kind = "Deadlock";
  r.repro = repro;
  r.devices = describe_devices(contexts);
  int live = 0;
  for (const auto& c : contexts) {
    if (c->state() == DeviceState::kWaitingCollective || c->state() == DeviceState::kWaitingChildren) ++live;
  }
  bool any_finished = false, other_collective = false;
  std::vector<DeviceContext*> peers;
  for (std::size_t k = 0; k < comms.size(); ++k) {
    const Communicator& comm = *comms[k];
    std::vector<int> arrived;
    std::vector<const DeviceContext*> missing;
    describe_rendezvous(comm, contexts, arrived, missing);
    const CollectiveSignature& sig = *comm.first->sig;
    // A lone device is named with its coordinates; groups by id.
    std::string who = arrived.size() == 1 ? comm.first->ctx->label : format_devices(arrived);
    std::string line = who + " wait" + (arrived.size() == 1 ? "s" : "") + " at " + sig.op_and_axes() + " #" +
                       std::to_string(comm.first->seq) + " (" + sig.loc.to_string() + ")";
    std::string missing_text;
    for (const DeviceContext* m : missing) {
      missing_text += (missing_text.empty() ? "" : "; ") + m->label + " " + whereabouts(*m);
      any_finished |= m->state() == DeviceState::kFinished;
      other_collective |= m->state() == DeviceState::kWaitingCollective;
    }
    if (!missing_text.empty()) line += " but " + missing_text;
    if (k == 0) {
      r.message = "deadlock: " + line;
      r.where = sig.loc;
      r.op = std::string(collective_name(sig.kind));
      r.axis = sig.axes.text();
      peers = peers_of(*comm.first->ctx, contexts);
    }
    const std::size_t group = comm.slots.size();  // comm.size: the members in this process
    r.details.push_back(sig.op_and_axes() + " at " + sig.loc.to_string() + " needs " + std::to_string(group) +
                        " devices" +
                        (static_cast<int>(group) != comm.size ? " (" + std::to_string(comm.size) + " in this process)"
                                                              : std::string()) +
                        "; " + std::to_string(comm.arrived) + " arrived (" + format_devices(arrived) + ")");
  }
  if (comms.empty()) {
    r.message = "deadlock: every live device waits and nothing can wake them";
  }
  r.details.insert(r.details.begin(),
                   (live == 1 ? std::string("the only live device is blocked and its collective can never complete")
                              : "all " + std::to_string(live) +
                                    " live devices are blocked and no collective can complete") +
                       " (detected exactly: no timeout involved)");
  r.divergence = find_divergence(peers);
  std::string hint;
  if (any_finished) {
    hint = "A device returned without reaching the collective the others wait at. In SPMD every device must "
           "run the same collectives in the same order; a collective inside a condition that differs across "
           "devices (lax.cond on lax.axis_index or on device data) is skipped by some of them. Move the "
           "collective out of the condition, or make the condition the same on every device";
  }
  if (other_collective) {
    hint += std::string(hint.empty() ? "" : ". ") +
            "Devices wait at different collectives; every device must issue the same collectives in the same "
            "order (check conditions and loop trip counts that depend on the device)";
  }
  if (hint.empty()) hint = "Every device must reach each collective the others wait at";
  r.hint = hint;
  lead_hint_with_decision(r);
  return r;
}

void lead_hint_with_decision(Report& r) {
  if (!r.divergence.decision_loc.valid()) return;
  std::string rest = r.hint;
  if (!rest.empty()) rest[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
  r.hint = "The first differing decision was " + r.divergence.decision_summary + "." + (rest.empty() ? "" : " " + rest);
}

DeviceFailure attribute_failure(std::exception_ptr escaped, const DeviceContext& ctx) {
  try {
    std::rethrow_exception(escaped);
  } catch (Error& e) {
    // Errors raised inside a device name it, and the line it stood at.
    Report& r = e.mutable_report();
    if (r.device < 0) r.device = ctx.device;
    if (!r.where.valid()) r.where = ctx.current_loc;
    return {escaped, {e.kind(), r.message, r.where}};
  } catch (const std::exception& e) {
    Report r = make_report("DeviceError", ctx.label + " raised an exception: " + e.what(),
                           "the exception escaped the function given to pmap; the other devices were stopped");
    r.device = ctx.device;
    r.where = ctx.current_loc;
    return {std::make_exception_ptr(DeviceError(std::move(r))), {"DeviceError", e.what(), ctx.current_loc}};
  } catch (...) {
    const std::string what = "an exception that is not a std::exception";
    Report r = make_report("DeviceError", ctx.label + " raised " + what,
                           "throw types derived from std::exception so their message can be reported");
    r.device = ctx.device;
    r.where = ctx.current_loc;
    return {std::make_exception_ptr(DeviceError(std::move(r))), {"DeviceError", what, ctx.current_loc}};
  }
}

void complete_run_report(std::exception_ptr error, const std::vector<std::unique_ptr<DeviceContext>>& contexts,
                         const std::string& repro) {
  try {
    std::rethrow_exception(error);
  } catch (Error& e) {
    if (e.report().devices.empty()) e.mutable_report().devices = describe_devices(contexts);
    if (e.report().repro.empty()) e.mutable_report().repro = repro;
  } catch (...) {
    // Not an spmd::Error: nothing to add to.
  }
}

}  // namespace spmd::detail
