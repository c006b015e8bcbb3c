#pragma once
// spmd dtypes and reductions as NCCL sees them (one mapping, tested on the CPU).

#include <nccl.h>

#include "dataplane/transport.h"
#include "spmd/core/dtype.h"

namespace spmd::cuda {

/// bool -> ncclUint8 (0/1 bytes: max/min are `or`/`and`; sums are widened to
/// int32 before they reach NCCL), int32 -> ncclInt32, int64 -> ncclInt64,
/// float16 -> ncclFloat16, bfloat16 -> ncclBfloat16, float32 -> ncclFloat32,
/// float64 -> ncclFloat64.
ncclDataType_t nccl_dtype(DType dtype);
/// kSum -> ncclSum, kMax -> ncclMax, kMin -> ncclMin.
ncclRedOp_t nccl_op(detail::ReduceKind op);
/// "ncclFloat32", for messages.
const char* nccl_dtype_name(ncclDataType_t t);

}  // namespace spmd::cuda
