#pragma once
// The loggers behind spmd/log.h, and the one way to log:
//
//   SPMD_LOG(kRendezvous, debug, "device {} arrives at {} #{}", id, op, seq);
//
// When that subsystem does not log at that level (the default: nothing logs)
// a log point is one relaxed load of a global and a not-taken branch; the
// arguments are neither evaluated nor formatted, and the formatting code
// lives out of line, so the hot paths it sits in (a thousand devices
// arriving at a rendezvous) keep their size.

#include <spdlog/spdlog.h>

#include <atomic>

namespace spmd::log {

enum class Subsystem { kRuntime, kRendezvous, kSim, kCuda, kDist, kPython, kDiagnose, kCount };

/// Each subsystem's level in spdlog's numbering (trace 0 .. off 6), kept
/// with its logger's by set_log_level.
extern std::atomic<int> g_levels[static_cast<int>(Subsystem::kCount)];

inline bool enabled(Subsystem s, spdlog::level::level_enum level) {
  return static_cast<int>(level) >= g_levels[static_cast<int>(s)].load(std::memory_order_relaxed);
}

/// The subsystem's logger.
spdlog::logger& logger(Subsystem s);

}  // namespace spmd::log

#define SPMD_LOG(subsystem, lvl, ...)                                                                    \
  do {                                                                                                  \
    if (::spmd::log::enabled(::spmd::log::Subsystem::subsystem, ::spdlog::level::lvl)) {               \
      [&]() __attribute__((noinline, cold)) {                                                           \
        ::spmd::log::logger(::spmd::log::Subsystem::subsystem).log(::spdlog::level::lvl, __VA_ARGS__);  \
      }();                                                                                              \
    }                                                                                                   \
  } while (0)
