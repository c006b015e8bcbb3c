// Report: the JSON rendering and its inverse (reports read back from
// another process's --format json output).

#include <catch2/catch.hpp>

#include "spmd/report.h"
#include "spmd/util/json.h"

using namespace spmd;

TEST_CASE("util::Report: from_json(to_json()) gives back every field", "[util]") {
  Report r;
  r.kind = "Deadlock";
  r.message = "deadlock: devices {0, 1} wait at psum over 'i' #1";
  r.details = {"first detail", "second detail"};
  r.hint = "look for the branch";
  r.where = SourceLoc{"f.py", 12, 5};
  r.source_line = "    return lax.psum(y, 'i')";
  r.device = 3;
  r.op = "psum";
  r.axis = "'i'";
  r.table.columns = {"devices", "op"};
  r.table.rows = {{"devices {0, 1}", "psum"}, {"device 2", "all_gather"}};
  DeviceStatus d;
  d.device = 2;
  d.label = "device 2";
  d.state = "waiting";
  d.detail = "psum over 'i' #1 f32[4]";
  d.loc = SourceLoc{"f.py", 12, 5};
  d.collectives_done = 1;
  d.recent = {"started", "#0 psum over 'i' f32[4] at f.py:10:5 (done)"};
  r.devices = {d};
  r.divergence.collective_index = 1;
  r.divergence.collective_summary = "#1: devices {0, 1} psum; device 2 returned";
  r.divergence.decision_loc = SourceLoc{"f.py", 9, 3};
  r.divergence.decision_summary = "lax.cond took the true branch on device 2";
  r.repro = "spmd run f.py --devices 4";

  Json once = r.to_json();
  Report back = Report::from_json(Json::parse(once.dump()));
  REQUIRE(back.to_json() == once);
  REQUIRE(back.where.line == 12);
  REQUIRE(back.devices[0].loc.column == 5);
  REQUIRE(back.divergence.decision_loc.line == 9);
  REQUIRE(back.to_text() == r.to_text());
}

TEST_CASE("util::Report: from_json of something else leaves the fields empty", "[util]") {
  Report r = Report::from_json(Json::parse(R"({"kind": 3, "devices": "no"})"));
  REQUIRE(r.kind.empty());
  REQUIRE(r.devices.empty());
  REQUIRE(r.device == -1);
  REQUIRE(Report::from_json(Json::parse("[1, 2]")).message.empty());
}

TEST_CASE("util::loc_from_json: a location needs a file and a line >= 1", "[util]") {
  REQUIRE(loc_from_json(nullptr).valid() == false);
  Json j = Json::parse(R"({"file": "f.py", "line": 3, "column": 7})");
  SourceLoc l = loc_from_json(&j);
  REQUIRE(l == SourceLoc{"f.py", 3, 7});
  REQUIRE(loc_to_json(l) == j);
  Json no_line = Json::parse(R"({"file": "f.py", "line": 0})");
  REQUIRE(loc_from_json(&no_line) == SourceLoc{});
  Json negative_column = Json::parse(R"({"file": "f.py", "line": 2, "column": -4})");
  REQUIRE(loc_from_json(&negative_column) == SourceLoc{"f.py", 2, 0});
  REQUIRE(loc_to_json(SourceLoc{}).is_null());
}
