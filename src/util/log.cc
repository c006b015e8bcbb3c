#include "util/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string>

#include "spmd/error.h"
#include "spmd/log.h"

namespace spmd {

namespace log {

std::atomic<int> g_levels[static_cast<int>(Subsystem::kCount)] = {
    spdlog::level::off, spdlog::level::off, spdlog::level::off, spdlog::level::off,
    spdlog::level::off, spdlog::level::off, spdlog::level::off};

namespace {

constexpr std::array<const char*, static_cast<std::size_t>(Subsystem::kCount)> kNames = {
    "runtime", "rendezvous", "sim", "cuda", "dist", "python", "diagnose"};

struct Loggers {
  std::array<std::shared_ptr<spdlog::logger>, kNames.size()> all;
  Loggers() {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    for (std::size_t k = 0; k < kNames.size(); ++k) {
      all[k] = std::make_shared<spdlog::logger>(kNames[k], sink);
      all[k]->set_pattern("[%H:%M:%S.%f] [spmd %n] [%l] %v");
      all[k]->set_level(spdlog::level::off);
      all[k]->flush_on(spdlog::level::trace);  // interleave with the run's own stderr in order
    }
  }
};

Loggers& loggers();

void set(Loggers& l, std::size_t k, spdlog::level::level_enum level) {
  l.all[k]->set_level(level);
  g_levels[k].store(static_cast<int>(level), std::memory_order_relaxed);
}

void apply(std::string_view spec, Loggers& l) {
  auto level_of = [&](std::string_view word) {
    const spdlog::level::level_enum lv = spdlog::level::from_str(std::string(word));
    // from_str answers "off" for any word it does not know.
    if (lv == spdlog::level::off && word != "off") {
      throw_invalid_argument("UsageError", "unknown log level '" + std::string(word) + "' in '" + std::string(spec) + "'",
                             "the levels are off, error, warn, info, debug, trace");
    }
    return lv;
  };
  std::size_t at = 0;
  while (at <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string_view item = spec.substr(at, comma - at);
    at = comma + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      const auto lv = level_of(item);
      for (std::size_t k = 0; k < kNames.size(); ++k) set(l, k, lv);
      continue;
    }
    const std::string_view name = item.substr(0, eq);
    std::size_t k = 0;
    while (k < kNames.size() && name != kNames[k]) ++k;
    if (k == kNames.size()) {
      std::string known;
      for (const char* n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
      throw_invalid_argument("UsageError", "unknown log subsystem '" + std::string(name) + "' in '" + std::string(spec) + "'",
                             "the subsystems are " + known);
    }
    set(l, k, level_of(item.substr(eq + 1)));
  }
}

Loggers& loggers() {
  static Loggers* l = [] {
    auto* made = new Loggers();  // leaked: log points may run during static destruction
    if (const char* env = std::getenv("SPMD_LOG_LEVEL"); env != nullptr && *env != '\0') {
      try {
        apply(env, *made);
      } catch (const Error& e) {
        // A bad environment variable must not stop a run: say so once.
        set(*made, 0, spdlog::level::warn);
        made->all[0]->warn("SPMD_LOG_LEVEL: {} ({})", e.report().message, e.report().hint);
      }
    }
    return made;
  }();
  return *l;
}

// SPMD_LOG_LEVEL takes effect at start-up: a log point reads only g_levels.
const bool g_environment_read = (loggers(), true);

}  // namespace

spdlog::logger& logger(Subsystem s) { return *loggers().all[static_cast<std::size_t>(s)]; }

}  // namespace log

void set_log_level(std::string_view spec) { log::apply(spec, log::loggers()); }

std::string log_levels() {
  std::string s;
  for (std::size_t k = 0; k < log::kNames.size(); ++k) {
    const auto lv = log::loggers().all[k]->level();
    const auto name = spdlog::level::to_string_view(lv);
    s += (s.empty() ? "" : ",") + std::string(log::kNames[k]) + "=" + std::string(name.data(), name.size());
  }
  return s;
}

}  // namespace spmd
