// The cuda backend on a real GPU: every core op and collective against the
// host / simulator (bit for bit where the math is exact), memory limits,
// detection before data moves, traces, and (tagged [fault], in their own
// process) the watchdog and a faulting kernel.
//
// Lines starting "verified:" / "not verified:" are collected by tools/gpu-check.sh.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/cuda/device_resources.h"
#include "backend/cuda/kernels/kernels.h"
#include "core/arena.h"
#include "core/device_ops.h"
#include "spmd/spmd.h"
#include "spmd/trace/jsonl_trace.h"
#include "support/collective_programs.h"
#include "support/op_cases.h"

using namespace spmd;
using namespace spmd::testing;

namespace {

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  return n;
}

void set_transport(const char* t) { ::setenv("SPMD_CUDA_TRANSPORT", t, 1); }

RuntimeOptions cuda_options(int devices) {
  RuntimeOptions o;
  o.devices = devices;
  o.backend = "cuda";
  o.watchdog_s = 120;
  return o;
}

double tolerance(DType t) {
  switch (t) {
    case DType::kFloat16: return 2e-3;
    case DType::kBFloat16: return 2e-2;
    case DType::kFloat32: return 1e-5;
    case DType::kFloat64: return 1e-12;
    default: return 0;
  }
}

// Same dtype and shape, and values equal within the dtype's tolerance (NaNs match).
std::string compare(const Array& got, const Array& want, bool exact) {
  if (got.abstract_type() != want.abstract_type()) return "type " + got.abstract_type() + " vs " + want.abstract_type();
  if (exact) return got.identical(want) ? "" : "bits differ: " + to_string(got) + " vs " + to_string(want);
  auto a = got.to_doubles(), b = want.to_doubles();
  double tol = tolerance(got.dtype());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (a[i] == b[i]) continue;
    if (std::fabs(a[i] - b[i]) <= tol * std::max(std::fabs(a[i]), std::fabs(b[i])) + tol * 1e-3) continue;
    return "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
  }
  return "";
}

PmapOptions axis_i() {
  PmapOptions o;
  o.axis_name = "i";
  return o;
}

}  // namespace

TEST_CASE("cuda: every core op on a GPU equals the host", "[cuda]") {
  auto cases = op_cases();
  std::vector<Array> expected;
  for (const auto& c : cases) expected.push_back(c.fn(c.inputs));
  Runtime rt(cuda_options(1));
  std::vector<std::string> failures;
  int exact = 0, close = 0;
  Array dummy = Array::from_doubles(std::vector<double>{0}, {1}, DType::kFloat32);
  rt.pmap(
      [&](std::span<const Array>) {
        for (std::size_t i = 0; i < cases.size(); ++i) {
          for (bool upload_first : {true, false}) {
            std::vector<Array> inputs;
            for (const Array& x : cases[i].inputs) {
              inputs.push_back(upload_first ? detail::in_placement_memory(x, "test") : x);
            }
            Array got = cases[i].fn(inputs);
            if (got.memory_kind() != MemoryKind::kCuda) failures.push_back(cases[i].name + ": not in GPU memory");
            std::string diff = compare(got.to_host(), expected[i], cases[i].exact);
            if (!diff.empty()) failures.push_back(cases[i].name + (upload_first ? "" : " (host inputs)") + ": " + diff);
            (cases[i].exact ? exact : close)++;
          }
        }
        return std::vector<Array>{};
      },
      std::vector<Array>{dummy}, axis_i());
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
  std::printf("verified: %d array-op results bit-identical to the host, %d within the device math library's "
              "tolerance (exp, pow)\n",
              exact, close);
}

TEST_CASE("cuda: collectives equal the simulator", "[cuda]") {
  const int gpus = gpu_count();
  struct Config {
    const char* transport;
    int devices;
  };
  std::vector<Config> configs = {{"copy", 4}, {"copy", 3}};
  const int nccl_devices = std::min(gpus, 4);
  configs.push_back({"nccl", nccl_devices});
  if (nccl_devices >= 3) configs.push_back({"nccl", 2});
  for (const Config& cfg : configs) {
    set_transport(cfg.transport);
    int exact = 0, close = 0;
    for (const Program& p : programs(cfg.devices)) {
      INFO(p.name << " on " << cfg.devices << " devices, transport " << cfg.transport);
      auto want = run_with("sim", cfg.devices, p);
      auto got = run_with("cuda", cfg.devices, p);
      REQUIRE(got.size() == want.size());
      // NCCL may sum floats over more than two ranks in another order.
      bool is_exact = std::string(cfg.transport) == "copy" || !p.float_reduction || cfg.devices <= 2;
      for (std::size_t i = 0; i < got.size(); ++i) {
        std::string diff = compare(got[i], want[i], is_exact);
        if (!diff.empty()) FAIL_CHECK("output " << i << ": " << diff);
      }
      (is_exact ? exact : close)++;
    }
    std::printf("verified: %d collective programs on %d devices with the %s transport equal the simulator bit for "
                "bit%s\n",
                exact, cfg.devices, cfg.transport,
                close ? (", " + std::to_string(close) + " more within float tolerance (NCCL's sum order)").c_str() : "");
  }
  if (gpus < 2) {
    std::printf("not verified: NCCL between two or more GPUs (this machine has %d GPU; NCCL ran with 1 rank, "
                "multi-device collectives through the copy transport)\n",
                gpus);
  }
  set_transport("auto");
}

TEST_CASE("cuda: arena capacity and GPU exhaustion give OutOfMemoryError reports", "[cuda]") {
  set_transport("auto");
  Array x = Array::from_doubles(std::vector<double>{1}, {1}, DType::kFloat32);
  {
    RuntimeOptions o = cuda_options(1);
    o.arena_capacity = 1 << 20;
    Runtime rt(o);
    try {
      rt.pmap([](std::span<const Array>) { return std::vector<Array>{zeros({1 << 20}, DType::kFloat32)}; },
              std::vector<Array>{x}, axis_i());
      FAIL("no error");
    } catch (const OutOfMemoryError& e) {
      CHECK(e.report().message.find("device 0: out of memory allocating 4.0 MiB for zeros") != std::string::npos);
    }
  }
  {
    RuntimeOptions o = cuda_options(1);
    o.arena_capacity = detail::Arena::kUnlimited;
    Runtime rt(o);
    try {
      rt.pmap([](std::span<const Array>) { return std::vector<Array>{zeros({std::int64_t{1} << 42}, DType::kFloat32)}; },
              std::vector<Array>{x}, axis_i());
      FAIL("no error");
    } catch (const OutOfMemoryError& e) {
      CHECK(e.report().message.find("GPU 0 is out of memory allocating 16.0 TiB for zeros") != std::string::npos);
    }
    // The device stays usable.
    auto out = rt.pmap([](std::span<const Array> a) { return std::vector<Array>{a[0] + a[0]}; },
                       std::vector<Array>{x}, axis_i());
    CHECK(out[0].to_doubles() == std::vector<double>{2});
    CHECK(rt.arena_usage(0).live_bytes == 0);
  }
  std::printf("verified: arena capacity and GPU exhaustion reports; buffers released after a run\n");
}

TEST_CASE("cuda: nested pmap is a clear BackendError", "[cuda]") {
  Runtime rt(cuda_options(2));
  Array x = Array::from_doubles(std::vector<double>{1, 2}, {2}, DType::kFloat32);
  try {
    rt.pmap(
        [&](std::span<const Array> a) {
          return pmap([](std::span<const Array> b) { return std::vector<Array>{b[0]}; },
                      std::vector<Array>{reshape(a[0], {1})}, axis_i());
        },
        std::vector<Array>{x}, axis_i());
    FAIL("no error");
  } catch (const BackendError& e) {
    CHECK(e.report().message == "nested pmap is not supported on the cuda backend");
  }
}

TEST_CASE("cuda: deadlocks and mismatches are reported as on the simulator, before any data moves", "[cuda]") {
  Array x = Array::from_doubles(std::vector<double>{1, 2}, {2}, DType::kFloat32);
  auto report_of = [&](const std::string& backend, const ProgramFn& fn) {
    RuntimeOptions o;
    o.devices = 2;
    o.backend = backend;
    Runtime rt(o);
    try {
      rt.pmap(fn, std::vector<Array>{x}, axis_i());
    } catch (const Error& e) {
      return e.report();
    }
    return Report{};
  };
  ProgramFn skip = [](std::span<const Array> a) {
    if (axis_index("i").element_as_int64(0) == 1) return std::vector<Array>{a[0]};
    return std::vector<Array>{psum(a[0], "i")};
  };
  ProgramFn shapes = [](std::span<const Array> a) {
    Array y = axis_index("i").element_as_int64(0) == 1 ? stack({a[0], a[0]}, 0) : a[0];
    return std::vector<Array>{psum(y, "i")};
  };
  for (const auto& [name, fn] : {std::pair{"deadlock", skip}, std::pair{"mismatch", shapes}}) {
    Report sim = report_of("sim", fn);
    Report gpu = report_of("cuda", fn);
    INFO(name);
    CHECK(!sim.kind.empty());
    CHECK(gpu.kind == sim.kind);
    CHECK(gpu.message == sim.message);
  }
  std::printf("verified: deadlock and collective-mismatch reports on the cuda backend equal the simulator's\n");
}

TEST_CASE("cuda: --trace has the simulator's schema with backend cuda", "[cuda]") {
  Array x = Array::from_doubles(std::vector<double>{1, 2}, {2}, DType::kFloat32);
  auto trace = [&](const std::string& backend) {
    std::ostringstream out;
    RuntimeOptions o;
    o.devices = 2;
    o.backend = backend;
    o.deterministic = true;
    o.observers.push_back(std::make_shared<JsonlTraceWriter>(out, true));
    Runtime rt(o);
    rt.pmap([](std::span<const Array> a) { return std::vector<Array>{all_gather(psum(a[0], "i"), "i")}; },
            std::vector<Array>{x}, axis_i());
    std::vector<std::string> lines;
    std::istringstream in(out.str());
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  };
  auto sim = trace("sim");
  auto gpu = trace("cuda");
  REQUIRE(!gpu.empty());
  CHECK(gpu[0].find("\"backend\":\"cuda\"") != std::string::npos);
  // The same events (device threads interleave differently): compare as sets.
  for (auto& l : sim) {
    auto p = l.find("\"backend\":\"sim\"");
    if (p != std::string::npos) l.replace(p, 15, "\"backend\":\"cuda\"");
  }
  std::sort(sim.begin(), sim.end());
  std::sort(gpu.begin(), gpu.end());
  CHECK(gpu == sim);
  std::printf("verified: --trace events on the cuda backend equal the simulator's (backend \"cuda\")\n");
}

TEST_CASE("cuda: the watchdog ends a run stuck below the host, naming the op", "[fault]") {
  set_transport("auto");
  int* flag = nullptr;
  REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(int), cudaHostAllocMapped) == cudaSuccess);
  *flag = 0;
  int* dev_flag = nullptr;
  REQUIRE(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_flag), flag, 0) == cudaSuccess);
  RuntimeOptions o = cuda_options(1);
  o.watchdog_s = 2;
  Runtime rt(o);
  Array x = Array::from_doubles(std::vector<double>{1}, {1}, DType::kFloat32);
  try {
    rt.pmap(
        [&](std::span<const Array> a) {
          auto res = cuda::DeviceTable::instance().at(0);
          cuda::kernels::spin_until(res->stream, dev_flag);
          return std::vector<Array>{psum(a[0], "i")};
        },
        std::vector<Array>{x}, axis_i());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == "WatchdogTimeout");
    CHECK(e.report().message == "watchdog: psum over 'i' #0 did not complete within 2 s on device 0");
    std::string details;
    for (const auto& d : e.report().details) details += d + "\n";
    CHECK(details.find("device 0") != std::string::npos);
  }
  *reinterpret_cast<volatile int*>(flag) = 1;
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  cudaFreeHost(flag);
  std::printf("verified: the watchdog stops a run stuck in a kernel after --watchdog-seconds and names the op\n");
}

TEST_CASE("cuda: a faulting kernel ends the run with a BackendError naming the device", "[fault]") {
  set_transport("auto");
  Runtime rt(cuda_options(1));
  Array x = Array::from_doubles(std::vector<double>{1}, {1}, DType::kFloat32);
  try {
    rt.pmap(
        [&](std::span<const Array> a) {
          cuda::kernels::fault(cuda::DeviceTable::instance().at(0)->stream);
          return std::vector<Array>{a[0] * a[0]};
        },
        std::vector<Array>{x}, axis_i());
    FAIL("no error");
  } catch (const BackendError& e) {
    INFO(e.report().message);
    CHECK(e.report().message.rfind("device 0: ", 0) == 0);
    CHECK(e.report().message.find("(cudaErrorIllegalAddress)") != std::string::npos);
  }
  std::printf("verified: an illegal address in a kernel becomes a BackendError naming the device\n");
}
