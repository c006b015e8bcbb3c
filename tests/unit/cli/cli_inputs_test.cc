// What the command line refuses, through the real binary (issue 19's
// findings 12, 13, 17, 18, 21, 22): files that are not programs or traces,
// option values out of range; each with exit code 2 and a message that says
// what is wrong. Nothing here may hang: every run is bounded by Subprocess.

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support/subprocess.h"
#include "support/temp_scenario.h"

#ifndef SPMD_BIN_PATH
#error "SPMD_BIN_PATH (the spmd binary) must be defined by the build"
#endif

using spmd::testing::Subprocess;

namespace {

struct Result {
  int code;
  std::string out, err;
};

Result spmd_cli(std::vector<std::string> args) {
  args.insert(args.begin(), SPMD_BIN_PATH);
  Subprocess p(args);
  int code = p.wait();
  return {code, p.out(), p.err()};
}

const char* kProgram = "# spmd: devices=2\nimport jax\nimport jax.numpy as jnp\nprint(jax.pmap(lambda x: x * 2)(jnp.arange(2)))\n";

std::string program_path() { return spmd::testing::write_temp_scenario("spmd_cli_inputs_test", "prog.py", kProgram); }

}  // namespace

TEST_CASE("cli::inputs: a program or trace that is not a text file is refused at once", "[cli][inputs]") {
  auto [cmd, path, message] = GENERATE(
      std::make_tuple("run", "/dev/zero", "cannot read the program file '/dev/zero': it holds a NUL byte at offset 0, so it is not a text file"),
      std::make_tuple("replay", "/dev/zero", "cannot read the trace file '/dev/zero': it holds a NUL byte at offset 0"),
      std::make_tuple("run", "/tmp", "cannot read the program file '/tmp': it is a directory"),
      std::make_tuple("replay", "/tmp", "cannot read the trace file '/tmp': it is a directory"),
      std::make_tuple("run", "/proc/self/mem", "cannot read the program file '/proc/self/mem': Input/output error"),
      std::make_tuple("run", "/nonexistent/x.py", "cannot read the program file '/nonexistent/x.py': No such file or directory"));
  INFO(cmd << " " << path);
  Result r = spmd_cli({cmd, path});
  CHECK(r.code == 2);
  CHECK(r.err.find("error[UsageError]: " + std::string(message)) != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("cli::inputs: a program from a FIFO is read once, and runs", "[cli][inputs]") {
  std::string fifo = (std::filesystem::temp_directory_path() / ("spmd_cli_inputs_fifo_" + std::to_string(::getpid()) + ".py")).string();
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // One writer, once: a second open of the FIFO would wait for a writer forever.
  std::thread writer([&] {
    std::ofstream(fifo) << kProgram;
  });
  Result r = spmd_cli({"run", fifo});
  writer.join();
  std::filesystem::remove(fifo);
  CHECK(r.code == 0);
  CHECK(r.out == "[0 2]\n");
}

TEST_CASE("cli::inputs: option values out of range are usage errors that give the range", "[cli][inputs]") {
  std::string prog = program_path();
  auto [option, value, message] = GENERATE(
      std::make_tuple("--stack-size", "200TiB", "--stack-size: '200TiB' is out of range: it must be between 16KiB and 1GiB"),
      std::make_tuple("--arena-capacity", "17179869184GiB", "--arena-capacity: '17179869184GiB' is out of range: it must be between 1B and 1048576GiB"),
      std::make_tuple("--arena-capacity", "nan", "--arena-capacity: 'nan' is not a size"),
      std::make_tuple("--seed", "-1", "--seed: '-1' is not a whole number from 0 to 18446744073709551615"),
      std::make_tuple("--seed", "18446744073709551616", "--seed: '18446744073709551616' is not a whole number"),
      std::make_tuple("--max-seconds", "nan", "--max-seconds: 'nan' is not a number of seconds (0 or more; 0: no limit)"),
      std::make_tuple("--max-seconds", "inf", "--max-seconds: 'inf' is not a number of seconds"),
      std::make_tuple("--trace", "", "--trace: needs a file path (it was empty)"),
      std::make_tuple("--timeline", "", "--timeline: needs a file path (it was empty)"));
  INFO(option << " " << value);
  Result r = spmd_cli({"run", prog, option, value});
  CHECK(r.code == 2);
  CHECK(r.err.find(std::string("spmd: ") + message) != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("cli::inputs: a process started by hand without --store is a usage error", "[cli][inputs]") {
  Result r = spmd_cli({"run", program_path(), "--num-processes", "2", "--process-id", "0"});
  CHECK(r.code == 2);
  CHECK(r.err.find("spmd: --store: a process started with --process-id needs --store DIR") != std::string::npos);
}

TEST_CASE("cli::inputs: a program's own FileNotFoundError is a program error, exit 1", "[cli][inputs]") {
  std::string prog = spmd::testing::write_temp_scenario("spmd_cli_inputs_test", "opens.py", "open('/nonexistent/data.txt')\n");
  Result r = spmd_cli({"run", prog});
  CHECK(r.code == 1);
  CHECK(r.err.find("error[FileNotFoundError]") != std::string::npos);
  CHECK(r.err.find(prog + ":1:1") != std::string::npos);
}

TEST_CASE("cli::inputs: spmd test has a default time budget, and --max-seconds sets it", "[cli][inputs]") {
  // Issue 19, finding 8: a scenario looping forever hung `spmd test` (and CI).
  Result help = spmd_cli({"test", "--help"});
  CHECK(help.code == 0);
  CHECK(help.out.find("(default 60 under spmd test, so a scenario that loops forever fails; 0: none)") != std::string::npos);
  std::string loop = spmd::testing::write_temp_scenario("spmd_cli_inputs_test", "loop.py",
                                                        "# spmd: devices=2 expect=ok\nn = 0\nwhile True:\n    n += 1\n");
  Result r = spmd_cli({"test", loop, "--max-seconds", "0.5"});
  CHECK(r.code == 1);
  CHECK(r.out.find("expected ok, got error:BudgetExceeded: the host program exceeded its time budget of 0.5 s") !=
        std::string::npos);
}
