#include "backend/cuda/nccl_types.h"

namespace spmd::cuda {

ncclDataType_t nccl_dtype(DType dtype) {
  switch (dtype) {
    case DType::kBool: return ncclUint8;
    case DType::kInt32: return ncclInt32;
    case DType::kInt64: return ncclInt64;
    case DType::kFloat16: return ncclFloat16;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kFloat32: return ncclFloat32;
    case DType::kFloat64: return ncclFloat64;
  }
  return ncclUint8;
}

ncclRedOp_t nccl_op(detail::ReduceKind op) {
  switch (op) {
    case detail::ReduceKind::kSum: return ncclSum;
    case detail::ReduceKind::kMax: return ncclMax;
    case detail::ReduceKind::kMin: return ncclMin;
  }
  return ncclSum;
}

const char* nccl_dtype_name(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return "ncclInt8";
    case ncclUint8: return "ncclUint8";
    case ncclInt32: return "ncclInt32";
    case ncclUint32: return "ncclUint32";
    case ncclInt64: return "ncclInt64";
    case ncclUint64: return "ncclUint64";
    case ncclFloat16: return "ncclFloat16";
    case ncclFloat32: return "ncclFloat32";
    case ncclFloat64: return "ncclFloat64";
    case ncclBfloat16: return "ncclBfloat16";
    default: return "ncclDataType";
  }
}

}  // namespace spmd::cuda
