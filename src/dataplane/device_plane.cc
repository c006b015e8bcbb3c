#include "dataplane/device_plane.h"

#include "dataplane/data_plane.h"
#include "core/device_ops.h"
#include "core/placement.h"
#include "rendezvous/collective_layout.h"
#include "spmd/core/creation.h"
#include "spmd/core/elementwise.h"
#include "spmd/core/layout.h"

namespace spmd::detail {

namespace {

bool is_half(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// The member's device is the placement of every op in this scope.
class OnMember {
 public:
  explicit OnMember(const CollectiveMember& m) : scope_(m.placement) {}

 private:
  PlacementScope scope_;
};

// buf has shape [g, s0, ..., s_{n-1}]: moves the leading axis to position
// `axis` and gives the result `out_shape` (the moved axis merged with the one
// after it when tiled).
Array from_leading(const Array& buf, int axis, const Shape& out_shape) {
  if (axis == 0) return buf.reshaped_view(out_shape);
  std::vector<int> perm;
  for (int i = 1; i <= axis; ++i) perm.push_back(i);
  perm.push_back(0);
  for (int i = axis + 1; i < buf.ndim(); ++i) perm.push_back(i);
  return transpose(buf, perm).reshaped_view(out_shape);
}

// x of shape [..., D, ...] (D at `axis`, D = g * b): the g blocks of D as
// the leading axis, contiguous: [g, ..., b, ...].
Array blocks_to_front(const Array& x, int axis, std::int64_t g) {
  if (axis == 0) return x;
  Shape s = x.shape();
  std::int64_t d = s[static_cast<std::size_t>(axis)];
  s[static_cast<std::size_t>(axis)] = d / g;
  s.insert(s.begin() + axis, g);
  std::vector<int> perm{axis};
  for (int i = 0; i < static_cast<int>(s.size()); ++i) {
    if (i != axis) perm.push_back(i);
  }
  return transpose(x.reshaped_view(s), perm);
}

TransportGroup group_of(const CollectiveCall& call, const std::vector<int>& ranks) {
  TransportGroup g;
  g.op = collective_op_text(call);
  for (int r : ranks) {
    const CollectiveMember& m = call.members[static_cast<std::size_t>(r)];
    g.devices.push_back(m.device);
  }
  return g;
}

struct Executor {
  CollectiveCall& call;
  Transport& transport;
  const CollectiveSignature& sig;
  std::vector<Array> keep;  // temporaries alive until the transport completed

  CollectiveMember& member(int r) { return call.members[static_cast<std::size_t>(r)]; }
  // False for a member of another process (a run with local devices): the
  // transport reaches it; here it has no buffers (null pointers).
  bool here(int r) { return member(r).here(); }
  // Such a member's place in the rank-ordered buffer lists and arrays.
  static void absent(std::vector<const void*>& in, std::vector<void*>& out, std::vector<Array>& arrays) {
    in.push_back(nullptr);
    out.push_back(nullptr);
    arrays.emplace_back();
  }

  Array input(int r, std::size_t k) {
    return in_placement_memory(member(r).inputs[k], std::string(collective_name(sig.kind)) + " input");
  }

  Array allocate(const Shape& shape, DType dtype) {
    return Array::uninitialized(shape, dtype, std::string(collective_name(sig.kind)) + " output");
  }

  void reduction() {
    const ReduceKind rk = sig.kind == CollectiveKind::kPmax   ? ReduceKind::kMax
                          : sig.kind == CollectiveKind::kPmin ? ReduceKind::kMin
                                                              : ReduceKind::kSum;
    for (auto& m : call.members) {
      if (m.here()) m.outputs->assign(sig.operands.size(), Array());
    }
    for (std::size_t k = 0; k < sig.operands.size(); ++k) {
      const DType in_dtype = sig.operands[k].dtype;
      const DType out_dtype = reduction_result_dtype(sig.kind, in_dtype);
      const Shape& shape = sig.operands[k].shape;
      const std::int64_t n = num_elements(shape);
      DType work = in_dtype;
      if (rk == ReduceKind::kSum && in_dtype == DType::kBool) work = DType::kInt32;
      if (rk == ReduceKind::kSum && is_half(in_dtype)) work = DType::kFloat32;
      for (const auto& ranks : effective_groups(sig.groups, static_cast<int>(call.members.size()))) {
        std::vector<const void*> in;
        std::vector<void*> out;
        std::vector<Array> acc;
        for (int r : ranks) {
          if (!here(r)) {
            absent(in, out, acc);
            continue;
          }
          OnMember on(member(r));
          Array x = input(r, k);
          if (work != in_dtype) x = astype(x, work);
          acc.push_back(allocate(shape, work));
          in.push_back(x.raw_data());
          out.push_back(acc.back().mutable_raw_data());
          keep.push_back(std::move(x));
        }
        if (n > 0) transport.all_reduce(group_of(call, ranks), rk, work, n, in, out);
        const double count = static_cast<double>(ranks.size());
        for (std::size_t i = 0; i < ranks.size(); ++i) {
          if (!here(ranks[i])) continue;
          OnMember on(member(ranks[i]));
          Array res = acc[i];
          if (sig.kind == CollectiveKind::kPmean) {
            if (is_half(in_dtype)) {
              // As JAX: the sum in the operand's type (inf past its range), then the divide.
              res = binary(BinaryOp::kDivide, astype(res, in_dtype), Array::scalar(count, in_dtype, true));
            } else if (is_floating(work)) {
              res = binary(BinaryOp::kDivide, res, Array::scalar(count, work, true));
            } else {  // ints: the signed sum divided in float64, as the host does
              res = binary(BinaryOp::kDivide, astype(res, DType::kFloat64), Array::scalar(count, DType::kFloat64, true));
            }
          }
          if (res.dtype() != out_dtype) res = astype(res, out_dtype);
          (*member(ranks[i]).outputs)[k] = res.with_weak_type(false);
        }
        for (Array& a : acc) keep.push_back(std::move(a));
      }
    }
  }

  void all_gather() {
    const OperandType& op = sig.operands[0];
    for (const auto& ranks : effective_groups(sig.groups, static_cast<int>(call.members.size()))) {
      const auto g = static_cast<std::int64_t>(ranks.size());
      const Shape out_shape = all_gather_shape(op.shape, sig.axis, sig.tiled, g);
      Shape gathered_shape = op.shape;
      gathered_shape.insert(gathered_shape.begin(), g);
      std::vector<const void*> in;
      std::vector<void*> out;
      std::vector<Array> gathered;
      for (int r : ranks) {
        if (!here(r)) {
          absent(in, out, gathered);
          continue;
        }
        OnMember on(member(r));
        Array x = input(r, 0);
        gathered.push_back(allocate(gathered_shape, op.dtype));
        in.push_back(x.raw_data());
        out.push_back(gathered.back().mutable_raw_data());
        keep.push_back(std::move(x));
      }
      const std::size_t bytes = static_cast<std::size_t>(num_elements(op.shape)) * dtype_size(op.dtype);
      if (bytes > 0) transport.all_gather(group_of(call, ranks), bytes, in, out);
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (!here(ranks[i])) continue;
        OnMember on(member(ranks[i]));
        member(ranks[i]).outputs->assign(1, from_leading(gathered[i], sig.axis, out_shape));
        keep.push_back(std::move(gathered[i]));
      }
    }
  }

  void psum_scatter() {
    const OperandType& op = sig.operands[0];
    const DType out_dtype = reduction_result_dtype(CollectiveKind::kPsumScatter, op.dtype);
    DType work = op.dtype;
    if (work == DType::kBool) work = DType::kInt32;
    if (is_half(work)) work = DType::kFloat32;
    for (const auto& ranks : effective_groups(sig.groups, static_cast<int>(call.members.size()))) {
      const auto g = static_cast<std::int64_t>(ranks.size());
      const Shape out_shape = psum_scatter_shape(op.shape, sig.axis, sig.tiled, g);
      const std::int64_t count = num_elements(op.shape) / g;
      std::vector<const void*> in;
      std::vector<void*> out;
      std::vector<Array> results;
      for (int r : ranks) {
        if (!here(r)) {
          absent(in, out, results);
          continue;
        }
        OnMember on(member(r));
        Array x = input(r, 0);
        if (work != op.dtype) x = astype(x, work);
        Array packed = blocks_to_front(x, sig.axis, g);
        results.push_back(allocate(out_shape, work));
        in.push_back(packed.raw_data());
        out.push_back(results.back().mutable_raw_data());
        keep.push_back(std::move(x));
        keep.push_back(std::move(packed));
      }
      if (count > 0) transport.reduce_scatter(group_of(call, ranks), ReduceKind::kSum, work, count, in, out);
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (!here(ranks[i])) continue;
        OnMember on(member(ranks[i]));
        Array res = results[i];
        if (res.dtype() != out_dtype) res = astype(res, out_dtype);
        member(ranks[i]).outputs->assign(1, res);
        keep.push_back(std::move(results[i]));
      }
    }
  }

  void all_to_all() {
    const OperandType& op = sig.operands[0];
    const std::size_t es = dtype_size(op.dtype);
    for (const auto& ranks : effective_groups(sig.groups, static_cast<int>(call.members.size()))) {
      const auto g = static_cast<std::int64_t>(ranks.size());
      const AllToAllLayout layout = all_to_all_layout(op.shape, sig.axis, sig.concat_axis, sig.tiled, g);
      const Shape& block_shape = layout.block;
      const Shape& out_shape = layout.out;
      Shape recv_all = layout.received;
      recv_all.insert(recv_all.begin(), g);
      const std::size_t block_bytes = static_cast<std::size_t>(num_elements(block_shape)) * es;
      std::vector<Array> packed, received;
      for (int r : ranks) {
        if (!here(r)) {
          packed.emplace_back();
          received.emplace_back();
          continue;
        }
        OnMember on(member(r));
        Array x = input(r, 0);
        packed.push_back(blocks_to_front(x, sig.axis, g));
        received.push_back(allocate(recv_all, op.dtype));
        keep.push_back(std::move(x));
      }
      std::vector<Transfer> transfers;
      if (block_bytes > 0) {
        for (int k = 0; k < static_cast<int>(g); ++k) {
          for (int j = 0; j < static_cast<int>(g); ++j) {
            const Array& from = packed[static_cast<std::size_t>(k)];
            Array& to = received[static_cast<std::size_t>(j)];
            transfers.push_back(
                {k, j,
                 from.valid() ? static_cast<const std::byte*>(from.raw_data()) + static_cast<std::size_t>(j) * block_bytes
                              : nullptr,
                 to.valid() ? static_cast<std::byte*>(to.mutable_raw_data()) + static_cast<std::size_t>(k) * block_bytes
                            : nullptr,
                 block_bytes});
          }
        }
        transport.exchange(group_of(call, ranks), transfers);
      }
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (!here(ranks[i])) continue;
        OnMember on(member(ranks[i]));
        member(ranks[i]).outputs->assign(1, from_leading(received[i], sig.concat_axis, out_shape));
        keep.push_back(std::move(packed[i]));
        keep.push_back(std::move(received[i]));
      }
    }
  }

  void ppermute() {
    const OperandType& op = sig.operands[0];
    const int n = static_cast<int>(call.members.size());
    std::vector<int> source(static_cast<std::size_t>(n), -1);
    for (auto [s, d] : sig.perm) source[static_cast<std::size_t>(d)] = s;
    std::vector<Array> inputs;
    for (int r = 0; r < n; ++r) {
      if (!here(r)) {
        inputs.emplace_back();
        continue;
      }
      OnMember on(member(r));
      inputs.push_back(input(r, 0));
    }
    std::vector<Transfer> transfers;
    const std::size_t bytes = static_cast<std::size_t>(num_elements(op.shape)) * dtype_size(op.dtype);
    for (int r = 0; r < n; ++r) {
      const int s = source[static_cast<std::size_t>(r)];
      if (!here(r)) {
        // Another process receives; this one may be the sender.
        if (s >= 0 && bytes > 0) {
          const Array& from = inputs[static_cast<std::size_t>(s)];
          transfers.push_back({s, r, from.valid() ? from.raw_data() : nullptr, nullptr, bytes});
        }
        continue;
      }
      OnMember on(member(r));
      // Devices nobody sends to get zeros, as in JAX.
      Array out = s >= 0 ? allocate(op.shape, op.dtype) : zeros(op.shape, op.dtype);
      if (s >= 0 && bytes > 0) {
        const Array& from = inputs[static_cast<std::size_t>(s)];
        transfers.push_back({s, r, from.valid() ? from.raw_data() : nullptr, out.mutable_raw_data(), bytes});
      }
      member(r).outputs->assign(1, out);
    }
    std::vector<int> all(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) all[static_cast<std::size_t>(r)] = r;
    if (!transfers.empty()) transport.exchange(group_of(call, all), transfers);
    for (Array& a : inputs) keep.push_back(std::move(a));
  }
};

}  // namespace

std::string collective_op_text(const CollectiveCall& call) {
  std::string s = call.sig->op_and_axes();
  for (const CollectiveMember& m : call.members) {
    if (!m.here()) continue;
    s += " #" + std::to_string(m.seq);
    break;
  }
  return s;
}

void execute_with_transport(CollectiveCall& call, Transport& transport) {
  Executor ex{call, transport, *call.sig, {}};
  switch (call.sig->kind) {
    case CollectiveKind::kPsum:
    case CollectiveKind::kPmean:
    case CollectiveKind::kPmax:
    case CollectiveKind::kPmin: ex.reduction(); break;
    case CollectiveKind::kAllGather: ex.all_gather(); break;
    case CollectiveKind::kPsumScatter: ex.psum_scatter(); break;
    case CollectiveKind::kAllToAll: ex.all_to_all(); break;
    case CollectiveKind::kPpermute: ex.ppermute(); break;
    case CollectiveKind::kBarrier: break;  // no data, no outputs
  }
  transport.complete();
}

}  // namespace spmd::detail
