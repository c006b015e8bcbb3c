#pragma once
// Collectives over device memory: the layout work (widening, packing blocks,
// moving the gathered axis into place, pmean's division) as array ops on each
// member's device, and the byte movement through a Transport (NCCL on GPUs).
// The host data plane (data_plane.h) is the reference: with a transport that
// reduces in rank order, results are identical bit for bit.
//
// Reductions widen float16/bfloat16 (and bool for psum) before the transport,
// as the host accumulates them in float32 (int32), and narrow the result once.

#include "dataplane/transport.h"
#include "rendezvous/communicator.h"

namespace spmd::detail {

/// Fills every member's outputs (allocated in that member's arena). Runs on
/// the completing device's thread while the other members are parked; calls
/// transport.complete() before returning.
void execute_with_transport(CollectiveCall& call, Transport& transport);

/// "psum over 'i' #7": the op as error and watchdog reports name it.
std::string collective_op_text(const CollectiveCall& call);

}  // namespace spmd::detail
