// spmd_bench_mpi_allreduce: the Open MPI peer of spmd_bench_collectives' psum.
// Each of the N ranks reduces S bytes of float32 with MPI_Allreduce(MPI_SUM)
// into a separate output buffer (as psum writes each device's own output).
//
//   mpirun --oversubscribe -np 8 spmd_bench_mpi_allreduce --sizes 1K,1M,64M [--csv out.csv]
//
// Per repetition: MPI_Barrier, `iters` back-to-back allreduces, the slowest
// rank's time / iters. The median over repetitions is reported. Uses MPI's C
// API only (the project is C++; no MPI C++ bindings needed).

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::size_t parse_size(const std::string& text) {
  std::size_t pos = 0;
  double v = std::stod(text, &pos);
  std::string unit = text.substr(pos);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") unit.resize(unit.size() - 2);
  if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  double mul = unit == "K" ? 1024.0 : unit == "M" ? 1024.0 * 1024 : unit == "G" ? 1024.0 * 1024 * 1024 : 1.0;
  return static_cast<std::size_t>(v * mul);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The slowest rank's elapsed time for `iters` allreduces.
double timed(const float* in, float* out, int count, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int k = 0; k < iters; ++k) MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double local = MPI_Wtime() - t0, slowest = 0;
  MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  std::vector<std::string> sizes = {"1K", "1M", "64M"};
  int reps = 5, fixed_iters = 0, max_iters = 100000;
  double target_ms = 100, case_budget_s = 8;
  std::string csv_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        if (rank == 0) std::fprintf(stderr, "%s needs a value\n", a.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      return argv[++i];
    };
    if (a == "--sizes" || a == "-s") sizes = split(next());
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--iters") fixed_iters = std::atoi(next().c_str());
    else if (a == "--max-iters") max_iters = std::atoi(next().c_str());
    else if (a == "--target-ms") target_ms = std::atof(next().c_str());
    else if (a == "--case-budget") case_budget_s = std::atof(next().c_str());
    else if (a == "--csv") csv_path = next();
    else {
      if (rank == 0) {
        std::fprintf(stderr,
                     "usage: mpirun -np N %s [--sizes 1K,1M,64M] [--reps 5] [--iters K | --target-ms 100] "
                     "[--max-iters 100000] [--case-budget 8] [--csv FILE]\n",
                     argv[0]);
      }
      MPI_Finalize();
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }

  FILE* csv = nullptr;
  if (rank == 0) {
    std::printf("MPI_Allreduce(MPI_FLOAT, MPI_SUM), %d ranks, separate send/recv buffers\n", nranks);
    std::printf("%-9s %6s %13s %11s %11s %11s\n", "size", "ranks", "iters x reps", "median/op", "min/op", "algbw GB/s");
    if (!csv_path.empty()) {
      csv = csv_path == "-" ? stdout : std::fopen(csv_path.c_str(), "w");
      if (csv) std::fprintf(csv, "op,devices,bytes,iters,reps,median_s,min_s,max_s,algbw_gbs\n");
    }
  }
  for (const std::string& s : sizes) {
    const std::size_t bytes = parse_size(s);
    const int count = static_cast<int>(bytes / sizeof(float));
    std::vector<float> in(static_cast<std::size_t>(count), static_cast<float>(rank % 7 + 1));
    std::vector<float> out(static_cast<std::size_t>(count), 0.0f);
    // Warm-up (timed: it calibrates iters/reps), and a check of the result.
    double one = std::max(timed(in.data(), out.data(), count, 1), 1e-9);
    if (rank == 0 && count > 0) {
      double expect = 0;
      for (int r = 0; r < nranks; ++r) expect += r % 7 + 1;
      if (out[static_cast<std::size_t>(count - 1)] != static_cast<float>(expect)) {
        std::fprintf(stderr, "MPI_Allreduce gave %g, expected %g\n", out[static_cast<std::size_t>(count - 1)], expect);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    int iters = fixed_iters > 0 ? fixed_iters : std::clamp(static_cast<int>(target_ms * 1e-3 / one), 1, max_iters);
    int n_reps = std::clamp(static_cast<int>(case_budget_s / (one * iters)), 1, reps);
    std::vector<double> samples;
    if (fixed_iters == 0 && one > case_budget_s) {
      n_reps = 0;  // one op costs more than the whole case may: report the warm-up op alone
      samples.push_back(one);
    }
    for (int r = 0; r < n_reps; ++r) samples.push_back(timed(in.data(), out.data(), count, iters) / iters);
    if (rank == 0) {
      double med = median(samples);
      double lo = *std::min_element(samples.begin(), samples.end());
      double hi = *std::max_element(samples.begin(), samples.end());
      double algbw = static_cast<double>(bytes) / med / 1e9;
      char runs[32];
      if (n_reps == 0) std::snprintf(runs, sizeof runs, "%13s", "1 (warm-up)");
      else std::snprintf(runs, sizeof runs, "%6d x %-4d", iters, n_reps);
      std::printf("%-9s %6d %s %9.2f us %9.2f us %11.3f\n", s.c_str(), nranks, runs, med * 1e6, lo * 1e6, algbw);
      std::fflush(stdout);
      if (csv) {
        std::fprintf(csv, "mpi_allreduce,%d,%zu,%d,%d,%.9g,%.9g,%.9g,%.6g\n", nranks, bytes, iters, n_reps, med, lo,
                     hi, algbw);
      }
    }
  }
  if (csv && csv != stdout) std::fclose(csv);
  MPI_Finalize();
  return 0;
}
