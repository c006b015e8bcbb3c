// The floor under spmdsim's barrier: N bare Boost.Fiber fibers (default
// scheduler, default stacks) meet at a barrier where the last arriver
// schedules the others directly, recording nothing. A spmdsim barrier over N
// devices cannot be cheaper than this; the README quotes both.
//
//   build/bin/spmd_bench_fiber_floor [N=1024] [ITERS=2000]

#include <boost/fiber/all.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  using boost::fibers::context;
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 2000;
  if (n < 1 || iters < 1) {
    std::fprintf(stderr, "usage: %s [N>=1] [ITERS>=1]\n", argv[0]);
    return 2;
  }
  std::vector<context*> parked;
  parked.reserve(static_cast<std::size_t>(n));
  int arrived = 0;
  std::chrono::steady_clock::time_point t0, t1;
  std::vector<boost::fibers::fiber> fibers;
  for (int i = 0; i < n; ++i) {
    fibers.emplace_back(boost::fibers::launch::post, [&, i] {
      for (int k = 0; k <= iters; ++k) {
        if (i == 0 && k == 1) t0 = std::chrono::steady_clock::now();  // after one warm-up barrier
        if (++arrived == n) {
          arrived = 0;
          for (context* c : parked) context::active()->schedule(c);
          parked.clear();
        } else {
          parked.push_back(context::active());
          context::active()->suspend();
        }
      }
      if (i == 0) t1 = std::chrono::steady_clock::now();
    });
  }
  for (auto& f : fibers) f.join();
  std::printf("bare Boost.Fiber barrier, %d fibers: %.2f us per barrier (%d barriers)\n", n,
              std::chrono::duration<double, std::micro>(t1 - t0).count() / iters, iters);
  return 0;
}
