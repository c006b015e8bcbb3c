#pragma once
/// \file
/// spmdsim's own logging (spdlog): what the runtime does, for whoever debugs
/// spmdsim itself or wants to watch a run step by step. One named logger per
/// subsystem, written to stderr:
///
///   runtime     devices starting, parking, waking, ending; runs; deadlock detection
///   rendezvous  every arrival at a collective (device, collective number, k of n) and release
///   sim         the fiber scheduler's decisions (trace)
///   cuda        CUDA and NCCL calls of the GPU backend
///   dist        the processes of a multi-process run: store, cross-process checks
///   python      the front end: traced programs, devices chosen from the environment
///   diagnose    spmd diagnose's readers
///
/// Off by default, and then free: a log point costs one atomic load. Set it
/// with `spmd ... --log-level SPEC`, or SPMD_LOG_LEVEL=SPEC in the
/// environment (read at the first log point; also in a plain python3).

#include <string>
#include <string_view>

namespace spmd {

/// SPEC: a level for every subsystem ("off", "error", "warn", "info",
/// "debug", "trace"), subsystem=level pairs, or both, comma separated:
/// "debug", "rendezvous=debug,sim=trace", "info,rendezvous=trace".
/// Throws InvalidArgument (kind "UsageError") naming the unknown word, with
/// the known ones.
void set_log_level(std::string_view spec);

/// The subsystems' levels now, e.g. "runtime=off,rendezvous=debug,...".
std::string log_levels();

}  // namespace spmd
