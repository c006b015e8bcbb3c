// libFuzzer target: the program runner. The input bytes describe a traced
// program (inputs of any small shape and dtype, then equations of any
// primitive with any operands and parameters from a menu of the names the
// primitives read), which is built (abstract evaluation of every equation)
// and run on 4 devices over axis 'i' (the executor, the kernels and the
// collectives), on a small runtime with step and time budgets.
//
// Every input must end with outputs or with an spmd::Error whose report
// renders. Anything else is a finding: a crash, a sanitizer report, an
// exception that is not an spmd::Error, or an input that runs past -timeout.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "fuzz_limits.h"
#include "spmd/debug/debug_print.h"
#include "spmd/error.h"
#include "spmd/pmap/pmap.h"
#include "spmd/program/executor.h"
#include "spmd/program/primitive.h"
#include "spmd/runtime/runtime.h"
#include "spmd/util/json.h"

namespace {

using namespace spmd;
using namespace spmd::program;

constexpr int kDevices = 4;
constexpr std::size_t kMaxEquations = 24;

class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  std::uint8_t next() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::int64_t small_int() { return static_cast<std::int8_t>(next()); }
  std::vector<std::int64_t> ints() {
    std::vector<std::int64_t> v(next() % 5);
    for (auto& x : v) x = small_int();
    return v;
  }
  template <class T, std::size_t N>
  const T& pick(const T (&options)[N]) {
    return options[next() % N];
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

const DType kDTypes[] = {DType::kFloat32, DType::kInt32, DType::kBool, DType::kFloat16, DType::kInt64};
const char* const kStrings[] = {"i", "j", "", "float32", "int32", "bool", "float16", "{:>5}", "r", "set", "add",
                                "mul", "min", "max", "lax.cond"};

enum class Kind { kInt, kInts, kString, kStrings, kBool };
struct ParamMenuEntry {
  const char* name;
  Kind kind;
};
// The parameter names the primitives read, each with the type it expects
// (and, for the fuzzer, sometimes another: a wrong type must be an Error).
const ParamMenuEntry kParams[] = {
    {"axes", Kind::kInts},          {"axes", Kind::kStrings},         {"axis", Kind::kInt},
    {"dimension", Kind::kInt},      {"dimensions", Kind::kInts},      {"shape", Kind::kInts},
    {"new_sizes", Kind::kInts},     {"permutation", Kind::kInts},     {"broadcast_dimensions", Kind::kInts},
    {"new_dtype", Kind::kString},   {"weak_type", Kind::kBool},       {"items", Kind::kInts},
    {"mode", Kind::kString},        {"split_axis", Kind::kInt},       {"concat_axis", Kind::kInt},
    {"scatter_dimension", Kind::kInt}, {"tiled", Kind::kBool},        {"perm", Kind::kInts},
    {"axis_index_groups", Kind::kInts}, {"group_size", Kind::kInt},   {"num_keys", Kind::kInt},
    {"stream", Kind::kInt},         {"literals", Kind::kStrings},     {"field_args", Kind::kInts},
    {"field_specs", Kind::kStrings}, {"field_conversions", Kind::kStrings}, {"source", Kind::kString},
    {"axis", Kind::kString},        {"shape", Kind::kInt},            {"transpose_a", Kind::kBool},
    {"transpose_b", Kind::kBool},   {"transpose_a", Kind::kInt},
};

Param make_param(Kind kind, Bytes& in) {
  switch (kind) {
    case Kind::kInt: return in.small_int();
    case Kind::kInts: return in.ints();
    case Kind::kString: return std::string(in.pick(kStrings));
    case Kind::kStrings: {
      std::vector<std::string> v(in.next() % 4);
      for (auto& s : v) s = in.pick(kStrings);
      return v;
    }
    case Kind::kBool: return (in.next() & 1) != 0;
  }
  return std::int64_t{0};
}

// Primitives whose parameters are sub-programs or that stop for a person.
bool fuzzable(const std::string& name) {
  return name != "cond" && name != "while" && name != "xla_pmap" && name != "debug_breakpoint";
}

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_program: %s\n", what);
  std::abort();
}

void check_report(const Error& e) {
  const Report& r = e.report();
  if (r.kind.empty()) finding("an error without a kind");
  (void)r.to_text();
  (void)r.to_json().dump();
}

std::vector<std::string> fuzzable_primitives() {
  std::vector<std::string> names = primitive_names();
  names.erase(std::remove_if(names.begin(), names.end(), [](const std::string& n) { return !fuzzable(n); }),
              names.end());
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > spmd::fuzz::kMaxInputBytes) return 0;
  static const std::vector<std::string> primitives = fuzzable_primitives();
  static const char* file = intern_path("fuzz.py");
  Bytes in(data, size);

  ProgramBuilder builder({AxisFrame{"i", kDevices}});
  std::vector<Atom> atoms;
  std::vector<Array> args;
  try {
    const int inputs = 1 + in.next() % 3;
    for (int k = 0; k < inputs; ++k) {
      Shape per_device(in.next() % 4);
      for (auto& d : per_device) d = 1 + in.next() % 4;
      const DType dtype = in.pick(kDTypes);
      atoms.push_back(Atom::of(builder.add_input(Aval{per_device, dtype, false})));
      Shape global = per_device;
      global.insert(global.begin(), kDevices);
      std::int64_t count = 1;
      for (auto d : global) count *= d;
      std::vector<double> values(static_cast<std::size_t>(count));
      for (auto& v : values) v = static_cast<double>(in.small_int());
      args.push_back(Array::from_doubles(values, global, dtype));
    }
    for (std::size_t e = 0; e < kMaxEquations && !in.empty(); ++e) {
      const std::string& prim = primitives[in.next() % primitives.size()];
      std::vector<Atom> operands(in.next() % 4);
      for (auto& a : operands) {
        const std::uint8_t b = in.next();
        a = (b & 0x80) ? Atom::of_literal(Array::scalar(static_cast<double>(in.small_int()), in.pick(kDTypes), (b & 1) != 0))
                       : atoms[b % atoms.size()];
      }
      Params params;
      for (int p = in.next() % 5; p > 0; --p) {
        const ParamMenuEntry& entry = in.pick(kParams);
        params.set(entry.name, make_param(entry.kind, in));
      }
      try {
        for (Var v : builder.add_equation(prim, operands, params, SourceLoc{file, static_cast<std::uint32_t>(e + 1), 1})) {
          atoms.push_back(Atom::of(v));
        }
      } catch (const Error& err) {
        check_report(err);  // a rejected equation is not recorded; go on with the others
      }
    }
  } catch (const Error& err) {
    check_report(err);
    return 0;
  }
  const std::size_t outputs = std::min<std::size_t>(2, atoms.size());
  builder.set_outputs(std::vector<Atom>(atoms.end() - static_cast<std::ptrdiff_t>(outputs), atoms.end()));
  ProgramRef program = builder.finish();

  RuntimeOptions ro = spmd::fuzz::runtime_options();
  ro.print_sink = [](const DebugPrint&) {};
  Runtime rt(ro);
  set_default_runtime(&rt);
  PmapOptions o;
  o.axis_name = "i";
  o.loc = SourceLoc{file, 1, 1};
  try {
    (void)pmap_program(program, args, o);
  } catch (const Error& err) {
    check_report(err);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "%s\n", ex.what());
    finding("an exception that is not an spmd::Error");
  }
  set_default_runtime(nullptr);
  return 0;
}
