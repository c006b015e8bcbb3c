// Traces: recording, the Chrome timeline, and replay giving the same verdict.

#include <catch2/catch.hpp>

#include <sstream>

#include "spmd/trace/chrome_trace.h"
#include "spmd/trace/jsonl_trace.h"
#include "spmd/trace/replay.h"
#include "spmd/util/json.h"
#include "support/spawn.h"

using namespace spmd;
using namespace spmd::testing;

namespace {

// Runs `fn` on 4 devices with a trace; returns the trace text and the error (if any).
template <class F>
std::pair<std::string, std::string> record(F fn, std::vector<MeshAxis> mesh = {}) {
  std::ostringstream trace;
  RuntimeOptions opts{.devices = 8};
  opts.observers.push_back(std::make_shared<JsonlTraceWriter>(trace, /*deterministic=*/true));
  Runtime rt(opts);
  PmapOptions o;
  o.axis_name = "i";
  o.axis_size = 4;
  o.mesh = std::move(mesh);
  std::string message;
  try {
    rt.pmap([&](std::span<const Array>) { return fn(); }, {}, o);
  } catch (const Error& e) {
    message = e.report().message;
  }
  return {trace.str(), message};
}

std::string replay_message(const std::string& trace) {
  std::istringstream in(trace);
  try {
    replay_trace(in, "t.jsonl");
  } catch (const Error& e) {
    return e.report().kind + ": " + e.report().message;
  }
  return "ok";
}

}  // namespace

TEST_CASE("trace::jsonl: events carry the collective's signature", "[trace]") {
  auto [trace, message] = record([] {
    return std::vector<Array>{psum(ones({2, 3}), "i", {}, SourceLoc{"f.py", 3, 7})};
  });
  REQUIRE(message.empty());
  std::istringstream lines(trace);
  std::string first, line, enter, last;
  std::getline(lines, first);
  REQUIRE(first == R"({"ev":"run_start","version":1,"backend":"sim","devices":4,"axes":"i=4"})");
  while (std::getline(lines, line)) {
    if (line.find("collective_enter") != std::string::npos && enter.empty()) enter = line;
    last = line;
  }
  REQUIRE(enter ==
          R"({"ev":"collective_enter","uid":0,"device":0,"seq":0,"op":"psum","axes":["i"],"operands":["f32[2,3]"],"params":"","file":"f.py","line":3,"column":7})");
  REQUIRE(last == R"({"ev":"run_end","status":"ok"})");
}

TEST_CASE("trace::replay: a recorded deadlock replays to the same report", "[trace]") {
  auto [trace, message] = record([] {
    Array x = psum(ones({1}), "i", {}, SourceLoc{"f.py", 4, 1});
    if (current_device().id == 3) return std::vector<Array>{x};
    return std::vector<Array>{pmax(x, "i", {}, SourceLoc{"f.py", 6, 1})};
  });
  REQUIRE(message == "deadlock: devices {0..2} wait at pmax over 'i' #1 (f.py:6:1) but device 3 returned after 1 collective");
  REQUIRE(replay_message(trace) == "Deadlock: " + message);
}

TEST_CASE("trace::replay: a recorded mismatch and a recorded decision replay", "[trace]") {
  auto [trace, message] = record([] {
    record_decision("lax.cond", current_device().id == 1, SourceLoc{"f.py", 2, 4});
    Array x = current_device().id == 1 ? all_gather(ones({2}), "i", 0, false, {}, SourceLoc{"f.py", 5, 1})
                                       : psum(ones({2}), "i", {}, SourceLoc{"f.py", 3, 1});
    return std::vector<Array>{x};
  });
  REQUIRE(message.find("collective mismatch at psum over 'i'") == 0);
  REQUIRE(replay_message(trace) == "CollectiveMismatch: " + message);
}

TEST_CASE("trace::replay: mesh and nested runs replay, a clean run replays clean", "[trace]") {
  auto [trace, message] = record(
      [] {
        PmapOptions inner;
        inner.axis_name = "k";
        inner.axis_size = 2;
        pmap([](std::span<const Array>) { return std::vector<Array>{psum(ones({1}), {"k", "j"})}; }, {}, inner);
        return std::vector<Array>{psum(ones({1}), "i")};
      },
      {{"i", 2}, {"j", 2}});
  REQUIRE(message.empty());
  REQUIRE(replay_message(trace) == "ok");
  std::istringstream in(trace);
  ReplaySummary s = replay_trace(in, "t.jsonl");
  REQUIRE(s.devices == 12);
  REQUIRE(s.collectives == 12);
  REQUIRE(s.recorded_status == "ok");
}

TEST_CASE("trace::replay: a device error in the trace ends the replay the same way", "[trace]") {
  std::string trace =
      R"({"ev":"run_start","version":1,"backend":"cuda","devices":2,"axes":"i=2"}
{"ev":"device_start","uid":0,"parent":-1,"device":0,"label":"device 0","env":[{"name":"i","index":0,"size":2}]}
{"ev":"device_start","uid":1,"parent":-1,"device":1,"label":"device 1","env":[{"name":"i","index":1,"size":2}]}
{"ev":"collective_enter","uid":0,"device":0,"seq":0,"op":"psum","axes":["i"],"operands":["f32[8]"],"params":"","file":"g.py","line":9,"column":3}
{"ev":"error","uid":1,"device":1,"kind":"NameError","text":"name 'w' is not defined","file":"g.py","line":7,"column":5}
)";
  REQUIRE(replay_message(trace) == "NameError: name 'w' is not defined");
}

TEST_CASE("trace::reader: malformed traces name the line and column", "[trace]") {
  auto error_of = [](const std::string& text) {
    std::istringstream in(text);
    try {
      replay_trace(in, "bad.jsonl");
    } catch (const SyntaxError& e) {
      return e.report().message;
    }
    return std::string("no error");
  };
  REQUIRE(error_of("{\"ev\":\"run_start\"}\n{\"ev\": tru}\n") == "bad.jsonl:2:8: invalid JSON: unexpected character 't'");
  REQUIRE(error_of("{\"ev\":\"launch\"}\n") == "bad.jsonl:1:1: invalid trace: unknown event \"launch\"");
  REQUIRE(error_of("{\"ev\":\"collective_enter\",\"uid\":0}\n") ==
          "bad.jsonl:1:1: invalid trace: event of device uid 0 before its device_start");
  REQUIRE(error_of(R"({"ev":"device_start","uid":0,"parent":-1,"device":0,"env":[{"name":"i","index":0,"size":1}]}
{"ev":"collective_enter","uid":0,"device":0,"seq":0,"op":"psum","axes":["i"],"operands":["q7[2]"]}
)") == "bad.jsonl:2:1: invalid trace: operand types look like \"f32[4,8]\"");
  REQUIRE(error_of("") == "bad.jsonl:1:1: invalid trace: the trace has no devices");
  // Issue 19, finding 22: version, device count and sequence numbers are checked, not ignored.
  REQUIRE(error_of("{\"ev\":\"run_start\",\"version\":2,\"devices\":1}\n") ==
          "bad.jsonl:1:1: invalid trace: trace format version 2, but this spmd reads version 1");
  REQUIRE(error_of(R"({"ev":"run_start","version":1,"devices":2}
{"ev":"device_start","uid":0,"parent":-1,"device":5,"env":[{"name":"i","index":0,"size":2}]}
)") == "bad.jsonl:2:1: invalid trace: device 5 is outside the run's 2 devices");
  REQUIRE(error_of(R"({"ev":"device_start","uid":0,"parent":-1,"device":0,"env":[{"name":"i","index":0,"size":1}]}
{"ev":"collective_enter","uid":0,"device":0,"seq":0,"op":"psum","axes":["i"],"operands":["f32[2]"]}
{"ev":"collective_enter","uid":0,"device":0,"seq":2,"op":"psum","axes":["i"],"operands":["f32[2]"]}
)") == "bad.jsonl:3:1: invalid trace: device 0's collective #2 follows 1 collective(s) of it: events are missing or out "
       "of order");
}

TEST_CASE("trace::chrome: one track per device, collectives as spans", "[trace]") {
  auto path = std::string("/tmp/spmd_timeline_test.json");
  auto writer = std::make_shared<ChromeTraceWriter>(path);
  RuntimeOptions opts{.devices = 2};
  opts.observers.push_back(writer);
  Runtime rt(opts);
  run_on(rt, 2, {}, [](std::span<const Array>) { return std::vector<Array>{psum(ones({1}), "i")}; });
  Json doc = writer->document();
  int begins = 0, ends = 0, tracks = 0;
  for (const Json& e : doc.find("traceEvents")->as_array()) {
    std::string ph = e.find("ph")->as_string();
    std::string name = e.find("name")->as_string();
    if (ph == "B" && name == "psum i") ++begins;
    if (ph == "E" && name == "psum i") ++ends;
    if (ph == "M" && name == "thread_name") ++tracks;
  }
  REQUIRE(begins == 2);
  REQUIRE(ends == 2);
  REQUIRE(tracks == 2);
}
