#include "dist/process_group.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

#include "rendezvous/signature_groups.h"
#include "util/id_sets.h"
#include "spmd/error.h"
#include "rendezvous/signature_text.h"
#include "util/log.h"

namespace spmd::dist {

using detail::CollectiveSignature;

namespace {

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "?";
  return name;
}

// Polling the store: starts fast (a collective whose members arrive together
// costs little) and settles at a few milliseconds. How long a rank waits
// decides nothing: deadlocks are read from the posted states.
class Backoff {
 public:
  void pause() {
    std::this_thread::sleep_for(delay_);
    delay_ = std::min(delay_ * 2, std::chrono::microseconds(5000));
  }

 private:
  std::chrono::microseconds delay_{100};
};

std::string sig_key(const std::string& group, std::int64_t n, int rank) {
  return "sig." + group + "." + std::to_string(n) + "." + std::to_string(rank);
}

std::string data_key(std::string_view group, std::int64_t n, int rank) {
  return "data." + std::string(group) + "." + std::to_string(n) + "." + std::to_string(rank);
}


// "psum over 'i' #1 f32[4] (f.py:12:5)": where a waiting rank stands.
std::string where_it_waits(const Json& state) {
  SourceLoc loc = loc_from_json(&state);
  return state.string_at("at") + (loc.valid() ? " (" + loc.to_string() + ")" : "");
}

// Fills the entries of `got` (one per member) that `fetch(rank)` finds
// posted by now; true once every member's is there.
template <class T, class Fetch>
bool collect(std::vector<std::optional<T>>& got, const std::vector<int>& members, Fetch fetch) {
  bool all = true;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!got[i]) got[i] = fetch(members[i]);
    if (!got[i]) all = false;
  }
  return all;
}

bool terminal(const std::string& state) { return state == "finished" || state == "raised" || state == "stopped"; }

// A rank that declared a deadlock stopped where it waited; for everyone
// else's verdict it still waits there.
bool waits(const Json& state) {
  const std::string s = state.string_at("state");
  return s == "waiting" || (s == "stopped" && state.string_at("reason") == "deadlock");
}

}  // namespace

std::string group_key(const std::vector<int>& members) {
  // FNV-1a over the member list: a short file name however many members.
  std::uint64_t h = 1469598103934665603ull;
  for (int m : members) {
    for (int b = 0; b < 4; ++b) {
      h ^= static_cast<std::uint64_t>((static_cast<std::uint32_t>(m) >> (8 * b)) & 0xffu);
      h *= 1099511628211ull;
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return "g" + std::to_string(members.size()) + "-" + buf;
}

Json signature_to_json(const CollectiveSignature& sig) {
  Json j = Json::object();
  j.set("op", std::string(collective_name(sig.kind)));
  Json axes = Json::array();
  for (const auto& a : sig.axes.names()) axes.push(a);
  j.set("axes", std::move(axes));
  Json ops = Json::array();
  for (const auto& o : sig.operands) ops.push(abstract_type(o.dtype, o.shape));
  j.set("operands", std::move(ops));
  j.set("params", sig.params());
  if (sig.loc.valid()) {
    j.set("file", std::string(sig.loc.file));
    j.set("line", static_cast<std::int64_t>(sig.loc.line));
    j.set("column", static_cast<std::int64_t>(sig.loc.column));
  }
  return j;
}

CollectiveSignature signature_from_json(const Json& j) {
  auto broken = [&](const std::string& what) -> CollectiveSignature {
    Report r = make_report("StoreError", "unreadable signature in the store (" + what + "): " + j.dump(),
                           "every rank must run the same spmdsim version; do not edit the store directory");
    throw BackendError(std::move(r));
  };
  CollectiveSignature sig;
  auto op = parse_collective(j.string_at("op"));
  if (!op) return broken("op");
  sig.kind = *op;
  std::vector<std::string> axes;
  if (const Json* a = j.find("axes"); a != nullptr && a->is_array()) {
    for (const Json& name : a->as_array()) axes.push_back(name.is_string() ? name.as_string() : std::string());
  }
  sig.axes = detail::AxisNames::intern(axes);
  if (const Json* ops = j.find("operands"); ops != nullptr && ops->is_array()) {
    for (const Json& o : ops->as_array()) {
      detail::OperandType t;
      if (!o.is_string() || !detail::parse_operand_type(o.as_string(), t)) return broken("operand");
      sig.operands.push_back(std::move(t));
    }
  }
  if (!detail::parse_params(j.string_at("params"), sig)) return broken("params");
  sig.loc = loc_from_json(&j);
  return sig;
}

// --- states -------------------------------------------------------------------

// Every rank's posted state, as read once; a missing state means the rank
// has not joined yet (it may still arrive: never part of a deadlock).
struct ProcessGroup::Snapshot {
  std::vector<Json> states;  // null for a rank that has not posted

  const Json* of(int rank) const {
    const Json& s = states[static_cast<std::size_t>(rank)];
    return s.is_null() ? nullptr : &s;
  }
  std::string state(int rank) const { return of(rank) ? of(rank)->string_at("state") : "not started"; }
  std::int64_t version(int rank) const { return of(rank) ? of(rank)->int_at("v", -1) : -1; }
  bool same_versions(const Snapshot& other) const {
    for (std::size_t r = 0; r < states.size(); ++r) {
      if (version(static_cast<int>(r)) != other.version(static_cast<int>(r))) return false;
    }
    return true;
  }
};

ProcessGroup::ProcessGroup(FileStore store, int rank, int world)
    : store_(std::move(store)), rank_(rank), world_(world), host_(this_host()) {
  if (world < 1 || rank < 0 || rank >= world) {
    throw_invalid_argument("InvalidArgument",
                           "rank " + std::to_string(rank) + " of a world of " + std::to_string(world) +
                               " is out of range",
                           "ranks go from 0 to the number of processes - 1 (--process-id and --num-processes, or SPMD_PROCESS_ID and SPMD_NUM_PROCESSES)");
  }
  if (store_.get("state." + std::to_string(rank_))) {
    Report r = make_report("StoreError",
                           "the store " + store_.dir() + " already holds the state of rank " + std::to_string(rank_) +
                               " (an earlier job used this directory)",
                           "give every job a fresh store directory, e.g. SPMD_STORE=/shared/spmd-$JOB_ID");
    throw BackendError(std::move(r));
  }
  post_state("running");
}

ProcessGroup::~ProcessGroup() {
  if (ended_) return;
  try {
    fail("the process left the group without finishing (an exception escaped, or exit() was called)");
  } catch (...) {
    // Destructors do not throw; the others then see this rank's pid vanish.
  }
}

void ProcessGroup::post_state(const char* state, Json fields) {
  last_fields_ = fields;
  fields.set("v", ++version_);
  fields.set("state", state);
  fields.set("pid", static_cast<std::int64_t>(::getpid()));
  fields.set("host", host_);
  fields.set("entered", entered_);
  fields.set("world", world_);
  store_.set("state." + std::to_string(rank_), fields.dump());
}

ProcessGroup::Snapshot ProcessGroup::read_states() const {
  Snapshot s;
  s.states.resize(static_cast<std::size_t>(world_));
  for (int r = 0; r < world_; ++r) {
    if (auto text = store_.get("state." + std::to_string(r))) {
      Json state = Json::parse(*text, "state." + std::to_string(r));
      // Ranks started with different process counts would each wait for a
      // different set of peers: say so, instead of a deadlock between them.
      if (const std::int64_t world = state.int_at("world", world_); world != world_) {
        throw_invalid_argument(
            "UsageError",
            "the processes of this job disagree on their number: rank " + std::to_string(r) +
                " was started with --num-processes " + std::to_string(world) + ", this rank (" +
                std::to_string(rank_) + ") with " + std::to_string(world_),
            "start every process of a job with the same --num-processes (SPMD_NUM_PROCESSES), and give each job a "
            "fresh --store");
      }
      s.states[static_cast<std::size_t>(r)] = std::move(state);
    }
  }
  return s;
}

void ProcessGroup::finish() {
  if (ended_) return;
  ended_ = true;
  post_state("finished");
}

void ProcessGroup::fail(std::string_view error) {
  if (ended_) return;
  ended_ = true;
  Json f = Json::object();
  f.set("detail", std::string(error));
  post_state("raised", std::move(f));
}

void ProcessGroup::stop(const char* reason, const std::string& detail) {
  if (ended_) return;
  ended_ = true;
  // A rank stopped by a deadlock or a mismatch keeps the collective it waited
  // at: the others then reach the same verdict from the same picture.
  Json f = std::string(reason) == "peer" ? Json::object() : last_fields_;
  f.set("reason", reason);
  f.set("detail", detail);
  post_state("stopped", std::move(f));
}

// A peer stopped by a signal was most likely sent it by the launcher, which
// signals every rank: this rank's own signal is on its way (a loaded
// machine may deliver it a moment later). Wait for it a little, so this rank
// reports its own interruption rather than the peer's (the poll hook throws
// it); a signal sent to the peer alone still ends here as RankFailed.
void ProcessGroup::await_own_interrupt() {
  if (!poll_hook_) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until) {
    poll_hook_();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ProcessGroup::check_peers(const Snapshot& s, const std::string& my_group, std::int64_t my_n) {
  // This rank's own stop first: a SIGINT the launcher sent every rank also
  // ends the others, and a rank that got it must report its interruption,
  // not the peer's failure the same signal caused (exit 130, not 1).
  if (poll_hook_) poll_hook_();
  for (int r = 0; r < world_; ++r) {
    if (r == rank_ || s.of(r) == nullptr) continue;
    const std::string state = s.state(r);
    const Json& j = *s.of(r);
    const std::string detail = j.string_at("detail");
    const bool mismatch = state == "stopped" && j.string_at("reason") == "mismatch";
    // A member that found a mismatch at this very collective saw every
    // signature: this rank reads them next and reports the mismatch itself.
    if (mismatch && j.string_at("group") == my_group && j.int_at("n", -1) == my_n) continue;
    if (state == "raised" && detail.find("interrupted by SIG") != std::string::npos) await_own_interrupt();
    if (state == "raised" || mismatch) {
      stop("peer", "stopped because rank " + std::to_string(r) + " " + (state == "raised" ? "raised" : "stopped"));
      Report rep = make_report("RankFailed",
                               "rank " + std::to_string(r) + (state == "raised" ? " raised: " : " stopped the run: ") +
                                   detail,
                               "the run stops on every rank when one fails; rank " + std::to_string(r) +
                                   "'s own output has the full report");
      throw DeviceError(std::move(rep));
    }
    if (terminal(state)) continue;
    // Same host: a pid that is gone means the process died without a word.
    const std::int64_t pid = j.int_at("pid", 0);
    if (j.string_at("host") == host_ && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      // The state read above may predate its last post: a rank posts its end
      // before it exits, so read it again now that the process is gone.
      if (auto last = store_.get("state." + std::to_string(r))) {
        Json fresh = Json::parse(*last, "state." + std::to_string(r));
        if (fresh.int_at("v", -1) != j.int_at("v", -1)) continue;  // judged at the next poll
      }
      stop("peer", "stopped because rank " + std::to_string(r) + " disappeared");
      Report rep = make_report(
          "RankLost",
          "rank " + std::to_string(r) + " (pid " + std::to_string(pid) + " on " + host_ +
              ") exited without reporting, after entering " + std::to_string(j.int_at("entered", 0)) +
              " collective(s); it was " + state,
          "the process crashed or was killed (out of memory, a signal): look at its own output and exit status");
      throw DeviceError(std::move(rep));
    }
  }
}

bool ProcessGroup::stuck(const Snapshot& s) const {
  bool anyone_waiting = false;
  for (int r = 0; r < world_; ++r) {
    const Json* j = s.of(r);
    if (j == nullptr) return false;  // not joined yet: may still arrive anywhere
    if (!waits(*j)) {
      if (terminal(s.state(r))) continue;
      return false;  // running
    }
    anyone_waiting = true;
    const std::string group = j->string_at("group");
    if (group.rfind("share.", 0) == 0) {
      if (store_.get(group)) return false;  // published: the waiter will see it
      continue;
    }
    // Complete once every member posted its signature for (group, n): a
    // signature is never removed, so a member that already moved on still
    // counts, and one missing now was missing at the snapshot too.
    const std::int64_t n = j->int_at("n", -1);
    bool complete = true;
    if (const Json* members = j->find("members"); members != nullptr && members->is_array()) {
      for (const Json& m : members->as_array()) {
        if (!store_.get(sig_key(group, n, static_cast<int>(m.as_int())))) {
          complete = false;
          break;
        }
      }
    }
    if (complete) return false;
  }
  return anyone_waiting;
}

void ProcessGroup::between_polls(const Snapshot& s, std::chrono::steady_clock::time_point since) {
  if (poll_hook_) poll_hook_();
  // A rank that never joined may still come: no verdict, but say once who
  // is missing, so a forgotten launch is not a silent wait.
  if (notified_ || std::chrono::steady_clock::now() - since < notice_after_) return;
  std::vector<int> missing;
  for (int r = 0; r < world_; ++r) {
    if (s.of(r) == nullptr) missing.push_back(r);
  }
  if (missing.empty()) return;
  notified_ = true;
  notice_("spmd: rank " + std::to_string(rank_) + " is waiting for " +
          detail::format_ids(missing, "rank", "ranks") + ", which ha" + (missing.size() == 1 ? "s" : "ve") +
          " not joined the store " + store_.dir() + " yet: start " + (missing.size() == 1 ? "it" : "them") +
          " with --process-id and --store " + store_.dir() + " (Ctrl-C stops this process)");
}

// --- share ----------------------------------------------------------------------

std::string ProcessGroup::share(std::string_view name, const std::function<std::string()>& make) {
  const std::string key = "share." + std::string(name);
  if (rank_ == 0) {
    std::string value = make();
    store_.set(key, value);
    return value;
  }
  Json f = Json::object();
  f.set("group", key);
  f.set("at", "waiting for rank 0 to share " + std::string(name));
  post_state("waiting", std::move(f));
  Backoff backoff;
  const auto since = std::chrono::steady_clock::now();
  notified_ = false;
  while (true) {
    if (auto value = store_.get(key)) {
      post_state("running");
      return *value;
    }
    Snapshot s = read_states();
    check_peers(s);
    if (terminal(s.state(0))) {
      stop("peer", "stopped: rank 0 ended before sharing " + std::string(name));
      Report r = make_report("RankFailed",
                             "rank 0 " + s.state(0) + " before sharing \"" + std::string(name) + "\"",
                             "every rank must reach the same setup step; rank 0 left before it");
      throw DeviceError(std::move(r));
    }
    if (stuck(s)) {
      Snapshot again = read_states();
      if (again.same_versions(s) && stuck(again) && !store_.get(key)) {
        stop("deadlock", "deadlock: waiting for rank 0 to share " + std::string(name));
        Report r = make_report("Deadlock",
                               "deadlock across processes: rank " + std::to_string(rank_) +
                                   " waits for rank 0 to share \"" + std::string(name) + "\" but rank 0 waits at " +
                                   where_it_waits(*again.of(0)),
                               "rank 0 must reach the same setup step before any collective");
        throw DeadlockError(std::move(r));
      }
    }
    between_polls(s, since);
    backoff.pause();
  }
}

// --- data -------------------------------------------------------------------------

std::vector<std::string> ProcessGroup::exchange(std::string_view group, std::int64_t n, std::string_view mine,
                                                const std::vector<int>& members) {
  const std::string name = std::string(group) + "." + std::to_string(n);
  auto key_of = [&](int rank) { return data_key(group, n, rank); };
  store_.set(key_of(rank_), mine);
  std::vector<std::optional<std::string>> got(members.size());
  Backoff backoff;
  const auto since = std::chrono::steady_clock::now();
  notified_ = false;
  while (true) {
    if (collect(got, members, [&](int r) {
          return r == rank_ ? std::optional<std::string>(std::string(mine)) : store_.get(key_of(r));
        })) {
      break;
    }
    // Every member passed the same check: each posts its part next, unless
    // it failed or vanished (check_peers throws) or ended without it.
    Snapshot s = read_states();
    check_peers(s);
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (got[i] || !terminal(s.state(members[i])) || store_.get(key_of(members[i]))) continue;
      stop("peer", "stopped because rank " + std::to_string(members[i]) + " ended during exchange " + name);
      Report r = make_report("RankFailed",
                             "rank " + std::to_string(members[i]) + " " + s.state(members[i]) +
                                 " without sending its part of exchange " + name,
                             "a rank that passed a collective's check must move its data; look at rank " +
                                 std::to_string(members[i]) + "'s own output");
      throw DeviceError(std::move(r));
    }
    between_polls(s, since);
    backoff.pause();
  }
  if (n > 0) store_.remove(data_key(group, n - 1, rank_));  // every member read it (see the file comment)
  std::vector<std::string> out;
  out.reserve(members.size());
  for (auto& g : got) out.push_back(std::move(*g));
  return out;
}

// --- collectives ------------------------------------------------------------------

void ProcessGroup::check_collective(const CollectiveSignature& sig, const std::vector<int>& members) {
  SPMD_LOG(kDist, debug, "rank {} checks {} against {}", rank_, sig.op_and_axes(),
           detail::format_ids(members, "rank", "ranks"));
  if (ended_) {
    Report r = make_report("InvalidArgument", "rank " + std::to_string(rank_) + " already ended its part of the run",
                           "call check_collective only between joining and finish()/fail()");
    throw InvalidArgument(std::move(r));
  }
  if (std::find(members.begin(), members.end(), rank_) == members.end()) {
    throw_invalid_argument("InvalidArgument",
                           "rank " + std::to_string(rank_) + " checks a collective of " +
                               detail::format_ids(members, "rank", "ranks") + " without being a member",
                           "pass the ranks of this rank's own group");
  }
  for (int m : members) {
    if (m < 0 || m >= world_) {
      throw_invalid_argument("InvalidArgument", "member rank " + std::to_string(m) + " is outside 0.." +
                                                    std::to_string(world_ - 1),
                             "members are ranks of this process group");
    }
  }
  const std::string group = group_key(members);
  const std::int64_t n = per_group_[group]++;
  ++entered_;
  // The signature first, then the state that points at it: whoever sees this
  // rank waiting finds its signature already there.
  store_.set(sig_key(group, n, rank_), signature_to_json(sig).dump());
  Json f = Json::object();
  f.set("group", group);
  f.set("n", n);
  Json ms = Json::array();
  for (int m : members) ms.push(m);
  f.set("members", std::move(ms));
  f.set("at", sig.op_and_axes() + " #" + std::to_string(n) + (sig.operands.empty() ? "" : " " + sig.operand_types()));
  if (sig.loc.valid()) {
    f.set("file", std::string(sig.loc.file));
    f.set("line", static_cast<std::int64_t>(sig.loc.line));
    f.set("column", static_cast<std::int64_t>(sig.loc.column));
  }
  f.set("op_and_axes", sig.op_and_axes());
  post_state("waiting", std::move(f));

  std::vector<std::optional<CollectiveSignature>> got(members.size());
  Backoff backoff;
  const auto since = std::chrono::steady_clock::now();
  notified_ = false;
  while (true) {
    const bool all = collect(got, members, [&](int r) -> std::optional<CollectiveSignature> {
      auto text = store_.get(sig_key(group, n, r));
      if (!text) return std::nullopt;
      return signature_from_json(Json::parse(*text, sig_key(group, n, r)));
    });
    if (all) {
      std::vector<CollectiveSignature> sigs;
      for (auto& g : got) sigs.push_back(std::move(*g));
      for (const auto& other : sigs) {
        if (!(other == sig)) mismatch(sigs, members, n);
      }
      post_state("running");
      if (n > 0) store_.remove(sig_key(group, n - 1, rank_));  // every member read it (see the file comment)
      return;
    }
    Snapshot s = read_states();
    check_peers(s, group, n);
    if (stuck(s)) {
      Snapshot again = read_states();
      if (again.same_versions(s) && stuck(again)) deadlock(again, group, n, members, sig);
    }
    between_polls(s, since);
    backoff.pause();
  }
}

void ProcessGroup::mismatch(const std::vector<CollectiveSignature>& sigs, const std::vector<int>& members,
                            std::int64_t n) {
  SPMD_LOG(kDist, info, "rank {}: the processes' signatures differ at collective #{}: mismatch", rank_, n);
  // Every member reads the same signatures and reports the same table.
  const CollectiveSignature& ref = sigs[0];
  std::string field;
  for (const auto& s : sigs) {
    if (field.empty()) field = ref.first_difference(s);
  }
  std::vector<std::pair<const CollectiveSignature*, int>> brought;
  for (std::size_t i = 0; i < sigs.size(); ++i) brought.emplace_back(&sigs[i], members[i]);
  const detail::SignatureGroups groups = detail::group_signatures(brought);
  Report r = make_report("CollectiveMismatch",
                         "collective mismatch across processes at " + ref.op_and_axes() + " (collective #" +
                             std::to_string(n) + " of " + detail::format_ids(members, "rank", "ranks") + "): " +
                             field + " differs",
                         "every rank must call the same collectives in the same order with the same shapes and "
                         "dtypes; the table shows what each rank brought");
  r.op = std::string(collective_name(ref.kind));
  r.axis = ref.axes.text();
  r.where = ref.loc;
  r.table = detail::signature_table(groups, "rank", "ranks");
  annotate(r);
  stop("mismatch", r.message);
  throw CollectiveMismatch(std::move(r));
}

void ProcessGroup::post_context(const std::string& context) {
  if (context == posted_context_) return;
  store_.set("context." + std::to_string(rank_), context);
  posted_context_ = context;
}

void ProcessGroup::annotate(Report& r) const {
  if (!annotator_) return;
  std::vector<std::pair<int, std::string>> contexts;
  for (int rr = 0; rr < world_; ++rr) {
    if (auto c = store_.get("context." + std::to_string(rr))) contexts.emplace_back(rr, std::move(*c));
  }
  annotator_(r, contexts);
}

void ProcessGroup::deadlock(const Snapshot& s, const std::string& group, std::int64_t n,
                            const std::vector<int>& members, const CollectiveSignature& sig) {
  SPMD_LOG(kDist, info, "rank {}: every process is blocked at {} #{}: deadlock", rank_, sig.op_and_axes(), n);
  // Who waits here, and where the other members are instead.
  std::vector<int> here;
  std::vector<std::string> elsewhere;
  for (int m : members) {
    const Json* ms = s.of(m);
    if (ms && waits(*ms) && ms->string_at("group") == group && ms->int_at("n", -1) == n) {
      here.push_back(m);
      continue;
    }
    const std::string state = s.state(m);
    const std::int64_t entered = ms ? ms->int_at("entered", 0) : 0;
    std::string where;
    if (state == "finished") {
      where = "finished after " + std::to_string(entered) + " collective" + (entered == 1 ? "" : "s");
    } else if (state == "raised") {
      where = "raised: " + ms->string_at("detail");
    } else {
      where = "waits at " + where_it_waits(*ms);
    }
    elsewhere.push_back("rank " + std::to_string(m) + " " + where);
  }
  std::string others;
  for (std::size_t i = 0; i < elsewhere.size(); ++i) others += (i ? "; " : "") + elsewhere[i];
  Report r = make_report("Deadlock",
                         "deadlock across processes: " + detail::format_ids(here, "rank", "ranks") + " wait" +
                             (here.size() == 1 ? "s" : "") + " at " + sig.op_and_axes() + " #" + std::to_string(n) +
                             (sig.loc.valid() ? " (" + sig.loc.to_string() + ")" : "") + " but " + others,
                         "every rank must reach the same collectives in the same order: look for a branch or an "
                         "early return that differs between processes");
  r.op = std::string(collective_name(sig.kind));
  r.axis = sig.axes.text();
  r.where = sig.loc;
  for (int rr = 0; rr < world_; ++rr) {
    DeviceStatus d;
    d.device = rr;
    const Json* j = s.of(rr);
    d.label = "rank " + std::to_string(rr) + (j ? " (pid " + std::to_string(j->int_at("pid", 0)) + " on " +
                                                      j->string_at("host") + ")"
                                                : "");
    const bool waiting = j != nullptr && waits(*j);
    d.state = waiting ? "waiting" : s.state(rr);
    const std::int64_t entered = j ? j->int_at("entered", 0) : 0;
    d.collectives_done = waiting ? entered - 1 : entered;
    d.detail = waiting ? j->string_at("at") : j ? j->string_at("detail") : "";
    if (waiting) d.loc = loc_from_json(j);
    r.devices.push_back(std::move(d));
  }
  annotate(r);
  stop("deadlock", r.message);
  throw DeadlockError(std::move(r));
}

}  // namespace spmd::dist
