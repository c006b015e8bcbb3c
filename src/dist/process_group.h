#pragma once
// Processes as ranks: N processes (one per host, or several on one host) run
// the same program and meet through a FileStore. This is the control plane
// of a multi-process run, the part that needs no GPU:
//
// - share(): rank 0 publishes bytes every rank needs (NCCL's unique id for
//   ncclCommInitRank), the others wait for them;
// - check_collective(): before a collective that spans processes, every
//   member posts what it brought (the same signature the simulator's
//   rendezvous compares) and waits for the others. A difference is a
//   CollectiveMismatch naming each rank. A collective that can never
//   complete is a DeadlockError, decided exactly, never by a timeout: every
//   rank posts its state (running, waiting at the n-th collective of a group,
//   finished, raised) with a version number, and a rank declares a deadlock
//   only when no rank is running, no waiting group is complete, and reading
//   every state twice gave the same versions (so that picture held at one
//   instant, and nothing can change it any more);
// - a rank that raised stops the others with its error; a rank whose process
//   disappeared without a word (same host: its pid is gone) stops them with
//   a RankLost error instead of a hang.
//
// Keys in the store: "state.<rank>", "sig.<group>.<n>.<rank>", "share.<name>",
// "data.<group>.<n>.<rank>" (a collective's bytes, runs with local devices),
// "context.<rank>" (what the runtime posts for reports: its decisions).
// A rank removes its sig and data of collective n - 1 of a group once
// collective n of the group completed: every member has read them by then
// (it posted n after finishing n - 1), so the store holds a few files per
// group and rank however long the job runs.
// A store directory serves one job: reusing one is refused.

#include <chrono>
#include <cstdint>
#include <iostream>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dist/file_store.h"
#include "rendezvous/collective_signature.h"
#include "spmd/report.h"
#include "spmd/util/json.h"

namespace spmd::dist {

class ProcessGroup {
 public:
  /// Joins as `rank` of `world` (0 <= rank < world). Throws InvalidArgument
  /// for a bad rank or world, BackendError when the store already holds this
  /// rank's state (an earlier job's directory).
  ProcessGroup(FileStore store, int rank, int world);
  /// A rank that never said finish() or fail() is posted as raised.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  const FileStore& store() const { return store_; }

  /// Rank 0 calls `make` and publishes its result under `name`; every rank
  /// returns it. Throws when rank 0 ends, fails or disappears first.
  std::string share(std::string_view name, const std::function<std::string()>& make);

  /// The pre-flight check of this rank's next collective over `members`
  /// (ranks in group order; this rank among them). Returns once every member
  /// brought an equal signature; throws CollectiveMismatch, DeadlockError, or
  /// DeviceError (kind "RankFailed" / "RankLost") for another rank's end.
  void check_collective(const detail::CollectiveSignature& sig, const std::vector<int>& members);

  /// Moves bytes between `members` (ranks, this rank among them) once their
  /// collective passed check_collective(): posts `mine` as the n-th exchange
  /// of `group` (a key naming the members' group, the same on every member;
  /// n counts 0, 1, ... per group) and returns every member's bytes, in
  /// `members` order. Throws DeviceError (RankFailed / RankLost) when a
  /// member ends or vanishes before posting its part.
  std::vector<std::string> exchange(std::string_view group, std::int64_t n, std::string_view mine,
                                    const std::vector<int>& members);

  /// Called between polls while this rank waits for the others; it may throw
  /// to stop waiting (the runtime throws its Interrupted error on SIGINT).
  void set_poll_hook(std::function<void()> hook) { poll_hook_ = std::move(hook); }
  /// Where the one notice goes that a wait of `after` or longer gives when
  /// some ranks have not joined the store (default: stderr after 5 s).
  void set_notice(std::function<void(const std::string&)> sink, std::chrono::milliseconds after) {
    notice_ = std::move(sink);
    notice_after_ = after;
  }

  /// This rank's context for reports across processes (the runtime's
  /// encoding of its control-flow decisions): posted under "context.<rank>"
  /// when it changed. Post it before a wait the others may judge (a
  /// collective's check, the end of a run).
  void post_context(const std::string& context);
  /// Called on a deadlock or mismatch report this rank builds, with every
  /// rank's last posted context (ranks that posted none are left out), to
  /// add what the contexts tell (the first decision the ranks took apart).
  using ReportAnnotator = std::function<void(Report&, const std::vector<std::pair<int, std::string>>&)>;
  void set_report_annotator(ReportAnnotator annotator) { annotator_ = std::move(annotator); }

  /// This rank returned normally / raised `error`: posted for the others.
  void finish();
  void fail(std::string_view error);

  /// Whether this rank posted its end (finish, fail, or stopped by an error).
  bool ended() const { return ended_; }
  /// Collectives this rank entered so far.
  std::int64_t collectives_entered() const { return entered_; }

 private:
  struct Snapshot;

  void post_state(const char* state, Json fields = Json::object());
  Snapshot read_states() const;
  /// Throws when another rank ended in a way that stops this one (waiting at
  /// collective `my_n` of `my_group`, when this rank waits at one).
  void check_peers(const Snapshot& s, const std::string& my_group = {}, std::int64_t my_n = -1);
  void await_own_interrupt();
  /// Whether nothing posted in `s` can ever change (see the file comment).
  bool stuck(const Snapshot& s) const;
  [[noreturn]] void deadlock(const Snapshot& s, const std::string& group, std::int64_t n,
                             const std::vector<int>& members, const detail::CollectiveSignature& sig);
  [[noreturn]] void mismatch(const std::vector<detail::CollectiveSignature>& sigs, const std::vector<int>& members,
                             std::int64_t n);
  /// Posts "stopped": reason "deadlock" / "mismatch" (this rank found it) or
  /// "peer" (another rank ended the run).
  void stop(const char* reason, const std::string& detail);
  /// Between two polls of a wait that began at `since`: the poll hook, and
  /// the notice about ranks that have not joined.
  void between_polls(const Snapshot& s, std::chrono::steady_clock::time_point since);
  /// The annotator's additions to a report about to be thrown.
  void annotate(Report& r) const;

  FileStore store_;
  int rank_;
  int world_;
  std::string host_;
  std::int64_t version_ = 0;
  Json last_fields_ = Json::object();  // of the last posted state
  std::int64_t entered_ = 0;
  bool ended_ = false;
  std::map<std::string, std::int64_t> per_group_;  // collectives entered per group key
  std::function<void()> poll_hook_;
  std::function<void(const std::string&)> notice_ = [](const std::string& text) { std::cerr << text << std::endl; };
  std::chrono::milliseconds notice_after_{5000};
  bool notified_ = false;  // this wait gave its notice
  std::string posted_context_;
  ReportAnnotator annotator_;
};

/// The store key of a group: the same on every rank for the same member list.
std::string group_key(const std::vector<int>& members);

/// A signature as posted to the store, and back (the trace's field names).
Json signature_to_json(const detail::CollectiveSignature& sig);
detail::CollectiveSignature signature_from_json(const Json& j);

}  // namespace spmd::dist
