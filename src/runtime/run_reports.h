#pragma once
// Builders of the reports a run ends with: deadlock, collective mismatch,
// per-device statuses and the first divergence between devices. They read
// device contexts only while those are parked or ended (caller holds the
// Run's mutex, or every device has ended).

#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/device_context.h"
#include "spmd/report.h"
#include "rendezvous/signature_groups.h"
#include "util/id_sets.h"

namespace spmd::detail {

struct Communicator;
struct CollectiveSignature;


std::vector<DeviceStatus> describe_devices(const std::vector<std::unique_ptr<DeviceContext>>& contexts);

Divergence find_divergence(const std::vector<DeviceContext*>& devices);

class DecisionLog;
/// The first position where the logs' decisions differ, as the divergence's
/// decision_loc and decision_summary ("if at f.py:9: was true on rank 1; was
/// false on rank 0"): each log with its id, named with `one` / `many`
/// ("device"/"devices", "rank"/"ranks"). Leaves `d` as it is when none differ.
void find_decision_divergence(Divergence& d, const std::vector<std::pair<const DecisionLog*, int>>& logs,
                              std::string_view one, std::string_view many);

/// "lax.cond at f.py:9 took the true branch" style wording for one outcome.
std::string describe_outcome(const std::string& what, std::int64_t outcome);

/// Every live device is parked and `pending` are the rendezvous with arrivals.
/// Returns kind "Deadlock", or "CollectiveMismatch" when an incomplete
/// rendezvous already has disagreeing members.
Report build_deadlock_report(const std::vector<std::unique_ptr<DeviceContext>>& contexts,
                             const std::vector<const Communicator*>& pending, const std::string& repro);


/// All members of `comm` arrived and some signatures differ.
Report build_mismatch_report(const Communicator& comm, const std::string& repro);

/// When the report names a first differing decision, its hint leads with it
/// ("The first differing decision was if at f.py:9: .... Every device must ...").
void lead_hint_with_decision(Report& r);

/// What an exception that escaped device `ctx` becomes: the error that stops
/// the run (an spmd::Error given the device and its line where it named
/// none; anything else a DeviceError) and what the device raised, as data.
struct DeviceFailure {
  std::exception_ptr error;
  DeviceContext::Raised raised;
};
DeviceFailure attribute_failure(std::exception_ptr escaped, const DeviceContext& ctx);

/// Gives the run's error, once every device ended, the statuses of all
/// devices and the command that reproduces it, where it has none yet.
void complete_run_report(std::exception_ptr error, const std::vector<std::unique_ptr<DeviceContext>>& contexts,
                         const std::string& repro);

}  // namespace spmd::detail
