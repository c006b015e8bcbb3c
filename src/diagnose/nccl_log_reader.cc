#include "diagnose/nccl_log_reader.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>
#include <utility>

#include "diagnose/char_classes.h"
#include "spmd/error.h"

namespace spmd::detail {

namespace {

// The prefix NCCL's logger writes before every WARN line (debug.cc):
// "host:pid:tid [cudaDev] file.cc:123 (func) NCCL WARN msg" (INFO lines are
// read by parse_info_prefix). Anything before the host (a timestamp,
// "[default3]:" from torchrun, "0: " from srun) is not NCCL's and is skipped.
const std::regex& warn_pattern() {
  static const std::regex re(R"(([^\s:\[\]]+):(\d+):(\d+) \[(\d+)\] (?:\S+ (?:\(\S*\) )?)?NCCL WARN ?(.*)$)");
  return re;
}

// ncclEnqueueCheck's line (enqueue.cc; the same text from 2.18 to 2.30):
// "Op: opCount X sendbuff P recvbuff P count N datatype N op N root N comm P
// [nranks=N] stream P". RCCL (AMD's NCCL) appends fields of its own since
// ROCm 6.0 ("task T globalrank G"): fields after the stream are ignored.
// Parsed by hand: a log holds millions of them.
struct CallLine {
  std::string op, op_count, count, datatype, redop, root, comm;
};

std::optional<CallLine> parse_call(std::string_view msg) {
  while (!msg.empty() && (msg.back() == ' ' || msg.back() == '\t')) msg.remove_suffix(1);
  std::vector<std::string_view> t;
  constexpr std::size_t kMaxTokens = 40;  // NCCL's 20 and a few trailing fields
  for (std::size_t at = 0; at <= msg.size() && t.size() <= kMaxTokens;) {
    const std::size_t space = std::min(msg.find(' ', at), msg.size());
    t.push_back(msg.substr(at, space - at));
    at = space + 1;
  }
  static constexpr std::string_view kKeys[] = {"opCount", "sendbuff", "recvbuff", "count", "datatype",
                                               "op",      "root",     "comm"};
  if (t.size() < 20 || t.size() > kMaxTokens || t[0].size() < 2 || t[0].back() != ':' || t[18] != "stream") return std::nullopt;
  for (std::size_t k = 0; k < std::size(kKeys); ++k) {
    if (t[1 + 2 * k] != kKeys[k]) return std::nullopt;
  }
  const std::string_view op = t[0].substr(0, t[0].size() - 1);
  std::string_view root = t[14];
  if (!root.empty() && root[0] == '-') root.remove_prefix(1);
  const std::string_view nranks = t[17];
  if (!all_chars(op, is_word) || !all_chars(t[2], is_hex) || !all_chars(t[8], is_digit) || !all_chars(t[10], is_digit) ||
      !all_chars(t[12], is_digit) || !all_chars(root, is_digit) || !nranks.starts_with("[nranks=") || !nranks.ends_with("]") ||
      !all_chars(nranks.substr(8, nranks.size() - 9), is_digit) || t[16].empty() || t[19].empty()) {
    return std::nullopt;
  }
  return CallLine{std::string(op),    std::string(t[2]),  std::string(t[8]), std::string(t[10]),
                  std::string(t[12]), std::string(t[14]), std::string(t[16])};
}

// "host:pid:tid [dev] NCCL INFO msg" with any text in front: the host, pid
// and device of the last such prefix in the line, and the message after it.
struct InfoPrefix {
  std::string host, pid;
  int device = 0;
  std::string_view msg;
};

std::optional<InfoPrefix> parse_info_prefix(std::string_view line) {
  static constexpr std::string_view kTag = " NCCL INFO";
  const std::size_t tag = line.rfind(kTag);
  if (tag == std::string_view::npos) return std::nullopt;
  std::string_view msg = line.substr(tag + kTag.size());
  if (!msg.empty() && msg[0] == ' ') msg.remove_prefix(1);
  std::string_view before = line.substr(0, tag);  // "... host:pid:tid [dev]"
  if (before.empty() || before.back() != ']') return std::nullopt;
  const std::size_t open = before.rfind('[');
  if (open == std::string_view::npos || open < 1 || before[open - 1] != ' ') return std::nullopt;
  const std::string_view dev = before.substr(open + 1, before.size() - open - 2);
  if (!all_chars(dev, is_digit) || dev.size() > 6) return std::nullopt;
  before = before.substr(0, open - 1);  // "... host:pid:tid"
  std::size_t start = before.size();
  while (start > 0 && before[start - 1] != ' ' && before[start - 1] != '\t' && before[start - 1] != ']') --start;
  std::string_view token = before.substr(start);  // "[default3]:host:pid:tid" has lost its "[default3]"
  const std::size_t c2 = token.rfind(':');
  if (c2 == std::string_view::npos || c2 == 0) return std::nullopt;
  const std::size_t c1 = token.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos) return std::nullopt;
  const std::string_view pid = token.substr(c1 + 1, c2 - c1 - 1), tid = token.substr(c2 + 1);
  std::string_view host = token.substr(0, c1);
  if (const std::size_t colon = host.rfind(':'); colon != std::string_view::npos) host.remove_prefix(colon + 1);
  if (host.empty() || !all_chars(pid, is_digit) || !all_chars(tid, is_digit) || pid.size() > 9) return std::nullopt;
  return InfoPrefix{std::string(host), std::string(pid), std::stoi(std::string(dev)), msg};
}

// The end of communicator set-up (init.cc). 2.18-2.19: "comm P rank R nranks N
// cudaDev D [nvmlDev V] busId B commId 0xH - Init COMPLETE"; 2.21 and later
// name the function first ("ncclCommInitRank comm ..."), and a split
// communicator gives its parent, colour and key (with commId in 2.21, without
// it since 2.23; "splitCount"/"childCount" in 2.28+). Since 2.19 the same
// line with "- Init START" opens set-up: a rank with START and no COMPLETE is
// stuck in it. Before 2.18 the line had no commId. RCCL prints the same
// fields and then its own ("localSize S used U bytes", "on core C" since
// ROCm 6.2): whatever follows the fields read here, before " - Init", is
// ignored.
const std::regex& init_pattern() {
  static const std::regex re(
      R"(^(?:(\w+) )?comm (\S+) rank (\d+) nranks (\d+) cudaDev (\d+)(?: nvmlDev \d+)? busId ([0-9a-fA-F]+)(?: parent (\S+)(?: (?:splitCount|childCount) \d+)? color (-?\d+) key (-?\d+))?(?: commId 0x([0-9a-fA-F]+))?(?: \S+)*? - Init (COMPLETE|START)\s*$)");
  return re;
}

struct Device {
  std::string host, pid;
  int cuda_dev = 0;
  std::vector<CallRecord> calls;
  std::vector<std::string> comm_of_call;  // the communicator identity of each call
  std::vector<std::string> op_count_of_call;
  std::string last_words;
  SourceLoc last_line;
};

struct CommInstance {  // one process's handle on a communicator
  int device = -1;
  int rank = -1;
  int nranks = 0;
  std::string identity;
  std::int64_t next_seq = 0;
};

struct Communicator {
  std::string identity;
  std::string name;
  int size = 0;
  std::map<int, int> device_of_rank;
  std::set<int> completed_ranks;  // logged Init COMPLETE
  SourceLoc first_seen;
};

[[noreturn]] void bad_line(const std::string& file, int line, const std::string& text, const std::string& what,
                           const std::string& hint) {
  Report r = make_report("SyntaxError", file + ":" + std::to_string(line) + ": " + what, hint);
  r.where = SourceLoc{intern_path(file), static_cast<std::uint32_t>(line), 1};
  r.source_line = text.size() > 200 ? text.substr(0, 200) + "..." : text;
  throw SyntaxError(std::move(r));
}

// Far above any job run so far, far below what would exhaust memory.
constexpr int kMaxRanks = 1 << 18;

int to_int(const std::string& s) {
  // The patterns admit digits only; a number too large for an int is not
  // one NCCL prints.
  if (s.size() > 9) return -2;
  return std::stoi(s);
}

class Reader {
 public:
  Recording finish();
  void read(const LogFile& file);

 private:
  int device_for(const std::string& host, const std::string& pid, int dev) {
    const std::string key = host + ":" + pid + ":" + std::to_string(dev);
    auto [it, added] = device_index_.emplace(key, static_cast<int>(devices_.size()));
    if (added) {
      Device d;
      d.host = host;
      d.pid = pid;
      d.cuda_dev = dev;
      devices_.push_back(std::move(d));
    }
    return it->second;
  }
  void on_init(const std::smatch& m, const std::string& process, int device, const SourceLoc& at,
               const std::string& file, int line, const std::string& text);
  void read_orphan(const LogFile& file, const std::string& line, int line_no, bool cut_short);
  void on_call(const CallLine& m, const std::string& process, int device, const SourceLoc& at,
               const std::string& file, int line, const std::string& text);
  void refuse_repeats(const LogFile& file, const InfoPrefix& p, int line_no, const std::string& text);

  struct FirstSeen {
    std::size_t file;
    std::string path;
    int line;
  };
  // A process's call and set-up lines, by what they say (prefix onward):
  // where each was first read. The same line in a second file is the same
  // log given twice (a per-rank log beside the combined one).
  std::unordered_map<std::string, FirstSeen> first_seen_;
  std::size_t files_read_ = 0;
  std::map<std::string, int> device_index_;
  std::vector<Device> devices_;
  std::map<std::pair<std::string, std::string>, CommInstance> instances_;  // (process, pointer)
  std::map<std::string, Communicator> comms_;                              // by identity
  std::vector<std::string> comm_order_;
  std::vector<std::string> cannot_tell_;
  std::map<std::pair<std::string, int>, int> unnamed_count_;  // (process, nranks) -> communicators without commId
  bool unnamed_said_ = false;
  std::optional<Report> first_unreadable_;  // the first line skipped because it does not parse
  int init_lines_ = 0;
  int call_lines_ = 0;
};

void Reader::on_init(const std::smatch& m, const std::string& process, int device, const SourceLoc& at,
                     const std::string& file, int line, const std::string& text) {
  const std::string ptr = m[2];
  const int rank = to_int(m[3]);
  const int nranks = to_int(m[4]);
  const bool complete = std::string(m[11]) == "COMPLETE";
  if (nranks <= 0 || rank < 0 || rank >= nranks) {
    bad_line(file, line, text, "rank " + std::string(m[3]) + " of nranks " + std::string(m[4]) + " is not a rank",
             "this line does not look like NCCL's own; was the log edited?");
  }
  if (nranks > kMaxRanks) {
    // Each rank of a communicator gets a record, present in the logs or not:
    // a digit too many in an edited line must not ask for gigabytes.
    bad_line(file, line, text,
             "nranks " + std::string(m[4]) + " is more ranks than spmdsim reads (" + std::to_string(kMaxRanks) + ")",
             "the largest jobs run on about 100000 GPUs; was the log edited?");
  }
  auto known = instances_.find({process, ptr});
  std::string identity;
  if (known != instances_.end() && known->second.nranks == nranks) {
    identity = known->second.identity;  // the COMPLETE after its START
  } else if (m[10].matched) {
    identity = "0x" + std::string(m[10]);
  } else if (m[7].matched) {
    // A split without commId (2.23+): its ranks are the parent's that gave
    // the same colour.
    auto parent = instances_.find({process, std::string(m[7])});
    const std::string parent_identity = parent == instances_.end() ? "parent " + std::string(m[7]) + " of " + process
                                                                   : parent->second.identity;
    if (parent == instances_.end()) {
      cannot_tell_.push_back("the parent of the split communicator at " + file + ":" + std::to_string(line) +
                             " has no set-up line, so its ranks are matched within this process only");
    }
    identity = "split of " + parent_identity + " color " + std::string(m[8]);
  } else {
    // NCCL before 2.18 printed no commId: take each process's k-th
    // communicator of N ranks to be the same one, as processes that create
    // their communicators in one order do.
    const int k = unnamed_count_[{process, nranks}]++;
    identity = "communicator " + std::to_string(k) + " of " + std::to_string(nranks) + " ranks";
    if (!unnamed_said_) {
      cannot_tell_.push_back("the set-up lines carry no commId (NCCL before 2.18), so each process's k-th communicator "
                             "of N ranks is taken to be the same one");
      unnamed_said_ = true;
    }
  }
  if (auto seen = comms_.find(identity); seen != comms_.end() && seen->second.size != nranks) {
    bad_line(file, line, text,
             "communicator " + identity + " has nranks " + std::to_string(nranks) + " here but " +
                 std::to_string(seen->second.size) + " at " + seen->second.first_seen.to_string(),
             "give the logs of one job (two jobs may reuse a commId only by chance)");
  }
  if (known == instances_.end()) instances_[{process, ptr}] = CommInstance{device, rank, nranks, identity, 0};
  auto [it, added] = comms_.emplace(identity, Communicator{});
  Communicator& c = it->second;
  if (added) {
    c.identity = identity;
    c.size = nranks;
    c.first_seen = at;
    comm_order_.push_back(identity);
  }
  c.device_of_rank[rank] = device;
  if (complete) c.completed_ranks.insert(rank);
  ++init_lines_;
}

void Reader::on_call(const CallLine& m, const std::string& process, int device, const SourceLoc& at,
                     const std::string& file, int line, const std::string& text) {
  const std::string& ptr = m.comm;
  auto inst = instances_.find({process, ptr});
  if (inst == instances_.end()) {
    Report r = make_report("UsageError",
                           file + ":" + std::to_string(line) + ": " + m.op + " on communicator " + ptr +
                               " of process " + process + ", which no 'Init COMPLETE' line introduced",
                           "give each process's log from the start of the job: NCCL prints the set-up lines with "
                           "NCCL_DEBUG=INFO when NCCL_DEBUG_SUBSYS includes INIT (its default does)");
    r.where = at;
    r.source_line = text;
    throw InvalidArgument(std::move(r));
  }
  CommInstance& ci = inst->second;
  Device& d = devices_[static_cast<std::size_t>(device)];
  CallRecord c;
  c.op = m.op;
  c.seq = ci.next_seq++;
  c.p2p = c.op == "Send" || c.op == "Recv";
  c.sends = c.op == "Send";
  const int datatype = to_int(m.datatype);
  const int redop = to_int(m.redop);
  const int root = to_int(m.root);
  c.signature.push_back("count " + m.count);
  c.signature.push_back("datatype " + m.datatype + " (" + nccl_datatype_name(datatype) + ")");
  if (c.op == "AllReduce" || c.op == "Reduce" || c.op == "ReduceScatter") {
    c.signature.push_back("op " + m.redop + " (" + nccl_redop_name(redop) + ")");
  }
  if (c.op == "Broadcast" || c.op == "Reduce" || c.op == "Gather" || c.op == "Scatter") {
    c.signature.push_back("root " + m.root);
  }
  if (c.p2p) c.peer = root;  // ncclSend/ncclRecv log their peer as the root
  c.at = at;
  c.recorded_at = file + ":" + std::to_string(line);
  // Send/Recv between one ncclGroupStart/End share an opCount: NCCL posts
  // them together.
  if (c.p2p && !d.calls.empty()) {
    const CallRecord& prev = d.calls.back();
    if (prev.p2p && d.comm_of_call.back() == ci.identity && d.op_count_of_call.back() == m.op_count) {
      c.group = prev.group >= 0 ? prev.group : static_cast<int>(d.calls.size()) - 1;
      if (prev.group < 0) d.calls.back().group = c.group;
    }
  }
  d.calls.push_back(std::move(c));
  d.comm_of_call.push_back(ci.identity);
  d.op_count_of_call.push_back(m.op_count);
  ++call_lines_;
}

// A call line that lost its prefix to another process's write: its
// communicator pointer names its process when only one process has it.
void Reader::read_orphan(const LogFile& file, const std::string& line, int line_no, bool cut_short) {
  const std::string where = file.path + ":" + std::to_string(line_no);
  // The call starts at the word before ": opCount ".
  const std::size_t colon = line.find(": opCount ");
  std::size_t start = colon;
  while (start > 0 && is_word(line[start - 1])) --start;
  const std::optional<CallLine> m = parse_call(std::string_view(line).substr(start));
  if (!m) {
    if (!cut_short) cannot_tell_.push_back(where + ": a call line without its process prefix was skipped");
    return;
  }
  const CommInstance* owner = nullptr;
  std::string process;
  int owners = 0;
  for (const auto& [key, inst] : instances_) {
    if (key.second != m->comm) continue;
    owner = &inst;
    process = key.first;
    ++owners;
  }
  if (owners != 1) {
    cannot_tell_.push_back(where + ": a call line without its process prefix (interleaved output) was skipped: " +
                           (owners == 0 ? "no process" : "several processes") + " set up its communicator " + m->comm);
    return;
  }
  const SourceLoc at{intern_path(file.path), static_cast<std::uint32_t>(line_no), 0};
  on_call(*m, process, owner->device, at, file.path, line_no, line);
  cannot_tell_.push_back(where + ": a call line without its process prefix (interleaved output) was given to " +
                         process + ", the only process with its communicator");
}

void Reader::read(const LogFile& file) {
  ++files_read_;
  const std::string& text = file.text;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    const bool cut_short = end == std::string::npos;
    if (cut_short) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find("NCCL ") == std::string::npos) {
      if (line.find(": opCount ") != std::string::npos) read_orphan(file, line, line_no, cut_short);
      continue;
    }
    const SourceLoc at{intern_path(file.path), static_cast<std::uint32_t>(line_no), 0};
    if (line.find(" NCCL WARN") != std::string::npos) {  // rare: read with the pattern
      std::smatch w;
      if (std::regex_search(line, w, warn_pattern())) {
        Device& d = devices_[static_cast<std::size_t>(device_for(w[1], w[2], to_int(w[4])))];
        d.last_words = "NCCL WARN " + std::string(w[5]);
        d.last_line = at;
      }
      continue;
    }
    // Two processes writing at once can leave one's prefix in front of the
    // other's line ("h:1:1 [2] NCCL INFO h:2:2 [7] NCCL INFO Broadcast: ..."):
    // the last prefix owns the line.
    const std::optional<InfoPrefix> p = parse_info_prefix(line);
    if (!p) continue;
    const std::string process = p->host + ":" + p->pid;
    const int device = device_for(p->host, p->pid, p->device);
    Device& d = devices_[static_cast<std::size_t>(device)];
    const std::string msg(p->msg);
    // What a rank said last, unless it was a call: "Destroy COMPLETE" (it
    // finished), a WARN (it failed), a bootstrap line (it never got through
    // set-up).
    d.last_words = "NCCL INFO " + msg;
    d.last_line = at;
    try {
      std::smatch m;
      if (msg.find(": opCount ") != std::string::npos) {
        const std::optional<CallLine> call = parse_call(msg);
        if (!call) {
          bad_line(file.path, line_no, line, "a collective line that does not parse",
                   "NCCL prints 'Op: opCount N sendbuff P recvbuff P count N datatype N op N root N comm P "
                   "[nranks=N] stream P'; was the line cut or edited?");
        }
        refuse_repeats(file, *p, line_no, line);
        on_call(*call, process, device, at, file.path, line_no, line);
        d.last_words.clear();
        d.last_line = at;
      } else if (msg.find("Init COMPLETE") != std::string::npos || msg.find("Init START") != std::string::npos) {
        if (!std::regex_match(msg, m, init_pattern())) {
          bad_line(file.path, line_no, line, "a communicator set-up line that does not parse",
                   "NCCL prints '[ncclCommInitRank] comm P rank R nranks N cudaDev D ... - Init COMPLETE'; was the "
                   "line cut or edited?");
        }
        refuse_repeats(file, *p, line_no, line);
        on_init(m, process, device, at, file.path, line_no, line);
      }
    } catch (const SyntaxError& e) {
      // A process killed mid-write leaves its last line unfinished: that is
      // what a crash looks like, not a malformed log. Any other line that
      // does not parse (another NCCL build's format, an edit) is skipped and
      // said: one such line must not cost the diagnosis of a whole job.
      if (cut_short) {
        cannot_tell_.push_back(file.path + ":" + std::to_string(line_no) +
                               ": the last line is cut short (the process stopped while writing it) and was skipped");
      } else {
        cannot_tell_.push_back(e.report().message + ", so it was skipped (" + e.report().hint + ")");
        if (!first_unreadable_) first_unreadable_ = e.report();
      }
    }
  }
}

void Reader::refuse_repeats(const LogFile& file, const InfoPrefix& p, int line_no, const std::string& text) {
  std::string key = p.host + ":" + p.pid + " [" + std::to_string(p.device) + "] ";
  key += p.msg;
  auto [it, added] = first_seen_.try_emplace(std::move(key), FirstSeen{files_read_, file.path, line_no});
  if (added || it->second.file == files_read_) return;  // a line repeated inside one file is the log's own
  const FirstSeen& first = it->second;
  Report r = make_report(
      "UsageError",
      first.path == file.path
          ? "'" + file.path + "' is given twice (line " + std::to_string(line_no) + " was read already)"
          : "'" + file.path + "' repeats lines of '" + first.path + "': line " + std::to_string(line_no) +
                " is line " + std::to_string(first.line) + " there, the same process's NCCL line",
      "give each process's log once: either every rank's own log or the combined log of the job, not both (a "
      "repeated call would look like a call the other ranks never made)");
  r.where = SourceLoc{intern_path(file.path), static_cast<std::uint32_t>(line_no), 1};
  r.source_line = text.size() > 200 ? text.substr(0, 200) + "..." : text;
  throw InvalidArgument(std::move(r));
}

Recording Reader::finish() {
  // Only when nothing could be read is an unreadable line the answer.
  if (init_lines_ == 0 && call_lines_ == 0 && first_unreadable_) throw SyntaxError(std::move(*first_unreadable_));
  Recording rec;
  rec.source_kind = "NCCL INFO log";
  if (devices_.empty()) return rec;
  // Global ranks: ranks in the largest communicator (the world), then the
  // devices outside it in the order they appear.
  std::vector<int> order;
  std::set<int> placed;
  const Communicator* world = nullptr;
  for (const std::string& id : comm_order_) {
    const Communicator& c = comms_.at(id);
    if (world == nullptr || c.size > world->size) world = &c;
  }
  if (world != nullptr) {
    order.assign(static_cast<std::size_t>(world->size), -1);
    for (auto [rank, device] : world->device_of_rank) {
      order[static_cast<std::size_t>(rank)] = device;
      placed.insert(device);
    }
  }
  // A device that logged lines but never finished setting up the world
  // communicator is most likely its missing rank: it takes the first empty
  // place (its label says the rank is assumed); the rest follow.
  std::set<int> assumed;
  for (int dv = 0; dv < static_cast<int>(devices_.size()); ++dv) {
    if (placed.contains(dv)) continue;
    auto empty = std::find(order.begin(), order.end(), -1);
    if (empty != order.end() && world != nullptr && static_cast<int>(empty - order.begin()) < world->size) {
      *empty = dv;
      assumed.insert(dv);
    } else {
      order.push_back(dv);
    }
  }
  std::vector<int> global_of(devices_.size(), -1);
  for (std::size_t g = 0; g < order.size(); ++g) {
    if (order[g] >= 0) global_of[static_cast<std::size_t>(order[g])] = static_cast<int>(g);
  }
  std::map<std::string, int> comm_index;
  for (const std::string& id : comm_order_) {
    const Communicator& c = comms_.at(id);
    CommRecord cr;
    cr.name = id.starts_with("0x") ? "comm " + id : id;
    cr.size = c.size;
    cr.members.assign(static_cast<std::size_t>(c.size), -1);
    for (auto [rank, device] : c.device_of_rank) {
      cr.members[static_cast<std::size_t>(rank)] = global_of[static_cast<std::size_t>(device)];
      if (!c.completed_ranks.contains(rank)) cr.unfinished.push_back(global_of[static_cast<std::size_t>(device)]);
    }
    comm_index[id] = static_cast<int>(rec.comms.size());
    rec.comms.push_back(std::move(cr));
  }
  rec.ranks.resize(order.size());
  for (std::size_t g = 0; g < order.size(); ++g) {
    RankRecord& r = rec.ranks[g];
    r.rank = static_cast<int>(g);
    if (order[g] < 0) {
      r.present = false;
      r.label = "rank " + std::to_string(g);
      continue;
    }
    Device& d = devices_[static_cast<std::size_t>(order[g])];
    r.label = "rank " + std::to_string(g) + " (" + d.host + ":" + d.pid + ", cudaDev " + std::to_string(d.cuda_dev) +
              (assumed.contains(order[g]) ? "; assumed: it never finished set-up" : "") + ")";
    for (std::size_t k = 0; k < d.calls.size(); ++k) {
      CallRecord& c = d.calls[k];
      c.comm = comm_index.at(d.comm_of_call[k]);
      const CommRecord& cr = rec.comms[static_cast<std::size_t>(c.comm)];
      c.label = c.op + " #" + std::to_string(c.seq) + " on " + cr.name + " (opCount " + d.op_count_of_call[k] + ")";
      if (c.p2p && c.peer >= 0 && c.peer < cr.size) c.peer = cr.members[static_cast<std::size_t>(c.peer)];
      else if (c.p2p) c.peer = -1;
    }
    r.calls = std::move(d.calls);
    r.last_words = d.last_words;
    r.last_line = d.last_line;
  }
  if (call_lines_ == 0) {
    rec.cannot_tell.push_back(
        "the logs hold no collective calls, only communicator set-up: NCCL prints each call with "
        "NCCL_DEBUG_SUBSYS=INIT,COLL (its default is INIT,BOOTSTRAP,ENV), so only set-up can be checked");
  }
  if (init_lines_ == 0) rec.cannot_tell.push_back("the logs hold no 'Init COMPLETE' set-up lines");
  rec.cannot_tell.insert(rec.cannot_tell.end(), cannot_tell_.begin(), cannot_tell_.end());
  rec.cannot_tell.push_back(
      "NCCL logs a call when the host makes it, not when the GPU completes it: a rank may have logged calls "
      "queued behind the one that hangs, and a log that stops cannot say whether its process died or blocked "
      "outside NCCL");
  return rec;
}

}  // namespace

bool looks_like_nccl_log(std::string_view text) {
  // A line with NCCL's own prefix, not just the words (a README about NCCL
  // logs is not one).
  for (std::size_t at = text.find("NCCL "); at != std::string_view::npos; at = text.find("NCCL ", at + 5)) {
    const std::size_t begin = text.rfind('\n', at) == std::string_view::npos ? 0 : text.rfind('\n', at) + 1;
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string line(text.substr(begin, end - begin));
    if (parse_info_prefix(line) || std::regex_search(line, warn_pattern())) return true;
    at = end;
  }
  return false;
}

Recording read_nccl_logs(const std::vector<LogFile>& files) {
  Reader reader;
  for (const LogFile& f : files) reader.read(f);
  return reader.finish();
}

std::string nccl_datatype_name(int datatype) {
  static const char* const names[] = {"int8",    "uint8",   "int32",    "uint32",     "int64",      "uint64",
                                      "float16", "float32", "float64",  "bfloat16",   "float8e4m3", "float8e5m2"};
  if (datatype >= 0 && datatype < static_cast<int>(std::size(names))) return names[datatype];
  return "unknown datatype";
}

std::string nccl_redop_name(int op) {
  static const char* const names[] = {"sum", "prod", "max", "min", "avg"};
  if (op >= 0 && op < static_cast<int>(std::size(names))) return names[op];
  return "user-defined op";
}

}  // namespace spmd::detail
