#include "diagnose/hang_analysis.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "util/id_sets.h"
#include "spmd/error.h"

namespace spmd::detail {

namespace {

std::string ranks_text(std::vector<int> ids) { return format_ids(std::move(ids), "rank", "ranks"); }

std::string where_text(const SourceLoc& loc) { return loc.valid() ? loc.to_string() : ""; }

class Replay {
 public:
  explicit Replay(const Recording& rec) : rec_(rec) {
    const std::size_t n = rec.ranks.size();
    pos_.assign(n, 0);
    done_.resize(n);
    p2p_nth_.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      const auto& calls = rec.ranks[r].calls;
      done_[r].assign(calls.size(), false);
      p2p_nth_[r].assign(calls.size(), -1);
      std::map<std::tuple<int, int, bool>, int> p2p_count;
      for (std::size_t i = 0; i < calls.size(); ++i) {
        const CallRecord& c = calls[i];
        if (c.completed) done_[r][i] = true;
        if (c.p2p) {
          const int k = p2p_count[{c.comm, c.peer, c.sends}]++;
          p2p_index_[{static_cast<int>(r), c.comm, c.peer, c.sends, k}] = static_cast<int>(i);
          p2p_nth_[r][i] = k;
        } else {
          coll_index_[{static_cast<int>(r), c.comm, c.seq}] = static_cast<int>(i);
          auto [it, added] = min_seq_.emplace(std::pair{static_cast<int>(r), c.comm}, c.seq);
          if (!added) it->second = std::min(it->second, c.seq);
        }
      }
    }
  }

  // Runs to the fixpoint. Returns the first mismatch met, if any.
  struct Mismatch {
    int comm;
    std::int64_t seq;
    std::vector<std::pair<int, int>> calls;  // (rank, call index)
  };
  std::optional<Mismatch> run() {
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t r = 0; r < rec_.ranks.size(); ++r) {
        if (!rec_.ranks[r].present) continue;
        for (;;) {
          const auto& calls = rec_.ranks[r].calls;
          std::size_t& p = pos_[r];
          if (p >= calls.size()) break;
          const std::size_t end = group_end(static_cast<int>(r), p);
          bool all = true;
          for (std::size_t i = p; i < end; ++i) {
            if (done_[r][i]) continue;
            if (auto m = try_complete(static_cast<int>(r), static_cast<int>(i))) return m;
            all = all && done_[r][i];
          }
          if (!all) break;
          p = end;
          moved = true;
        }
      }
    }
    return std::nullopt;
  }

  std::size_t group_end(int r, std::size_t i) const {
    const auto& calls = rec_.ranks[static_cast<std::size_t>(r)].calls;
    const int g = calls[i].group;
    std::size_t end = i + 1;
    if (g < 0) return end;
    while (end < calls.size() && calls[end].group == g) ++end;
    return end;
  }

  // Where rank m stands with collective (comm, seq): its call index, or
  // -1 when it has not recorded it (and -2 when the call is older than the
  // rank's recorded window, so it is taken to have completed).
  int find_collective(int m, int comm, std::int64_t seq) const {
    auto it = coll_index_.find({m, comm, seq});
    if (it != coll_index_.end()) return it->second;
    auto lo = min_seq_.find({m, comm});
    if (lo != min_seq_.end() && lo->second > seq) return -2;
    return -1;
  }
  int find_peer_call(int r, int i) const {
    const CallRecord& c = rec_.ranks[static_cast<std::size_t>(r)].calls[static_cast<std::size_t>(i)];
    auto it = p2p_index_.find({c.peer, c.comm, r, !c.sends, p2p_nth_[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)]});
    return it == p2p_index_.end() ? -1 : it->second;
  }
  bool posted(int m, int j) const {
    if (!rec_.ranks[static_cast<std::size_t>(m)].present) return false;
    if (done_[static_cast<std::size_t>(m)][static_cast<std::size_t>(j)]) return true;
    const std::size_t p = pos_[static_cast<std::size_t>(m)];
    if (p >= rec_.ranks[static_cast<std::size_t>(m)].calls.size()) return true;
    return static_cast<std::size_t>(j) < group_end(m, p);
  }

  const std::vector<std::vector<bool>>& done() const { return done_; }
  std::size_t position(int r) const { return pos_[static_cast<std::size_t>(r)]; }

 private:
  std::optional<Mismatch> try_complete(int r, int i) {
    const CallRecord& c = rec_.ranks[static_cast<std::size_t>(r)].calls[static_cast<std::size_t>(i)];
    if (c.p2p) {
      const int j = find_peer_call(r, i);
      if (j < 0 || !posted(c.peer, j)) return std::nullopt;
      done_[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] = true;
      done_[static_cast<std::size_t>(c.peer)][static_cast<std::size_t>(j)] = true;
      const CallRecord& other = rec_.ranks[static_cast<std::size_t>(c.peer)].calls[static_cast<std::size_t>(j)];
      if (other.signature != c.signature) return Mismatch{c.comm, c.seq, {{r, i}, {c.peer, j}}};
      return std::nullopt;
    }
    const CommRecord& comm = rec_.comms[static_cast<std::size_t>(c.comm)];
    // Every member tries the collective as it reaches it; resume where the
    // last try stopped, as a member that posted stays posted: each
    // collective's members are scanned once in all (the scan from the first
    // member each time made 10,000 ranks take 9 s).
    std::size_t& cursor = member_cursor_[{c.comm, c.seq}];
    for (; cursor < comm.members.size(); ++cursor) {
      const int m = comm.members[cursor];
      if (m < 0) return std::nullopt;  // a member that never joined the communicator
      const int j = find_collective(m, c.comm, c.seq);
      if (j == -2) continue;
      if (j < 0 || !posted(m, j)) return std::nullopt;
    }
    std::vector<std::pair<int, int>> members;
    for (int m : comm.members) {
      const int j = find_collective(m, c.comm, c.seq);
      if (j != -2) members.emplace_back(m, j);
    }
    bool differ = false;
    for (auto [m, j] : members) {
      done_[static_cast<std::size_t>(m)][static_cast<std::size_t>(j)] = true;
      const CallRecord& o = rec_.ranks[static_cast<std::size_t>(m)].calls[static_cast<std::size_t>(j)];
      differ = differ || o.op != c.op || o.signature != c.signature;
    }
    if (differ) return Mismatch{c.comm, c.seq, members};
    return std::nullopt;
  }

  const Recording& rec_;
  std::vector<std::size_t> pos_;
  std::vector<std::vector<bool>> done_;
  std::map<std::tuple<int, int, std::int64_t>, int> coll_index_;     // (rank, comm, seq) -> call
  std::map<std::pair<int, int>, std::int64_t> min_seq_;              // (rank, comm) -> its oldest seq
  std::map<std::tuple<int, int, int, bool, int>, int> p2p_index_;    // (rank, comm, peer, sends, k) -> call
  std::vector<std::vector<int>> p2p_nth_;                            // [rank][call]: its k among like p2p calls
  std::map<std::pair<int, std::int64_t>, std::size_t> member_cursor_;  // (comm, seq) -> members known posted
};

// Rows of the mismatch table, one per group of ranks that brought the same.
ReportTable call_table(const Recording& rec, const std::vector<std::pair<int, int>>& calls) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  std::vector<const CallRecord*> first;
  for (auto [r, i] : calls) {
    const CallRecord& c = rec.ranks[static_cast<std::size_t>(r)].calls[static_cast<std::size_t>(i)];
    const std::string key = c.op + "|" + c.arguments();
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {r}});
      first.push_back(&c);
    } else {
      it->second.push_back(r);
    }
  }
  ReportTable t;
  t.columns = {"ranks", "call", "arguments", "where"};
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const CallRecord& c = *first[g];
    t.rows.push_back({ranks_text(groups[g].second), c.op, c.arguments(),
                      c.user_frame.valid() ? where_text(c.user_frame) : c.recorded_at});
  }
  return t;
}

std::string mismatch_hint(const CallRecord& a, const CallRecord& b) {
  if (a.op != b.op) {
    return "the ranks call collectives on this communicator in different orders: every rank must make the same "
           "sequence of calls (look for a collective under a rank-dependent condition, or one skipped by an early "
           "exit on some ranks)";
  }
  for (std::size_t k = 0; k < std::min(a.signature.size(), b.signature.size()); ++k) {
    if (a.signature[k] == b.signature[k]) continue;
    const std::string& s = a.signature[k];
    if (s.starts_with("count") || s.find("sizes") != std::string::npos) {
      return "the ranks pass tensors of different sizes: NCCL reads 'count' elements on every rank, so this hangs or "
             "corrupts memory (look for a per-rank batch or shard size, or padding on some ranks only)";
    }
    if (s.find("datatype") != std::string::npos || s.find("dtypes") != std::string::npos) {
      return "the ranks pass tensors of different dtypes (a cast or autocast on some ranks only?)";
    }
    if (s.starts_with("op")) return "the ranks reduce with different operations";
    if (s.starts_with("root")) return "the ranks name different roots";
  }
  return "every rank must bring the same arguments to a collective";
}

DeviceStatus status_of(const Recording& rec, const Replay& replay, int r) {
  const RankRecord& rank = rec.ranks[static_cast<std::size_t>(r)];
  DeviceStatus s;
  s.device = r;
  s.label = rank.label;
  const auto& done = replay.done()[static_cast<std::size_t>(r)];
  s.collectives_done = std::count(done.begin(), done.end(), true);
  const std::size_t p = replay.position(r);
  for (std::size_t k = p > 3 ? p - 3 : 0; k < std::min(p, rank.calls.size()); ++k) {
    s.recent.push_back(rank.calls[k].label + (rank.calls[k].state.empty() ? "" : " [" + rank.calls[k].state + "]"));
  }
  if (!rank.present) {
    s.state = "absent";
    s.detail = rec.source_kind == "flight-recorder dump" ? "no dump of this rank" : "no log lines of this rank";
    return s;
  }
  if (p < rank.calls.size()) {
    const CallRecord& c = rank.calls[p];
    s.state = "waiting";
    s.detail = c.label + (c.arguments().empty() ? "" : " (" + c.arguments() + ")") +
               (c.state.empty() ? "" : " [" + c.state + "]");
    s.loc = c.user_frame.valid() ? c.user_frame : c.at;
    return s;
  }
  s.state = "finished";
  s.detail = rank.calls.empty() ? "recorded no calls" : "completed every recorded call; the last: " + rank.calls.back().label;
  if (!rank.last_words.empty()) s.detail += "; then: " + rank.last_words;
  s.loc = rank.last_line;
  return s;
}

// The ranks that have not posted the call rank r is blocked at.
std::vector<int> missing_members(const Recording& rec, const Replay& replay, int r) {
  const std::size_t i = replay.position(r);
  const CallRecord& c = rec.ranks[static_cast<std::size_t>(r)].calls[i];
  std::vector<int> missing;
  if (c.p2p) {
    const int j = replay.find_peer_call(r, static_cast<int>(i));
    if (j < 0 || !replay.posted(c.peer, j)) missing.push_back(c.peer);
    return missing;
  }
  for (int m : rec.comms[static_cast<std::size_t>(c.comm)].members) {
    if (m < 0) continue;
    const int j = replay.find_collective(m, c.comm, c.seq);
    if (j == -2 || (j >= 0 && replay.posted(m, j))) continue;
    missing.push_back(m);
  }
  return missing;
}

// What rank m was doing instead of joining `wanted`, which `waiting` wait at.
std::string instead(const Recording& rec, const Replay& replay, int m, const CallRecord& wanted,
                    const std::vector<int>& waiting) {
  const RankRecord& rank = rec.ranks[static_cast<std::size_t>(m)];
  const std::string who = rank.label;
  if (!rank.present) {
    return who + (rec.source_kind == "flight-recorder dump" ? " left no dump (its process died before it could "
                                                              "write one, or the file was not given)"
                                                            : " never appears in the logs");
  }
  const std::size_t p = replay.position(m);
  if (p < rank.calls.size()) {
    const CallRecord& c = rank.calls[p];
    const int w = waiting.front();
    const bool recorded = wanted.p2p ? replay.find_peer_call(w, static_cast<int>(replay.position(w))) >= 0
                                     : replay.find_collective(m, wanted.comm, wanted.seq) >= 0;
    std::string s = who + (recorded ? "" : " has no such call in its record: it") + " waits at " + c.label +
                    (c.user_frame.valid() ? " (" + where_text(c.user_frame) + ")" : "") + " [" + c.recorded_at + "]";
    std::vector<int> back;
    for (int b : missing_members(rec, replay, m)) {
      if (std::find(waiting.begin(), waiting.end(), b) != waiting.end()) back.push_back(b);
    }
    if (!back.empty()) {
      s += ", which waits for " + ranks_text(back) + " in turn" +
           (recorded ? ": the ranks make these calls in different orders" : "");
    }
    return s;
  }
  // Finished: what it last did on this communicator, and where its record ends.
  const CallRecord* last_here = nullptr;
  for (const CallRecord& c : rank.calls) {
    if (c.comm == wanted.comm) last_here = &c;
  }
  std::string s = who + (rec.source_kind == "flight-recorder dump" ? " completed every call it recorded"
                                                                     : "'s log stops");
  s += last_here ? " after " + last_here->label +
                       (last_here->user_frame.valid() ? " (" + where_text(last_here->user_frame) + ")" : "") + " [" +
                       last_here->recorded_at + "]"
                 : ", having made no call on this communicator";
  if (!rank.last_words.empty()) s += "; its last line: " + rank.last_words + " [" + where_text(rank.last_line) + "]";
  return s;
}

}  // namespace

HangVerdict analyse_recording(const Recording& rec, const std::string& repro) {
  HangVerdict v;
  for (const RankRecord& r : rec.ranks) v.calls += static_cast<std::int64_t>(r.calls.size());
  Replay replay(rec);
  std::optional<Replay::Mismatch> mismatch = replay.run();
  v.done = replay.done();
  for (const auto& d : v.done) v.completed += std::count(d.begin(), d.end(), true);
  const int n = static_cast<int>(rec.ranks.size());
  std::vector<DeviceStatus> statuses;
  for (int r = 0; r < n; ++r) statuses.push_back(status_of(rec, replay, r));
  std::vector<std::string> comm_lines;
  for (const CommRecord& c : rec.comms) {
    std::vector<int> members;
    for (int m : c.members) if (m >= 0) members.push_back(m);
    comm_lines.push_back(c.name + ": " + std::to_string(c.size) + " ranks, " + ranks_text(members) +
                         (static_cast<int>(members.size()) < c.size
                              ? " (" + std::to_string(c.size - static_cast<int>(members.size())) + " never finished set-up)"
                              : ""));
  }
  auto add_context = [&](Report& r) {
    r.details.push_back("read " + std::to_string(n) + " ranks' " + rec.source_kind + (n == 1 ? "" : "s") + ": " +
                        std::to_string(rec.comms.size()) + " communicator" + (rec.comms.size() == 1 ? "" : "s") +
                        ", " + std::to_string(v.calls) + " calls, " + std::to_string(v.completed) +
                        " of them completed in the replay");
    for (const std::string& l : comm_lines) r.details.push_back("  " + l);
    for (const std::string& l : rec.cannot_tell) r.details.push_back("the input cannot tell: " + l);
    r.devices = statuses;
    r.repro = repro;
  };

  if (mismatch) {
    const CommRecord& comm = rec.comms[static_cast<std::size_t>(mismatch->comm)];
    auto call = [&](std::pair<int, int> rc) -> const CallRecord& {
      return rec.ranks[static_cast<std::size_t>(rc.first)].calls[static_cast<std::size_t>(rc.second)];
    };
    ReportTable table = call_table(rec, mismatch->calls);
    const CallRecord& a = call(mismatch->calls.front());
    const CallRecord* b = &a;
    for (auto rc : mismatch->calls) {
      if (call(rc).op != a.op || call(rc).signature != a.signature) b = &call(rc);
    }
    std::string parts;
    for (const auto& row : table.rows) {
      parts += (parts.empty() ? "" : "; ") + row[0] + " called " + row[1] + (row[2].empty() ? "" : " (" + row[2] + ")");
    }
    Report r = make_report("CollectiveMismatch",
                           "collective mismatch on " + comm.name + " at #" + std::to_string(mismatch->seq) + ": " + parts,
                           mismatch_hint(a, *b));
    r.op = a.op;
    r.axis = comm.name;
    r.where = a.user_frame.valid() ? a.user_frame : a.at;
    r.table = std::move(table);
    r.divergence.collective_index = mismatch->seq;
    r.divergence.collective_summary = "#" + std::to_string(mismatch->seq) + " on " + comm.name + ": " + parts;
    add_context(r);
    v.report = std::move(r);
    return v;
  }

  // Who cannot move.
  std::vector<int> stuck;
  for (int r = 0; r < n; ++r) {
    if (rec.ranks[static_cast<std::size_t>(r)].present && replay.position(r) < rec.ranks[static_cast<std::size_t>(r)].calls.size()) {
      stuck.push_back(r);
    }
  }
  // Set-up that never finished: a communicator some ranks never joined
  // blocks all the others in ncclCommInitRank.
  std::optional<std::size_t> unfinished_setup;
  for (std::size_t c = 0; c < rec.comms.size(); ++c) {
    const auto& m = rec.comms[c].members;
    const bool open = std::find(m.begin(), m.end(), -1) != m.end() || !rec.comms[c].unfinished.empty();
    if (open && !unfinished_setup) unfinished_setup = c;
  }
  if (stuck.empty() && !unfinished_setup) return v;

  // The blocking call most ranks wait at (the first communicator and number
  // on a tie): where the ranks parted.
  std::map<std::tuple<int, std::int64_t, bool>, std::vector<int>> waiters;
  for (int r : stuck) {
    const CallRecord& c = rec.ranks[static_cast<std::size_t>(r)].calls[replay.position(r)];
    waiters[{c.comm, c.p2p ? -1 : c.seq, c.p2p}].push_back(r);
  }
  Report r;
  if (unfinished_setup) {
    const CommRecord& comm = rec.comms[*unfinished_setup];
    std::vector<int> joined;
    std::vector<int> missing_local;
    for (std::size_t k = 0; k < comm.members.size(); ++k) {
      const int m = comm.members[k];
      if (m < 0) missing_local.push_back(static_cast<int>(k));
      else if (std::find(comm.unfinished.begin(), comm.unfinished.end(), m) == comm.unfinished.end()) joined.push_back(m);
    }
    std::string missing;
    if (!comm.unfinished.empty()) missing = ranks_text(comm.unfinished) + " began (Init START) and never finished";
    if (!missing_local.empty()) {
      missing += (missing.empty() ? "" : ", and ") + format_ids(missing_local, "its rank", "its ranks") + " never began";
    }
    r = make_report("Deadlock",
                    "hang in set-up: " + ranks_text(joined) + " finished setting up " + comm.name + " (" +
                        std::to_string(comm.size) + " ranks) but " + missing,
                    "ncclCommInitRank returns only when every rank of the communicator has called it: find why the "
                    "others did not get through (an earlier crash or exception, a different world size, a rank that "
                    "took another branch, a network that does not connect: see their last lines below); or give "
                    "the logs that were left out");
    r.axis = comm.name;
  } else {
    // A call some member has no record of at all (it skipped it) explains
    // more than one a member is merely behind on (blocked before it): choose
    // those first, then the one most ranks wait at.
    auto skipped = [&](const std::vector<int>& waiting) {
      const int w = waiting.front();
      const std::size_t i = replay.position(w);
      const CallRecord& c = rec.ranks[static_cast<std::size_t>(w)].calls[i];
      if (c.p2p) return replay.find_peer_call(w, static_cast<int>(i)) < 0;
      for (int m : rec.comms[static_cast<std::size_t>(c.comm)].members) {
        if (m >= 0 && replay.find_collective(m, c.comm, c.seq) == -1) return true;
      }
      return false;
    };
    auto most = std::max_element(waiters.begin(), waiters.end(), [&](const auto& a, const auto& b) {
      return std::pair{skipped(a.second), a.second.size()} < std::pair{skipped(b.second), b.second.size()};
    });
    const std::vector<int>& waiting = most->second;
    const CallRecord& c = rec.ranks[static_cast<std::size_t>(waiting.front())].calls[replay.position(waiting.front())];
    const CommRecord& comm = rec.comms[static_cast<std::size_t>(c.comm)];
    const std::vector<int> absent = missing_members(rec, replay, waiting.front());
    std::vector<std::string> absent_lines;
    for (int m : absent) absent_lines.push_back(instead(rec, replay, m, c, waiting));
    const std::string call = c.op + " #" + std::to_string(c.seq) + " on " + comm.name;
    const std::string wait = waiting.size() == 1 ? " waits at " : " wait at ";
    std::string message = "hang: " + ranks_text(waiting) + wait + call + " (" + std::to_string(comm.size) + " ranks)";
    if (c.p2p) {
      message = "hang: " + ranks_text(waiting) + wait + c.op + (c.sends ? " to " : " from ") + "rank " +
                std::to_string(c.peer) + " on " + comm.name;
    }
    if (!absent.empty()) message += " but " + ranks_text(absent) + " never " + (absent.size() == 1 ? "joins" : "join");
    const SourceLoc where = c.user_frame.valid() ? c.user_frame : c.at;
    r = make_report("Deadlock", message,
                    absent.empty()
                        ? "every rank has posted the calls it waits on, in an order that cannot complete: the ranks "
                          "call their communicators in different orders"
                        : "find why " + ranks_text(absent) + " did not reach " + c.op +
                              (c.user_frame.valid() ? " at " + where_text(c.user_frame) : " #" + std::to_string(c.seq)) +
                              " like the others: a condition that depends on the rank or the data, an exception, or "
                              "a loop with a different trip count; the lines above say what each did instead");
    r.op = c.op;
    r.axis = comm.name;
    r.where = where;
    for (const std::string& l : absent_lines) r.details.push_back(l);
    std::string waiting_sig = c.arguments();
    r.divergence.collective_index = c.seq;
    r.divergence.collective_summary = "#" + std::to_string(c.seq) + " on " + comm.name + ": " + ranks_text(waiting) +
                                      " " + c.op + (waiting_sig.empty() ? "" : " (" + waiting_sig + ")") + "; " +
                                      (absent.empty() ? std::string("every member posted it") : ranks_text(absent) + " did not call it");
    r.details.push_back((stuck.size() == 1 ? std::string("the only rank with calls left is blocked")
                                            : "all " + std::to_string(stuck.size()) + " ranks with calls left are blocked") +
                        " and no call can complete (detected exactly from the recorded calls: no timeout involved)");
  }
  add_context(r);
  v.report = std::move(r);
  return v;
}

}  // namespace spmd::detail
