#pragma once
// pmap programs exercising every collective and layout, shared by the
// device-memory tests: the fake GPU backend on the CPU
// (tests/unit/runtime/fake_gpu_test.cc) and the cuda backend on a GPU
// (tests/cuda/gpu). Each runs on `n` devices; the tests compare a backend's
// results with the simulator's.

#include <functional>
#include <string>
#include <vector>

#include "spmd/spmd.h"

namespace spmd::testing {

using ProgramFn = std::function<std::vector<Array>(std::span<const Array>)>;

struct Program {
  std::string name;
  std::vector<Array> args;
  PmapOptions options;
  ProgramFn fn;
  /// True when a float sum over devices is involved (psum, pmean,
  /// psum_scatter of floats): NCCL may add in another order than the host.
  bool float_reduction = false;
};

inline std::vector<Array> run_with(const std::string& backend, int devices, const Program& p) {
  RuntimeOptions o;
  o.devices = devices;
  o.backend = backend;
  Runtime rt(o);
  return rt.pmap(p.fn, p.args, p.options);
}

inline PmapOptions pmap_axis(std::string name, std::vector<MapAxis> in_axes = {}) {
  PmapOptions o;
  o.axis_name = std::move(name);
  o.in_axes = std::move(in_axes);
  return o;
}

/// Values (i % 17 - 5) * scale: negatives, zeros, repeats.
inline Array seq(Shape s, DType dt = DType::kFloat32, double scale = 1.0) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < num_elements(s); ++i) v.push_back(static_cast<double>(i % 17 - 5) * scale);
  return Array::from_doubles(v, s, dt);
}

/// Programs for `n` devices (axis_index_groups and the 2x2 mesh only when n == 4).
inline std::vector<Program> programs(int n) {
  std::vector<Program> ps;
  const std::int64_t N = n;
  auto one = [](Array a) { return std::vector<Array>{std::move(a)}; };
  const bool four = n == 4;
  for (DType dt : {DType::kFloat32, DType::kInt32, DType::kBool, DType::kFloat16, DType::kBFloat16, DType::kInt64,
                   DType::kFloat64}) {
    const std::string t(dtype_name(dt));
    const bool fl = is_floating(dt);
    Array x = seq({N, 2, 3}, dt, 0.37);
    ps.push_back({"psum " + t, {x}, pmap_axis("i"), [=](std::span<const Array> a) { return one(psum(a[0], "i")); }, fl});
    ps.push_back({"pmean " + t, {x}, pmap_axis("i"), [=](std::span<const Array> a) { return one(pmean(a[0], "i")); }, fl});
    ps.push_back({"pmax " + t, {x}, pmap_axis("i"), [=](std::span<const Array> a) { return one(pmax(a[0], "i")); }});
    ps.push_back({"pmin " + t, {x}, pmap_axis("i"), [=](std::span<const Array> a) { return one(pmin(a[0], "i")); }});
    if (four) {
      ps.push_back({"pmin groups " + t, {x}, pmap_axis("i"),
                    [=](std::span<const Array> a) { return one(pmin(a[0], "i", {{0, 3}, {2, 1}})); }});
      ps.push_back({"psum groups " + t, {x}, pmap_axis("i"),
                    [=](std::span<const Array> a) { return one(psum(a[0], "i", {{3, 0}, {1, 2}})); }, fl});
    }
  }
  Array x = seq({N, 2, 4, 3});
  for (int ax : {0, 1, 2, -1}) {
    for (bool tiled : {false, true}) {
      if (tiled && ax == -1) continue;
      ps.push_back({"all_gather axis " + std::to_string(ax) + (tiled ? " tiled" : ""), {x}, pmap_axis("i"),
                    [=](std::span<const Array> a) { return one(all_gather(a[0], "i", ax, tiled)); }});
    }
  }
  if (four) {
    ps.push_back({"all_gather groups", {x}, pmap_axis("i"),
                  [=](std::span<const Array> a) { return one(all_gather(a[0], "i", 1, true, {{2, 0}, {3, 1}})); }});
  }
  ps.push_back({"all_gather scalar", {seq({N})}, pmap_axis("i"),
                [=](std::span<const Array> a) { return one(all_gather(a[0], "i")); }});
  ps.push_back({"psum_scatter untiled", {seq({N, N, 3}, DType::kInt32)}, pmap_axis("i"),
                [=](std::span<const Array> a) { return one(psum_scatter(a[0], "i", 0, false)); }});
  ps.push_back({"psum_scatter tiled axis 1 f16", {seq({N, 3, 2 * N}, DType::kFloat16, 0.1)}, pmap_axis("i"),
                [=](std::span<const Array> a) { return one(psum_scatter(a[0], "i", 1, true)); }, true});
  ps.push_back({"psum_scatter tiled axis 2 f32", {seq({N, 3, 2, 3 * N}, DType::kFloat32, 0.25)}, pmap_axis("i"),
                [=](std::span<const Array> a) { return one(psum_scatter(a[0], "i", 2, true)); }, true});
  if (four) {
    ps.push_back({"psum_scatter bool groups", {seq({4, 2, 2}, DType::kBool)}, pmap_axis("i"),
                  [=](std::span<const Array> a) { return one(psum_scatter(a[0], "i", 1, false, {{1, 0}, {2, 3}})); }});
  }
  for (int split : {0, 1}) {
    for (int concat : {0, 1}) {
      for (bool tiled : {false, true}) {
        Shape s = tiled ? Shape{N, 2 * N, 2 * N} : Shape{N, N, N};
        ps.push_back({"all_to_all " + std::to_string(split) + "," + std::to_string(concat) + (tiled ? " tiled" : ""),
                      {seq(s)}, pmap_axis("i"),
                      [=](std::span<const Array> a) { return one(all_to_all(a[0], "i", split, concat, tiled)); }});
      }
    }
  }
  Permutation ring;
  for (int i = 0; i < n; ++i) ring.push_back({i, (i + 1) % n});
  ps.push_back({"ppermute ring", {x}, pmap_axis("i"),
                [=](std::span<const Array> a) { return one(ppermute(a[0], "i", ring)); }});
  ps.push_back({"ppermute partial", {x}, pmap_axis("i"), [=](std::span<const Array> a) {
                  return one(ppermute(a[0], "i", {{0, n - 1}}));
                }});
  ps.push_back({"axis_index and local math", {x}, pmap_axis("i"), [=](std::span<const Array> a) {
                  Array idx = axis_index("i");
                  Array y = reduce(ReduceOp::kSum, a[0] * astype(idx, DType::kFloat32), std::vector<int>{1}, false);
                  return std::vector<Array>{y, idx, psum(y, "i")};
                }, true});
  {
    Program p{"replicated argument and out_axes None", {x, seq({3})}, pmap_axis("i", {0, kReplicated}), nullptr};
    p.options.out_axes = {kReplicated, 1};
    p.fn = [](std::span<const Array> a) {
      Array s = psum(reduce(ReduceOp::kSum, a[0], std::nullopt, false), "i");
      return std::vector<Array>{s, a[0] + a[1]};
    };
    p.float_reduction = true;
    ps.push_back(p);
  }
  if (four) {
    Program p{"mesh with tuple axes", {seq({2, 2, 3}, DType::kInt32)}, {}, nullptr};
    p.options.mesh = {{"a", 2}, {"b", 2}};
    p.fn = [](std::span<const Array> a) {
      return std::vector<Array>{psum(a[0], AxisSet({"b", "a"})), all_gather(a[0], AxisSet({"b", "a"})),
                                pmax(a[0], "a"), psum(a[0], "b")};
    };
    ps.push_back(p);
  }
  ps.push_back({"barrier", {x}, pmap_axis("i"), [=](std::span<const Array> a) {
                  barrier("i");
                  return one(a[0]);
                }});
  return ps;
}

}  // namespace spmd::testing
