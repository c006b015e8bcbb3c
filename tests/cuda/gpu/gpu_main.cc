// The GPU tests' main: without a usable CUDA device they say so and exit 77,
// which ctest reports as skipped (SKIP_RETURN_CODE).

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <cstdio>

int main(int argc, char** argv) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0) {
    std::printf("skipped: no CUDA device (%s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0");
    return 77;
  }
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) == cudaSuccess) {
      std::printf("GPU %d: %s, %.1f GiB, sm_%d%d\n", d, p.name, static_cast<double>(p.totalGlobalMem) / (1 << 30),
                  p.major, p.minor);
    }
  }
  return Catch::Session().run(argc, argv);
}
