#include "backend/sim/stack_guard.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "util/format_bytes.h"

namespace spmd::sim::stack_guard {

namespace {

// Everything the handler reads is set before the region's base is published
// (release) and read after it is seen (acquire): no lock in a signal handler.
struct Region {
  std::atomic<std::uintptr_t> base{0};
  std::size_t slot_size = 0;
  std::size_t slots = 0;
  std::unique_ptr<std::atomic<int>[]> devices;  // per slot, -1 before a device ran there
  char stack_text[32] = {};                      // "64 KiB"
};

constexpr std::size_t kRegions = 4096;
std::array<Region, kRegions> g_regions;
std::atomic<std::size_t> g_used{0};  // entries ever used: the scans stop there
std::mutex g_mu;  // registration only
std::size_t g_page = 0;

struct sigaction g_previous_segv;
struct sigaction g_previous_bus;
std::once_flag g_installed;

// Appends text to a fixed buffer (async-signal-safe).
struct Line {
  char text[512];
  std::size_t n = 0;
  void add(const char* s) {
    while (*s != '\0' && n + 1 < sizeof text) text[n++] = *s++;
  }
  void add(long v) {
    char digits[24];
    int k = 0;
    bool negative = v < 0;
    unsigned long u = negative ? static_cast<unsigned long>(-v) : static_cast<unsigned long>(v);
    do {
      digits[k++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (negative) add("-");
    while (k > 0 && n + 1 < sizeof text) text[n++] = digits[--k];
  }
};

[[noreturn]] void report_overflow(int device, const char* stack_text) {
  Line line;
  line.add("\nerror[StackOverflow]: ");
  if (device >= 0) {
    line.add("device ");
    line.add(static_cast<long>(device));
  } else {
    line.add("a device");
  }
  line.add(" overflowed its fiber stack of ");
  line.add(stack_text);
  line.add("\n  hint: a deep recursion on the device (Python code under jax.disable_jit() that recurses through "
           "C: repr, json.dumps, pickle of deeply nested data; a deeply nested program); raise --stack-size "
           "(now ");
  line.add(stack_text);
  line.add(")\n");
  ssize_t ignored = ::write(2, line.text, line.n);
  static_cast<void>(ignored);
  ::_exit(1);
}

void pass_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction& previous = sig == SIGBUS ? g_previous_bus : g_previous_segv;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  // The default action: returning re-runs the faulting instruction under it.
  ::sigaction(sig, &previous, nullptr);
}

void on_fault(int sig, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const std::size_t used = g_used.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < used; ++i) {
    Region& r = g_regions[i];
    const std::uintptr_t base = r.base.load(std::memory_order_acquire);
    if (base == 0 || address < base || address >= base + r.slot_size * r.slots) continue;
    const std::size_t slot = (address - base) / r.slot_size;
    if ((address - base) % r.slot_size >= g_page) break;  // inside a stack, not its guard
    report_overflow(r.devices[slot].load(std::memory_order_relaxed), r.stack_text);
  }
  pass_on(sig, info, context);
}

void install() {
  g_page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGSEGV, &action, &g_previous_segv);
  ::sigaction(SIGBUS, &action, &g_previous_bus);
}

// The thread's alternate signal stack, where it had none; given back when
// the thread ends.
struct AltStack {
  void* memory = nullptr;
  AltStack() {
    stack_t current;
    if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) return;  // one is set
    const std::size_t bytes = std::max<std::size_t>(std::size_t{64} << 10, 4 * static_cast<std::size_t>(SIGSTKSZ));
    memory = std::malloc(bytes);
    if (memory == nullptr) return;
    stack_t alt;
    alt.ss_sp = memory;
    alt.ss_size = bytes;
    alt.ss_flags = 0;
    if (::sigaltstack(&alt, nullptr) != 0) {
      std::free(memory);
      memory = nullptr;
    }
  }
  ~AltStack() {
    if (memory == nullptr) return;
    stack_t off;
    off.ss_sp = nullptr;
    off.ss_size = 0;
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
    std::free(memory);
  }
};

}  // namespace

void register_region(void* base, std::size_t slot_size, std::size_t slots, std::size_t stack_size) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (std::size_t i = 0; i < kRegions; ++i) {
    Region& r = g_regions[i];
    if (r.base.load(std::memory_order_relaxed) != 0) continue;
    r.slot_size = slot_size;
    r.slots = slots;
    r.devices = std::make_unique<std::atomic<int>[]>(slots);
    for (std::size_t i = 0; i < slots; ++i) r.devices[i].store(-1, std::memory_order_relaxed);
    const std::string text = format_bytes(stack_size);
    std::snprintf(r.stack_text, sizeof r.stack_text, "%s", text.c_str());
    r.base.store(reinterpret_cast<std::uintptr_t>(base), std::memory_order_release);
    if (i >= g_used.load(std::memory_order_relaxed)) g_used.store(i + 1, std::memory_order_release);
    return;
  }
  // More regions than the table holds: their overflows are bare faults.
}

void unregister_region(void* base) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (Region& r : g_regions) {
    if (r.base.load(std::memory_order_relaxed) != reinterpret_cast<std::uintptr_t>(base)) continue;
    r.base.store(0, std::memory_order_release);
    r.devices.reset();
    return;
  }
}

void prepare_thread() {
  std::call_once(g_installed, install);
  thread_local AltStack alt_stack;
}

void note_device(int device) {
  char here = 0;
  const auto address = reinterpret_cast<std::uintptr_t>(&here);
  const std::size_t used = g_used.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < used; ++i) {
    Region& r = g_regions[i];
    const std::uintptr_t base = r.base.load(std::memory_order_acquire);
    if (base == 0 || address < base || address >= base + r.slot_size * r.slots) continue;
    r.devices[(address - base) / r.slot_size].store(device, std::memory_order_relaxed);
    return;
  }
}

}  // namespace spmd::sim::stack_guard
