#include "oracle.h"

#include <algorithm>

namespace spmd::soak {

namespace {

void walk(const Block& b, int d, std::vector<Call>& out) {
  for (const Stmt& s : b) {
    switch (s.kind) {
      case Stmt::Kind::kCollective:
        out.push_back(Call{s.op, s.op == Op::kPpermute ? s.shift : 0, s.line});
        break;
      case Stmt::Kind::kLocal: break;
      case Stmt::Kind::kCond: walk(s.blocks[s.expr.eval(d) ? 0 : 1], d, out); break;
      case Stmt::Kind::kSwitch: {
        int last = static_cast<int>(s.blocks.size()) - 1;
        walk(s.blocks[static_cast<std::size_t>(std::clamp(s.expr.eval(d), 0, last))], d, out);
        break;
      }
      case Stmt::Kind::kFori:
        for (int k = 0; k < s.expr.eval(d); ++k) walk(s.blocks[0], d, out);
        break;
    }
  }
}

}  // namespace

std::vector<Call> sequence(const Program& p, int d) {
  std::vector<Call> out;
  walk(p.body, d, out);
  return out;
}

std::string verdict(const Program& p) {
  std::vector<std::vector<Call>> seqs;
  std::size_t longest = 0;
  for (int d = 0; d < p.devices; ++d) {
    seqs.push_back(sequence(p, d));
    longest = std::max(longest, seqs.back().size());
  }
  for (std::size_t k = 0; k < longest; ++k) {
    std::vector<const Call*> calling;
    for (const auto& s : seqs) {
      if (k < s.size()) calling.push_back(&s[k]);
    }
    bool agree = std::all_of(calling.begin(), calling.end(), [&](const Call* c) { return *c == *calling[0]; });
    if (!agree) return "mismatch";
    if (calling.size() < seqs.size()) return "deadlock";
  }
  return "ok";
}

}  // namespace spmd::soak
