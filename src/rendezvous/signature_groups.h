#pragma once
// Who brought which collective signature, grouped, and the mismatch table
// built from the groups: the same for devices at one rendezvous and for the
// ranks of a multi-process run.

#include <string_view>
#include <utility>
#include <vector>

#include "rendezvous/collective_signature.h"
#include "spmd/report.h"

namespace spmd::detail {

/// Who brought which signature: the distinct signatures, in first-seen
/// order, each with the ids (devices or ranks) that brought it.
using SignatureGroups = std::vector<std::pair<const CollectiveSignature*, std::vector<int>>>;
SignatureGroups group_signatures(const std::vector<std::pair<const CollectiveSignature*, int>>& brought);
/// The mismatch table: a row per group ("devices {0, 1}" / "ranks {0, 1}",
/// op, axes, operands, params, where).
ReportTable signature_table(const SignatureGroups& groups, std::string_view one, std::string_view many);

}  // namespace spmd::detail
