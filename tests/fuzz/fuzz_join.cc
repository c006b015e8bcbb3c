// libFuzzer target: a multi-process join as rank 0 sees it. The other rank's
// files in the store come from the input: its state ("state.1") and the
// signature it posts for the first collective ("sig.<group>.0.1"), split at
// the first 0xFF byte. Rank 0 joins a world of 2 and checks a psum; every
// input ends with the check passing or an spmd::Error (a mismatch, a
// deadlock, RankLost, a malformed file named), never a crash or a hang: a
// poll hook stops the wait after a few polls.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "dist/file_store.h"
#include "dist/process_group.h"
#include "fuzz_limits.h"
#include "rendezvous/axis_names.h"
#include "spmd/error.h"

namespace {

constexpr int kMaxPolls = 6;

struct TempStore {
  std::string dir;
  TempStore() {
    char tmpl[] = "/tmp/spmd-fuzz-join-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) std::abort();
    dir = tmpl;
  }
  ~TempStore() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// The group key rank 0 used: from the name of the signature file it posted.
std::string posted_group(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const std::string tail = ".0.0";
    if (name.rfind("sig.", 0) == 0 && name.size() > 4 + tail.size() &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0) {
      return name.substr(4, name.size() - 4 - tail.size());
    }
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > spmd::fuzz::kMaxInputBytes) return 0;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = input.find('\xff');
  const std::string state = input.substr(0, cut);
  const std::string sig = cut == std::string::npos ? std::string() : input.substr(cut + 1);

  TempStore tmp;
  spmd::dist::FileStore store(tmp.dir);
  store.set("state.1", state);
  try {
    spmd::dist::ProcessGroup group(store, 0, 2);
    int polls = 0;
    group.set_poll_hook([&] {
      if (polls == 0 && !sig.empty()) {
        const std::string key = posted_group(tmp.dir);
        if (!key.empty()) store.set("sig." + key + ".0.1", sig);
      }
      if (++polls > kMaxPolls) {
        throw spmd::BudgetExceeded(spmd::make_report("BudgetExceeded", "fuzz_join: stopped waiting"));
      }
    });
    spmd::detail::CollectiveSignature s;
    s.kind = spmd::CollectiveKind::kPsum;
    s.axes = spmd::detail::AxisNames::intern({"i"});
    s.operands.push_back({spmd::DType::kFloat32, spmd::Shape{4}});
    s.loc = spmd::SourceLoc{"f.py", 10, 5};
    group.check_collective(s, {0, 1});
    group.finish();
  } catch (const spmd::Error& e) {
    (void)e.report().to_text();
    (void)e.report().to_json().dump();
  }
  return 0;
}
