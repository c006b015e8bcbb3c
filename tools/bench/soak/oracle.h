#pragma once
// The soak test's oracle: the verdict a correct simulator must reach, from
// the per-device collective sequences of a generated program alone. It shares
// nothing with spmdsim's rendezvous: it walks the program model once per
// device, then compares the sequences round by round.
//
// Rules (one axis, every collective over all devices): round k completes when
// every device calls its k-th collective and all of them are the same call
// (op, parameters, call site); the first round that does not complete decides:
//  - every device called a k-th collective, not all the same    -> mismatch
//  - some devices returned; the ones still calling disagree       -> mismatch
//  - some devices returned; the ones still calling agree           -> deadlock
//  - every device returned after k collectives                     -> ok

#include <string>
#include <vector>

#include "program.h"

namespace spmd::soak {

/// One collective call as a device makes it.
struct Call {
  Op op;
  int shift;  // ppermute only
  int line;
  bool operator==(const Call&) const = default;
};

/// The collectives device `d` calls, in order.
std::vector<Call> sequence(const Program& p, int d);

/// "ok", "deadlock" or "mismatch".
std::string verdict(const Program& p);

}  // namespace spmd::soak
