#pragma once
// The soak test's random programs: a small model of a pmap-ed function over
// one axis 'i' (collectives, lax.cond, lax.switch, lax.fori_loop with
// predicates and trip counts on lax.axis_index, nested a few levels), its
// rendering as a scenario file, and the seeded generator.
//
// Every collective is rendered on a line of its own, so a collective's call
// site (which the rendezvous compares) is its line.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace spmd::soak {

enum class Op { kPsum, kPmean, kPmax, kPmin, kAllGather, kPpermute, kBarrier };
const char* op_name(Op op);

/// A function of the device index d (0 <= d < n) rendered over lax.axis_index('i').
struct IndexExpr {
  enum class Form { kConst, kLess, kEqual, kModEqual, kMod, kConstPlusMod } form = IndexExpr::Form::kConst;
  int a = 0, b = 0;
  /// Value on device d: a bool (0/1) for predicates, an int otherwise.
  int eval(int d) const;
  std::string python() const;
};

struct Stmt;
using Block = std::vector<Stmt>;

struct Stmt {
  enum class Kind { kCollective, kLocal, kCond, kSwitch, kFori } kind = Kind::kLocal;
  Op op = Op::kPsum;      // kCollective
  int shift = 1;          // kCollective ppermute: d -> (d + shift) % n
  IndexExpr expr;         // kCond predicate, kSwitch index, kFori trip count
  std::vector<Block> blocks;  // kCond: {true, false}; kSwitch: branches; kFori: {body}
  int line = 0;           // the line of the collective, or of the cond/switch/fori call (set by render)
};

struct Program {
  std::uint64_t seed = 0;
  int devices = 2;
  Block body;
  std::string text;  // the scenario file (render() fills it and every line)
};

/// A random program from `seed`: the same seed gives the same program.
Program generate(std::uint64_t seed);
/// Renders `p` into p.text, setting each statement's line.
void render(Program& p);

}  // namespace spmd::soak
