// spmd_bench_collectives: time per collective (psum, all_gather, ppermute,
// barrier) over many virtual devices, bandwidth against a memcpy probe run in
// the same process, and the cost of creating 100k devices.
//
// Each case runs inside one pmap: every device warms up, then does `reps`
// repetitions of `iters` back-to-back collectives; device 0 times each
// repetition (barrier, t0, iters x op, t1) and the median over repetitions is
// reported. Device 0 leaving the last op means that op completed on every
// device: the data plane runs once, for all members, when the last one arrives.

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "spmd/spmd.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "1K", "1KiB", "64M", "1G", "4096" -> bytes (binary units).
std::size_t parse_size(const std::string& text) {
  std::size_t pos = 0;
  double v = std::stod(text, &pos);
  std::string unit = text.substr(pos);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::toupper(c); });
  if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
  if (unit.ends_with("B")) unit.pop_back();
  double mul = 1;
  if (unit == "K") mul = 1024.0;
  else if (unit == "M") mul = 1024.0 * 1024;
  else if (unit == "G") mul = 1024.0 * 1024 * 1024;
  else if (!unit.empty()) throw std::invalid_argument("bad size unit in '" + text + "' (use K, M or G)");
  return static_cast<std::size_t>(v * mul);
}

std::string format_size(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.4g GiB", bytes / (1024.0 * 1024 * 1024));
  else if (bytes >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.4g MiB", bytes / (1024.0 * 1024));
  else if (bytes >= 1024.0) std::snprintf(buf, sizeof buf, "%.4g KiB", bytes / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

std::string format_time(double s) {
  char buf[32];
  if (s < 1e-6) std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  else if (s < 1e-3) std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  else if (s < 1) std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f s", s);
  return buf;
}

std::size_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::size_t{8} << 30;
}

std::size_t mem_total() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::size_t kib = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib * 1024;
  }
  return 0;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::size_t peak_rss() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::size_t>(ru.ru_maxrss) * 1024;
}

std::size_t current_rss() {
  std::ifstream in("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

// --- configuration ------------------------------------------------------------

struct Config {
  std::vector<std::string> ops = {"create", "barrier", "psum", "all_gather", "ppermute"};
  std::vector<int> devices = {8, 64, 1024, 8192};
  std::vector<std::string> sizes = {"1K", "1M", "64M"};
  std::vector<int> threads = {1};
  int iters = 0;            // 0: calibrated so that a repetition takes ~target_ms
  double target_ms = 100;   // per repetition when calibrating
  int max_iters = 100000;
  int reps = 5;
  int warmup = 2;
  double case_budget_s = 8;  // fewer repetitions when one op is slow; none past it
  std::string mem_limit;      // "" = 60% of MemAvailable at start
  std::string stack = "64K";  // fiber stack for the collective cases
  int create_devices = 100000;
  std::string create_stack = "16K";
  std::string memcpy_size = "256M";
  int memcpy_reps = 7;
  std::string json_path;
  std::string csv_path;
};

// --- results ------------------------------------------------------------------

struct Result {
  std::string op;
  int devices = 0;
  std::size_t bytes = 0;  // per device
  int threads = 1;
  int iters = 0;
  int reps = 0;
  double median_s = 0;  // per collective
  double min_s = 0;
  double max_s = 0;
  double algbw = 0;      // GB/s: bytes per device / time
  double traffic = 0;    // bytes of memory read+written per collective (model)
  double traffic_bw = 0;  // GB/s
  double of_memcpy = 0;   // traffic_bw / memcpy bandwidth
  std::string skipped;    // non-empty: why the case did not run
  // create: wall time, RSS
  double create_s = 0;
  std::size_t rss_peak = 0;
  std::size_t rss_before = 0;
};

struct MemcpyProbe {
  std::size_t bytes = 0;
  double one_thread_gbs = 0;  // (read + write) bytes / s / 1e9
  double all_threads_gbs = 0;
  int threads = 1;
  double fresh_gbs = 0;  // memset into freshly mapped pages (each page faulted in), bytes / s / 1e9
  double reference_gbs() const { return std::max(one_thread_gbs, all_threads_gbs); }
};

// --- memcpy probe ---------------------------------------------------------------

MemcpyProbe probe_memcpy(std::size_t bytes, int reps) {
  MemcpyProbe p;
  p.bytes = bytes;
  p.threads = std::max(1u, std::thread::hardware_concurrency());
  std::unique_ptr<char[]> src(new char[bytes]);
  std::unique_ptr<char[]> dst(new char[bytes]);
  std::memset(src.get(), 1, bytes);  // touch every page before timing
  std::memset(dst.get(), 2, bytes);
  std::vector<double> t1;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    std::memcpy(dst.get(), src.get(), bytes);
    t1.push_back(seconds_since(t0));
  }
  p.one_thread_gbs = 2.0 * static_cast<double>(bytes) / median(t1) / 1e9;

  // All cores at once, each copying its slice (the data plane uses oneTBB for large psums).
  const int n = p.threads;
  std::vector<double> tn;
  std::barrier sync(n + 1);
  std::vector<std::thread> pool;
  const std::size_t slice = bytes / static_cast<std::size_t>(n);
  for (int t = 0; t < n; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < reps; ++r) {
        sync.arrive_and_wait();
        std::memcpy(dst.get() + static_cast<std::size_t>(t) * slice, src.get() + static_cast<std::size_t>(t) * slice,
                    slice);
        sync.arrive_and_wait();
      }
    });
  }
  for (int r = 0; r < reps; ++r) {
    sync.arrive_and_wait();
    auto t0 = Clock::now();
    sync.arrive_and_wait();
    tn.push_back(seconds_since(t0));
  }
  for (auto& t : pool) t.join();
  p.all_threads_gbs = 2.0 * static_cast<double>(slice * static_cast<std::size_t>(n)) / median(tn) / 1e9;

  // First touch: what writing a freshly allocated output costs (glibc serves
  // big allocations with mmap, so a new output is page faults first).
  // At most 64 MiB: page faults can be slow enough (VMs) to dominate the probe.
  const std::size_t fresh = std::min(bytes, std::size_t{64} << 20);
  std::vector<double> tf;
  for (int r = 0; r < std::min(reps, 3); ++r) {
    void* m = mmap(nullptr, fresh, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) break;
    auto t0 = Clock::now();
    std::memset(m, 3, fresh);
    tf.push_back(seconds_since(t0));
    munmap(m, fresh);
  }
  if (!tf.empty()) p.fresh_gbs = static_cast<double>(fresh) / median(tf) / 1e9;
  return p;
}

// --- models -------------------------------------------------------------------

// The simulator writes a result that every member gets (psum, all_gather)
// once, into one block the members' outputs share (src/core/replicas.h).
const char* traffic_model(const std::string& op) {
  if (op == "psum") return "(N+1)*S: reads the N inputs once, writes the result once (the N outputs share it)";
  if (op == "all_gather") return "2*N*S: reads the N inputs once, writes the N*S result once (the N outputs share it)";
  if (op == "ppermute") return "2*N*S: a ring shift, each device's S bytes read once and written once";
  if (op == "barrier") return "no data: time of one rendezvous of all N devices";
  return "";
}

double traffic_bytes(const std::string& op, double n, double s) {
  if (op == "psum") return (n + 1) * s;
  if (op == "ppermute" || op == "all_gather") return 2 * n * s;
  return 0;
}

// Resident bytes the case needs: every device's input, and the outputs. The
// data plane reads each input and writes each output byte once, so this is
// the traffic model.
double resident_bytes(const std::string& op, double n, double s) { return traffic_bytes(op, n, s); }

const char* resident_model(const std::string& op) { return op == "psum" ? "N*S in + S out" : "N*S in + N*S out"; }

// --- one collective case -------------------------------------------------------

struct Shared {
  int iters = 1;
  int reps = 1;
  bool warm = false;  // set by device 0: stop warming up
  std::vector<double> samples;  // seconds per collective, one per repetition
  bool check_failed = false;
  std::string check_message;
};

Result run_case(const Config& cfg, const std::string& op, int n, std::size_t bytes, int threads) {
  Result res;
  res.op = op;
  res.devices = n;
  res.bytes = op == "barrier" ? 0 : bytes;
  res.threads = threads;

  spmd::RuntimeOptions ro;
  ro.devices = n;
  ro.threads = threads;
  ro.fiber_stack_size = parse_size(cfg.stack);
  ro.print_sink = [](const spmd::DebugPrint&) {};
  spmd::Runtime rt(ro);

  const std::int64_t elems = static_cast<std::int64_t>(bytes / sizeof(float));
  spmd::Permutation ring;
  if (op == "ppermute") {
    for (int i = 0; i < n; ++i) ring.emplace_back(i, (i + 1) % n);
  }
  Shared sh;
  const spmd::AxisSet axis("i");
  // Decided once: the timed loop should cost the collective, not a string compare.
  enum class Op { kBarrier, kPsum, kAllGather, kPpermute };
  const Op kind = op == "barrier" ? Op::kBarrier : op == "psum" ? Op::kPsum : op == "all_gather" ? Op::kAllGather : Op::kPpermute;

  auto body = [&](std::span<const spmd::Array>) -> std::vector<spmd::Array> {
    const spmd::DeviceInfo me = spmd::current_device();
    const bool lead = me.index_in_pmap == 0;
    spmd::Array x;
    if (op != "barrier") {
      x = spmd::Array::uninitialized({elems}, spmd::DType::kFloat32, "bench input");
      float* p = x.mutable_data<float>();
      std::fill(p, p + elems, static_cast<float>(me.index_in_pmap % 7 + 1));
    }
    auto once = [&](bool check) {
      if (kind == Op::kBarrier) {
        spmd::barrier(axis);
      } else if (kind == Op::kPsum) {
        spmd::Array y = spmd::psum(x, axis);
        if (check && lead && elems > 0) {
          double expect = 0;
          for (int i = 0; i < n; ++i) expect += i % 7 + 1;
          if (y.data<float>()[elems - 1] != static_cast<float>(expect)) {
            sh.check_failed = true;
            sh.check_message = "psum gave " + std::to_string(y.data<float>()[elems - 1]) + ", expected " +
                               std::to_string(expect);
          }
        }
      } else if (kind == Op::kAllGather) {
        spmd::Array y = spmd::all_gather(x, axis);
        if (check && lead && elems > 0 && y.data<float>()[static_cast<std::int64_t>(n - 1) * elems] !=
                                              static_cast<float>((n - 1) % 7 + 1)) {
          sh.check_failed = true;
          sh.check_message = "all_gather placed a wrong block";
        }
      } else if (kind == Op::kPpermute) {
        spmd::Array y = spmd::ppermute(x, axis, ring);
        if (check && lead && elems > 0 && y.data<float>()[0] != static_cast<float>((n - 1) % 7 + 1)) {
          sh.check_failed = true;
          sh.check_message = "ppermute delivered a wrong block";
        }
      }
    };
    // Warm-up, timed by device 0: the last warm-up op calibrates iters/reps.
    // The others read them after the barrier (the rendezvous orders the accesses).
    Clock::time_point t0;
    double last = 0;
    for (int w = 0; w < std::max(1, cfg.warmup); ++w) {
      spmd::barrier(axis);
      if (sh.warm) break;  // device 0 found one op slow enough
      if (lead) t0 = Clock::now();
      once(w == 0);
      if (lead) {
        last = std::max(seconds_since(t0), 1e-9);
        sh.warm = cfg.iters == 0 && last > cfg.case_budget_s / 4;
      }
    }
    if (lead) {
      sh.iters = cfg.iters > 0 ? cfg.iters
                               : std::clamp(static_cast<int>(cfg.target_ms * 1e-3 / last), 1, cfg.max_iters);
      sh.reps = std::clamp(static_cast<int>(cfg.case_budget_s / (last * sh.iters)), 1, cfg.reps);
      if (cfg.iters == 0 && last > cfg.case_budget_s) {
        // One op costs more than the whole case may: report the warm-up op alone.
        sh.reps = 0;
        sh.samples.push_back(last);
      }
    }
    spmd::barrier(axis);
    const int iters = sh.iters, reps = sh.reps;
    for (int r = 0; r < reps; ++r) {
      spmd::barrier(axis);
      if (lead) t0 = Clock::now();
      for (int k = 0; k < iters; ++k) once(false);
      if (lead) sh.samples.push_back(seconds_since(t0) / iters);
    }
    return {};
  };

  spmd::PmapOptions po;
  po.axis_name = "i";
  po.axis_size = n;
  rt.pmap(body, std::span<const spmd::Array>{}, po);
  if (sh.check_failed) throw std::runtime_error(op + " over " + std::to_string(n) + " devices: " + sh.check_message);

  res.iters = sh.iters;
  res.reps = sh.reps;
  res.median_s = median(sh.samples);
  res.min_s = *std::min_element(sh.samples.begin(), sh.samples.end());
  res.max_s = *std::max_element(sh.samples.begin(), sh.samples.end());
  if (res.bytes > 0) {
    res.algbw = static_cast<double>(bytes) / res.median_s / 1e9;
    res.traffic = traffic_bytes(op, n, static_cast<double>(bytes));
    res.traffic_bw = res.traffic / res.median_s / 1e9;
  }
  return res;
}

// --- device creation ------------------------------------------------------------

Result run_create(const Config& cfg, bool with_barrier) {
  Result res;
  res.op = with_barrier ? "create+barrier" : "create";
  res.devices = cfg.create_devices;
  res.rss_before = current_rss();
  auto t0 = Clock::now();
  {
    spmd::RuntimeOptions ro;
    ro.devices = cfg.create_devices;
    ro.fiber_stack_size = parse_size(cfg.create_stack);
    ro.print_sink = [](const spmd::DebugPrint&) {};
    spmd::Runtime rt(ro);
    spmd::PmapOptions po;
    po.axis_name = "i";
    po.axis_size = cfg.create_devices;
    rt.pmap(
        [with_barrier](std::span<const spmd::Array>) -> std::vector<spmd::Array> {
          if (with_barrier) spmd::barrier("i");
          return {};
        },
        std::span<const spmd::Array>{}, po);
    res.create_s = seconds_since(t0);
  }
  res.median_s = res.min_s = res.max_s = res.create_s;
  res.iters = res.reps = 1;
  res.rss_peak = peak_rss();
  return res;
}

// --- output ---------------------------------------------------------------------

void print_header(const Config& cfg, const MemcpyProbe* mp, std::size_t limit) {
  std::printf("spmdsim collective benchmark\n");
  std::printf("machine: %u hardware threads, %s RAM (%s available at start), load average %s; case memory limit %s\n",
              std::thread::hardware_concurrency(), format_size(static_cast<double>(mem_total())).c_str(),
              format_size(static_cast<double>(mem_available())).c_str(), load_average().c_str(),
              format_size(static_cast<double>(limit)).c_str());
  if (mp) {
    std::printf("memcpy probe (%s, median of %d, bandwidth = (read + write) bytes / time):\n",
                format_size(static_cast<double>(mp->bytes)).c_str(), cfg.memcpy_reps);
    std::printf("  1 thread:   %.2f GB/s\n  %d threads:  %.2f GB/s   <- reference (the best of the two)\n",
                mp->one_thread_gbs, mp->threads, mp->all_threads_gbs);
    std::printf("  first touch (memset into fresh mmap pages, <= 64 MiB, write bytes / time): %.2f GB/s\n", mp->fresh_gbs);
  }
  std::printf("GB = 1e9 bytes. algbw = S / t (S = bytes per device). traffic = bytes the data plane must read+write:\n");
  for (const char* op : {"psum", "all_gather", "ppermute", "barrier"}) {
    if (std::find(cfg.ops.begin(), cfg.ops.end(), op) != cfg.ops.end()) std::printf("  %-10s %s\n", op, traffic_model(op));
  }
  std::printf("\n");
}

void print_row_header() {
  std::printf("%-11s %7s %9s %3s %12s %11s %11s %10s %12s %8s\n", "op", "devices", "size", "thr", "iters x reps",
              "median/op", "min/op", "algbw GB/s", "traffic GB/s", "%memcpy");
}

void print_row(const Result& r) {
  if (!r.skipped.empty()) {
    std::printf("%-11s %7d %9s %3d  skipped: %s\n", r.op.c_str(), r.devices, format_size(static_cast<double>(r.bytes)).c_str(),
                r.threads, r.skipped.c_str());
    return;
  }
  char runs[32];
  if (r.reps == 0) std::snprintf(runs, sizeof runs, "%12s", "1 (warm-up)");
  else std::snprintf(runs, sizeof runs, "%6d x %-5d", r.iters, r.reps);
  if (r.bytes == 0) {
    std::printf("%-11s %7d %9s %3d %s %11s %11s %10s %12s %8s\n", r.op.c_str(), r.devices, "-", r.threads, runs,
                format_time(r.median_s).c_str(), format_time(r.min_s).c_str(), "-", "-", "-");
  } else {
    std::printf("%-11s %7d %9s %3d %s %11s %11s %10.3f %12.2f %7.1f%%\n", r.op.c_str(), r.devices,
                format_size(static_cast<double>(r.bytes)).c_str(), r.threads, runs, format_time(r.median_s).c_str(),
                format_time(r.min_s).c_str(), r.algbw, r.traffic_bw, 100 * r.of_memcpy);
  }
  std::fflush(stdout);
}

void write_json(const std::string& path, const MemcpyProbe* mp, const std::vector<Result>& results) {
  std::ostringstream o;
  o << "{\n  \"machine\": {\"hardware_threads\": " << std::thread::hardware_concurrency()
    << ", \"mem_total_bytes\": " << mem_total() << "},\n";
  if (mp) {
    o << "  \"memcpy\": {\"bytes\": " << mp->bytes << ", \"one_thread_gbs\": " << mp->one_thread_gbs
      << ", \"all_threads_gbs\": " << mp->all_threads_gbs << ", \"threads\": " << mp->threads
      << ", \"fresh_touch_gbs\": " << mp->fresh_gbs
      << ", \"reference_gbs\": " << mp->reference_gbs() << "},\n";
  }
  o << "  \"models\": {";
  bool first = true;
  for (const char* op : {"psum", "all_gather", "ppermute", "barrier"}) {
    o << (first ? "" : ", ") << "\"" << op << "\": \"" << traffic_model(op) << "\"";
    first = false;
  }
  o << "},\n  \"results\": [\n";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    o << "    {\"op\": \"" << r.op << "\", \"devices\": " << r.devices << ", \"bytes\": " << r.bytes
      << ", \"threads\": " << r.threads;
    if (!r.skipped.empty()) {
      o << ", \"skipped\": \"" << json_escape(r.skipped) << "\"}";
    } else {
      o << ", \"iters\": " << r.iters << ", \"reps\": " << r.reps << ", \"median_s\": " << r.median_s
        << ", \"min_s\": " << r.min_s << ", \"max_s\": " << r.max_s << ", \"algbw_gbs\": " << r.algbw
        << ", \"traffic_bytes\": " << r.traffic << ", \"traffic_gbs\": " << r.traffic_bw
        << ", \"fraction_of_memcpy\": " << r.of_memcpy;
      if (r.op.starts_with("create")) {
        o << ", \"rss_before_bytes\": " << r.rss_before << ", \"rss_peak_bytes\": " << r.rss_peak;
      }
      o << "}";
    }
    o << (i + 1 < results.size() ? ",\n" : "\n");
  }
  o << "  ]\n}\n";
  if (path == "-") {
    std::cout << o.str();
  } else {
    std::ofstream(path) << o.str();
  }
}

void write_csv(const std::string& path, const std::vector<Result>& results) {
  std::ostringstream o;
  o << "op,devices,bytes,threads,iters,reps,median_s,min_s,max_s,algbw_gbs,traffic_gbs,fraction_of_memcpy,"
       "rss_peak_bytes,skipped\n";
  for (const Result& r : results) {
    std::string why = r.skipped;
    std::replace(why.begin(), why.end(), ',', ';');
    o << r.op << ',' << r.devices << ',' << r.bytes << ',' << r.threads << ',' << r.iters << ',' << r.reps << ','
      << r.median_s << ',' << r.min_s << ',' << r.max_s << ',' << r.algbw << ',' << r.traffic_bw << ','
      << r.of_memcpy << ',' << r.rss_peak << ',' << why << '\n';
  }
  if (path == "-") {
    std::cout << o.str();
  } else {
    std::ofstream(path) << o.str();
  }
}

bool wants(const Config& cfg, const std::string& op) {
  return std::find(cfg.ops.begin(), cfg.ops.end(), op) != cfg.ops.end();
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  CLI::App app{"spmdsim collective benchmark: psum / all_gather / ppermute / barrier over N virtual devices, "
               "against a memcpy probe; device creation at scale"};
  app.add_option("--ops", cfg.ops, "create, barrier, psum, all_gather, ppermute (comma separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"create", "barrier", "psum", "all_gather", "ppermute", "memcpy"}))
      ->capture_default_str();
  app.add_option("-n,--devices", cfg.devices, "device counts")->delimiter(',')->capture_default_str();
  app.add_option("-s,--sizes", cfg.sizes, "bytes per device (1K, 1M, 64M, ...)")->delimiter(',')->capture_default_str();
  app.add_option("-t,--threads", cfg.threads, "OS threads the fibers run on (RuntimeOptions::threads)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--iters", cfg.iters, "collectives per repetition (0: calibrated to --target-ms)")->capture_default_str();
  app.add_option("--target-ms", cfg.target_ms, "time of one repetition when calibrating")->capture_default_str();
  app.add_option("--max-iters", cfg.max_iters, "cap on calibrated iterations")->capture_default_str();
  app.add_option("--reps", cfg.reps, "repetitions (the median is reported)")->capture_default_str();
  app.add_option("--warmup", cfg.warmup, "collectives before timing (>= 1; the last one calibrates)")->capture_default_str();
  app.add_option("--case-budget", cfg.case_budget_s, "seconds per case: fewer repetitions when slower; when one op takes longer, that (warm-up) op is reported alone")
      ->capture_default_str();
  app.add_option("--mem-limit", cfg.mem_limit, "skip cases needing more (default: 60% of MemAvailable)");
  app.add_option("--stack", cfg.stack, "fiber stack size for the collective cases")->capture_default_str();
  app.add_option("--create-devices", cfg.create_devices, "devices for the creation case")->capture_default_str();
  app.add_option("--create-stack", cfg.create_stack, "fiber stack size for the creation case")->capture_default_str();
  app.add_option("--memcpy-size", cfg.memcpy_size, "buffer of the memcpy probe")->capture_default_str();
  app.add_option("--json", cfg.json_path, "write results as JSON to this file ('-' = stdout)");
  app.add_option("--csv", cfg.csv_path, "write results as CSV to this file ('-' = stdout)");
  CLI11_PARSE(app, argc, argv);

  try {
    const std::size_t limit =
        cfg.mem_limit.empty() ? static_cast<std::size_t>(0.6 * static_cast<double>(mem_available())) : parse_size(cfg.mem_limit);
    std::vector<std::size_t> sizes;
    for (const auto& s : cfg.sizes) sizes.push_back(parse_size(s));
    std::vector<Result> results;

    // Device creation first: ru_maxrss is a high-water mark of the process.
    std::vector<Result> create_results;
    if (wants(cfg, "create")) {
      create_results.push_back(run_create(cfg, false));
      create_results.push_back(run_create(cfg, true));
    }

    const bool any_data = wants(cfg, "psum") || wants(cfg, "all_gather") || wants(cfg, "ppermute") || wants(cfg, "memcpy");
    std::unique_ptr<MemcpyProbe> mp;
    if (any_data) mp = std::make_unique<MemcpyProbe>(probe_memcpy(parse_size(cfg.memcpy_size), cfg.memcpy_reps));
    print_header(cfg, mp.get(), limit);

    if (!create_results.empty()) {
      std::printf("device creation: %d devices, fiber stack %s, trivial body (and the same with one barrier)\n",
                  cfg.create_devices, cfg.create_stack.c_str());
      for (const Result& r : create_results) {
        std::printf("  %-15s %s total, %.2f us per device, peak RSS %s (RSS before %s)\n", r.op.c_str(),
                    format_time(r.create_s).c_str(), r.create_s / r.devices * 1e6,
                    format_size(static_cast<double>(r.rss_peak)).c_str(),
                    format_size(static_cast<double>(r.rss_before)).c_str());
        results.push_back(r);
      }
      std::printf("\n");
    }

    print_row_header();
    for (int threads : cfg.threads) {
      if (wants(cfg, "barrier")) {
        for (int n : cfg.devices) {
          Result r = run_case(cfg, "barrier", n, 0, threads);
          print_row(r);
          results.push_back(r);
        }
      }
      for (const char* op : {"psum", "all_gather", "ppermute"}) {
        if (!wants(cfg, op)) continue;
        for (std::size_t bytes : sizes) {
          for (int n : cfg.devices) {
            double need = resident_bytes(op, n, static_cast<double>(bytes));
            Result r;
            if (need > static_cast<double>(limit)) {
              r.op = op;
              r.devices = n;
              r.bytes = bytes;
              r.threads = threads;
              r.skipped = "needs " + format_size(need) + " resident (" +
                          resident_model(op) + ") > limit " +
                          format_size(static_cast<double>(limit));
            } else {
              r = run_case(cfg, op, n, bytes, threads);
              if (mp) r.of_memcpy = r.traffic_bw / mp->reference_gbs();
            }
            print_row(r);
            results.push_back(r);
          }
        }
      }
    }
    if (mp) {
      MemcpyProbe end = probe_memcpy(parse_size(cfg.memcpy_size), cfg.memcpy_reps);
      std::printf("\nmemcpy probe again at the end (machine noise): 1 thread %.2f GB/s, %d threads %.2f GB/s, first touch %.2f GB/s; load average %s\n",
                  end.one_thread_gbs, end.threads, end.all_threads_gbs, end.fresh_gbs, load_average().c_str());
    }
    if (!cfg.json_path.empty()) write_json(cfg.json_path, mp.get(), results);
    if (!cfg.csv_path.empty()) write_csv(cfg.csv_path, results);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmd_bench_collectives: %s\n", e.what());
    return 1;
  }
  return 0;
}
