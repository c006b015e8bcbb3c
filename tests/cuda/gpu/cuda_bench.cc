// psum / all_gather bandwidth on the cuda backend against the GPU's own
// device-to-device copy bandwidth (cudaMemcpy probe), for tools/gpu-check.sh.
//
//   spmd_cuda_bench [--devices N] [--transport nccl|copy] [--max-mib M] [--json FILE]
//
// Time per collective is measured on device 0 around a loop of collectives
// (each completes before the next starts: the backend waits for it). GB/s is
// the per-device payload over that time ("algorithm bandwidth"); for psum the
// NCCL "bus bandwidth" 2(n-1)/n x algbw is printed too. The probe counts the
// bytes read plus written by a device-to-device cudaMemcpy.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "spmd/spmd.h"

using namespace spmd;

namespace {

double memcpy_probe_gbs(std::size_t bytes) {
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) return 0;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  const int reps = 10;
  cudaEventRecord(e0);
  for (int i = 0; i < reps; ++i) cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * static_cast<double>(bytes) * reps / (ms * 1e-3) / 1e9;
}

struct Row {
  std::string op;
  int devices;
  std::size_t bytes;
  double us;
  double algbw;
  double busbw;
};

}  // namespace

int main(int argc, char** argv) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  int devices = std::min(gpus, 8);
  std::string transport = "auto";
  int max_mib = 256;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--devices") devices = std::atoi(argv[i + 1]);
    else if (a == "--transport") transport = argv[i + 1];
    else if (a == "--max-mib") max_mib = std::atoi(argv[i + 1]);
    else if (a == "--json") json_path = argv[i + 1];
  }
  ::setenv("SPMD_CUDA_TRANSPORT", transport.c_str(), 1);
  const double probe = memcpy_probe_gbs(std::size_t{256} << 20);
  std::printf("memcpy probe (device to device, read+write): %.1f GB/s\n", probe);
  RuntimeOptions o;
  o.devices = devices;
  o.backend = "cuda";
  o.arena_capacity = std::size_t{8} << 30;
  Runtime rt(o);
  std::vector<Row> rows;
  PmapOptions p;
  p.axis_name = "i";
  p.axis_size = devices;
  for (std::size_t mib : {std::size_t{1}, std::size_t{16}, std::size_t{64}, std::size_t{256}}) {
    if (mib > static_cast<std::size_t>(max_mib)) break;
    const std::size_t bytes = mib << 20;
    const auto count = static_cast<std::int64_t>(bytes / 4);
    const int iters = mib >= 64 ? 5 : 20;
    for (const std::string op : {"psum", "all_gather"}) {
      double seconds = 0;
      rt.pmap(
          [&](std::span<const Array>) {
            Array x = ones({count}, DType::kFloat32);
            auto run = [&] { return op == "psum" ? psum(x, "i") : all_gather(x, "i", 0, true); };
            run();  // warm up: communicators, pool
            auto t0 = std::chrono::steady_clock::now();
            for (int k = 0; k < iters; ++k) run();
            auto t1 = std::chrono::steady_clock::now();
            if (axis_index("i").element_as_int64(0) == 0) seconds = std::chrono::duration<double>(t1 - t0).count() / iters;
            return std::vector<Array>{};
          },
          {}, p);
      double algbw = static_cast<double>(bytes) / seconds / 1e9;
      double busbw = op == "psum" ? algbw * 2.0 * (devices - 1) / std::max(devices, 1)
                                  : algbw * (devices - 1);
      rows.push_back({op, devices, bytes, seconds * 1e6, algbw, busbw});
      std::printf("%-10s %2d devices %4zu MiB/device: %9.1f us  %7.1f GB/s algbw  %7.1f GB/s busbw  (%.0f%% of memcpy)\n",
                  op.c_str(), devices, mib, seconds * 1e6, algbw, busbw, probe > 0 ? 100.0 * algbw / probe : 0.0);
    }
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"memcpy_gbs\": " << probe << ", \"transport\": \"" << transport << "\", \"rows\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << (i ? ", " : "") << "{\"op\": \"" << r.op << "\", \"devices\": " << r.devices << ", \"bytes\": " << r.bytes
          << ", \"us\": " << r.us << ", \"algbw_gbs\": " << r.algbw << ", \"busbw_gbs\": " << r.busbw << "}";
    }
    out << "]}\n";
  }
  return 0;
}
