#include "diagnose/flight_recorder_reader.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "diagnose/char_classes.h"
#include "diagnose/pickle_reader.h"
#include "spmd/error.h"
#include "spmd/util/json.h"

namespace spmd::detail {

namespace {

constexpr int kOldestMinor = 2;   // collective_seq_id and p2p_seq_id since 2.2
constexpr int kNewestMinor = 10;  // PyTorch 2.10's FlightRecorder.hpp

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

[[noreturn]] void bad_dump(const std::string& path, const std::string& what, const std::string& hint) {
  throw SyntaxError(make_report("SyntaxError", path + ": invalid flight-recorder dump: " + what, hint));
}

[[noreturn]] void refuse(const std::string& path, const std::string& what, const std::string& hint) {
  throw_invalid_argument("UsageError", path + ": " + what, hint);
}

const Json& member(const Json& obj, std::string_view key, const std::string& path, const std::string& where) {
  const Json* v = obj.find(key);
  if (v == nullptr) bad_dump(path, where + " has no \"" + std::string(key) + "\"", "give the dump as PyTorch wrote it");
  return *v;
}

std::int64_t int_member(const Json& obj, std::string_view key, const std::string& path, const std::string& where) {
  const Json& v = member(obj, key, path, where);
  if (!v.is_int()) bad_dump(path, where + ": \"" + std::string(key) + "\" is not an integer", "give the dump as PyTorch wrote it");
  return v.as_int();
}

std::string string_member(const Json& obj, std::string_view key, const std::string& path, const std::string& where) {
  const Json& v = member(obj, key, path, where);
  if (!v.is_string()) bad_dump(path, where + ": \"" + std::string(key) + "\" is not a string", "give the dump as PyTorch wrote it");
  return v.as_string();
}

// "[0, 1, 2]" (ranks_str) -> {0, 1, 2}.
std::optional<std::vector<int>> parse_ranks(const std::string& text) {
  std::vector<int> ranks;
  std::size_t k = 0;
  auto skip = [&] {
    while (k < text.size() && (text[k] == ' ' || text[k] == ',')) ++k;
  };
  if (text.empty() || text[0] != '[') return std::nullopt;
  ++k;
  skip();
  while (k < text.size() && text[k] != ']') {
    if (!is_digit(text[k])) return std::nullopt;
    long v = 0;
    while (k < text.size() && is_digit(text[k])) {
      v = v * 10 + (text[k++] - '0');
      if (v > (1 << 24)) return std::nullopt;
    }
    ranks.push_back(static_cast<int>(v));
    skip();
  }
  if (k >= text.size()) return std::nullopt;
  return ranks;
}

// [[1024], [3, 4]] -> "[[1024], [3, 4]]", as PyTorch's analyzer prints them.
std::string render(const Json& v) {
  if (v.is_array()) {
    std::string s = "[";
    for (std::size_t k = 0; k < v.as_array().size(); ++k) s += (k ? ", " : "") + render(v.as_array()[k]);
    return s + "]";
  }
  if (v.is_string()) return "'" + v.as_string() + "'";
  return v.dump();
}

bool is_torch_file(const std::string& file) {
  return file.find("/torch/") != std::string::npos || file.starts_with("torch/") || file.find("<frozen") == 0;
}

struct Dump {
  int rank;
  std::string path;
  Json doc;
};

Json parse_dump(const DumpFile& f) {
  if (!f.bytes.empty() && static_cast<unsigned char>(f.bytes[0]) == 0x80) return read_pickle(f.bytes, f.path);
  return Json::parse(f.bytes, f.path);
}

void check_version(const Dump& d) {
  const Json& v = member(d.doc, "version", d.path, "the dump");
  const std::string text = v.is_string() ? v.as_string() : v.dump();
  int major = -1, minor = -1;
  const std::size_t dot = text.find('.');
  if (dot != std::string::npos && dot <= 3 && text.size() - dot <= 4 &&
      all_chars(std::string_view(text).substr(0, dot), is_digit) &&
      all_chars(std::string_view(text).substr(dot + 1), is_digit)) {
    major = std::stoi(text.substr(0, dot));
    minor = std::stoi(text.substr(dot + 1));
  }
  if (major != 2 || minor < kOldestMinor || minor > kNewestMinor) {
    refuse(d.path,
           "flight-recorder dump version " + text + " is not one spmd reads (2." + std::to_string(kOldestMinor) +
               " to 2." + std::to_string(kNewestMinor) + ", PyTorch 2.3 to 2.10)",
           "a newer PyTorch may have changed the fields: check its FlightRecorder.hpp (version_val) and report "
           "the version so spmd can learn it");
  }
}

}  // namespace

bool looks_like_flight_recorder_dump(std::string_view bytes) {
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x80 && static_cast<unsigned char>(bytes[1]) >= 2) {
    return true;
  }
  const std::string_view head = bytes.substr(0, 4096);
  return head.find('{') != std::string_view::npos && head.find("\"version\"") != std::string_view::npos &&
         (head.find("\"pg_config\"") != std::string_view::npos || head.find("\"entries\"") != std::string_view::npos);
}

Recording read_flight_recorder_dumps(const std::vector<DumpFile>& files) {
  std::vector<Dump> dumps;
  std::map<int, std::string> file_of_rank;
  for (const DumpFile& f : files) {
    const std::string name = base_name(f.path);
    std::size_t digits = name.size();
    while (digits > 0 && is_digit(name[digits - 1])) --digits;
    if (digits == name.size() || name.size() - digits > 7) {
      refuse(f.path, "the file name does not end with its rank",
             "PyTorch writes each rank's dump to TORCH_NCCL_DEBUG_INFO_TEMP_FILE followed by the rank "
             "(/tmp/nccl_trace_rank_3); keep those names");
    }
    const int rank = std::stoi(name.substr(digits));
    if (auto [it, added] = file_of_rank.emplace(rank, f.path); !added) {
      refuse(f.path, "a second dump of rank " + std::to_string(rank) + " (the first is " + it->second + ")",
             "give one dump per rank, all from the same hang");
    }
    Dump d{rank, f.path, parse_dump(f)};
    if (!d.doc.is_object()) bad_dump(f.path, "it is not a dict", "give the dump as PyTorch wrote it");
    check_version(d);
    dumps.push_back(std::move(d));
  }
  std::sort(dumps.begin(), dumps.end(), [](const Dump& a, const Dump& b) { return a.rank < b.rank; });

  Recording rec;
  rec.source_kind = "flight-recorder dump";
  // Process groups, from every dump's pg_config (each rank knows the groups
  // it belongs to).
  std::map<std::string, int> comm_of_pg;
  int max_rank = dumps.empty() ? -1 : dumps.back().rank;
  for (const Dump& d : dumps) {
    const Json* config = d.doc.find("pg_config");
    if (config == nullptr || !config->is_object()) continue;
    for (const auto& [key, pg] : config->as_object()) {
      if (comm_of_pg.contains(key)) continue;
      const std::string where = "pg_config[\"" + key + "\"]";
      if (!pg.is_object()) bad_dump(d.path, where + " is not a dict", "give the dump as PyTorch wrote it");
      const std::string ranks_text = string_member(pg, "ranks", d.path, where);
      std::optional<std::vector<int>> ranks = parse_ranks(ranks_text);
      if (!ranks) bad_dump(d.path, where + ": ranks \"" + ranks_text + "\" is not a list of ranks", "give the dump as PyTorch wrote it");
      CommRecord c;
      const std::string desc = pg.string_at("desc");
      c.name = "process group " + key + (desc.empty() || desc == "undefined" ? "" : " (" + desc + ")");
      c.size = static_cast<int>(ranks->size());
      c.members = *ranks;
      for (int r : c.members) max_rank = std::max(max_rank, r);
      comm_of_pg[key] = static_cast<int>(rec.comms.size());
      rec.comms.push_back(std::move(c));
    }
  }
  rec.ranks.resize(static_cast<std::size_t>(max_rank + 1));
  for (int r = 0; r <= max_rank; ++r) {
    rec.ranks[static_cast<std::size_t>(r)].rank = r;
    rec.ranks[static_cast<std::size_t>(r)].present = false;
    rec.ranks[static_cast<std::size_t>(r)].label = "rank " + std::to_string(r);
  }
  for (const Dump& d : dumps) {
    RankRecord& rank = rec.ranks[static_cast<std::size_t>(d.rank)];
    rank.present = true;
    const Json* entries = d.doc.find("entries");
    if (entries == nullptr) continue;  // the JSON form leaves out an empty list
    if (!entries->is_array()) bad_dump(d.path, "\"entries\" is not a list", "give the dump as PyTorch wrote it");
    int group = -1;
    for (std::size_t k = 0; k < entries->as_array().size(); ++k) {
      const Json& e = entries->as_array()[k];
      const std::string where = "entry " + std::to_string(k);
      if (!e.is_object()) bad_dump(d.path, where + " is not a dict", "give the dump as PyTorch wrote it");
      const Json& pg = member(e, "process_group", d.path, where);
      if (!pg.is_array() || pg.as_array().size() != 2 || !pg.as_array()[0].is_string()) {
        bad_dump(d.path, where + ": \"process_group\" is not (name, description)", "give the dump as PyTorch wrote it");
      }
      const std::string pg_name = pg.as_array()[0].as_string();
      auto comm = comm_of_pg.find(pg_name);
      if (comm == comm_of_pg.end()) {
        bad_dump(d.path, where + ": process group " + pg_name + " is not in any dump's pg_config",
                 "give every rank's dump of the same job");
      }
      const CommRecord& cr = rec.comms[static_cast<std::size_t>(comm->second)];
      const std::string profiling = string_member(e, "profiling_name", d.path, where);
      CallRecord c;
      c.comm = comm->second;
      const std::size_t colon = profiling.find(':');
      std::string op = colon == std::string::npos ? profiling : profiling.substr(colon + 1);
      std::string meta;
      if (const std::size_t space = op.find(' '); space != std::string::npos) {
        meta = op.substr(space + 1);
        op = op.substr(0, space);
      }
      c.op = op;
      const Json* is_p2p = e.find("is_p2p");
      c.p2p = is_p2p != nullptr && is_p2p->is_bool() ? is_p2p->as_bool() : (op == "send" || op == "recv");
      if (op == "send" || op == "recv") {
        // "send 0->1", "recv 1<-0": ranks within the process group.
        const std::size_t arrow = meta.find(op == "send" ? "->" : "<-");
        int peer_local = -1;
        if (arrow != std::string::npos) {
          const std::string peer = meta.substr(arrow + 2);
          if (peer.size() < 8 && all_chars(peer, is_digit)) peer_local = std::stoi(peer);
        }
        c.sends = op == "send";
        c.peer = peer_local >= 0 && peer_local < cr.size ? cr.members[static_cast<std::size_t>(peer_local)] : -1;
        if (c.peer < 0) bad_dump(d.path, where + ": \"" + profiling + "\" names no peer in its group", "give the dump as PyTorch wrote it");
      }
      c.seq = int_member(e, c.p2p ? "p2p_seq_id" : "collective_seq_id", d.path, where);
      const Json* sizes = e.find("input_sizes");
      const Json* dtypes = e.find("input_dtypes");
      const Json* out_sizes = e.find("output_sizes");
      const bool uneven = op.find("all_to_all") != std::string::npos || op.ends_with("_v") || op == "coalesced";
      if (sizes != nullptr && !uneven) c.signature.push_back("input sizes " + render(*sizes));
      if (dtypes != nullptr) c.signature.push_back("input dtypes " + render(*dtypes));
      if (out_sizes != nullptr && !uneven && !c.p2p) c.signature.push_back("output sizes " + render(*out_sizes));
      c.state = string_member(e, "state", d.path, where);
      c.completed = c.state == "completed";
      if (const Json* frames = e.find("frames"); frames != nullptr && frames->is_array()) {
        for (const Json& fr : frames->as_array()) {
          if (!fr.is_object()) continue;
          const std::string file = fr.string_at("filename");
          const std::int64_t line = fr.int_at("line", 0);
          if (!c.frames.empty()) c.frames += "; ";
          c.frames += fr.string_at("name") + " at " + file + ":" + std::to_string(line);
          if (!c.user_frame.valid() && !file.empty() && !is_torch_file(file) && line > 0 && line < (1 << 30)) {
            c.user_frame = SourceLoc{intern_path(file), static_cast<std::uint32_t>(line), 0};
          }
        }
      }
      c.recorded_at = d.path + " entry " + std::to_string(k);
      // Consecutive point-to-point entries are a batch (batch_isend_irecv,
      // a coalesced group): posted together.
      if (c.p2p && !rank.calls.empty() && rank.calls.back().p2p && rank.calls.back().comm == c.comm) {
        if (rank.calls.back().group < 0) rank.calls.back().group = ++group;
        c.group = rank.calls.back().group;
      }
      c.label = profiling + " #" + std::to_string(c.seq) + " on " + cr.name + " (entry " + std::to_string(k) + ")";
      rank.calls.push_back(std::move(c));
    }
  }
  for (RankRecord& r : rec.ranks) {
    if (!r.present) {
      r.label = "rank " + std::to_string(r.rank) + " (no dump)";
      rec.cannot_tell.push_back("there is no dump of rank " + std::to_string(r.rank) +
                                ": its process may have died before it could write one, or the file was not given");
    }
  }
  rec.cannot_tell.push_back(
      "a flight recorder keeps only its last entries (TORCH_NCCL_TRACE_BUFFER_SIZE): earlier collectives are "
      "taken to have completed");
  return rec;
}

}  // namespace spmd::detail
