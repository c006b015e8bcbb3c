#pragma once
// The report for a collective over an axis name that is not bound where it
// runs (or is traced): the names that are bound, and the closest one as a
// "did you mean" hint. One text for the rendezvous and for tracing.

#include <string>
#include <string_view>
#include <vector>

#include "spmd/report.h"

namespace spmd::detail {

/// `bound` lists the names bound there, outermost first; nullptr means the
/// call is outside any pmap-ed function.
Report unbound_axis_report(std::string_view op, const std::string& name, const std::vector<std::string>* bound,
                           SourceLoc loc);

}  // namespace spmd::detail
