#include "program.h"

#include <algorithm>

namespace spmd::soak {

const char* op_name(Op op) {
  switch (op) {
    case Op::kPsum: return "psum";
    case Op::kPmean: return "pmean";
    case Op::kPmax: return "pmax";
    case Op::kPmin: return "pmin";
    case Op::kAllGather: return "all_gather";
    case Op::kPpermute: return "ppermute";
    case Op::kBarrier: return "barrier";
  }
  return "?";
}

int IndexExpr::eval(int d) const {
  switch (form) {
    case Form::kConst: return a;
    case Form::kLess: return d < a ? 1 : 0;
    case Form::kEqual: return d == a ? 1 : 0;
    case Form::kModEqual: return d % a == b ? 1 : 0;
    case Form::kMod: return d % a;
    case Form::kConstPlusMod: return a + d % b;
  }
  return 0;
}

std::string IndexExpr::python() const {
  const std::string i = "lax.axis_index('i')";
  switch (form) {
    case Form::kConst: return std::to_string(a);
    case Form::kLess: return i + " < " + std::to_string(a);
    case Form::kEqual: return i + " == " + std::to_string(a);
    case Form::kModEqual: return i + " % " + std::to_string(a) + " == " + std::to_string(b);
    case Form::kMod: return i + " % " + std::to_string(a);
    case Form::kConstPlusMod: return std::to_string(a) + " + " + i + " % " + std::to_string(b);
  }
  return "?";
}

namespace {

constexpr int kMaxDepth = 3;

struct Generator {
  std::mt19937_64 rng;
  int n;

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool chance(int percent) { return pick(0, 99) < percent; }

  IndexExpr predicate() {
    IndexExpr e;
    switch (pick(0, 3)) {
      case 0:  // the same on every device (true or false)
        e.form = IndexExpr::Form::kLess;
        e.a = chance(50) ? 0 : n + pick(0, 2);
        break;
      case 1:
        e.form = IndexExpr::Form::kLess;
        e.a = pick(0, n);
        break;
      case 2:
        e.form = IndexExpr::Form::kEqual;
        e.a = pick(0, n - 1);
        break;
      default:
        e.form = IndexExpr::Form::kModEqual;
        e.a = pick(1, 3);
        e.b = pick(0, e.a - 1);
        break;
    }
    return e;
  }

  IndexExpr branch_index(int branches) {
    IndexExpr e;
    if (chance(50)) {  // the same branch everywhere (possibly out of range: lax.switch clamps)
      e.form = IndexExpr::Form::kConstPlusMod;
      e.a = pick(0, branches);
      e.b = 1;
    } else {
      e.form = IndexExpr::Form::kMod;
      e.a = pick(1, branches + 1);
    }
    return e;
  }

  IndexExpr trip_count() {
    IndexExpr e;
    if (chance(50)) {
      e.form = IndexExpr::Form::kConst;
      e.a = pick(0, 3);
    } else {
      e.form = IndexExpr::Form::kConstPlusMod;
      e.a = pick(0, 2);
      e.b = pick(1, 3);
    }
    return e;
  }

  Stmt collective() {
    Stmt s;
    s.kind = Stmt::Kind::kCollective;
    s.op = static_cast<Op>(pick(0, 6));
    s.shift = pick(1, std::max(1, n - 1));
    return s;
  }

  Block block(int depth, int min_len, int max_len) {
    Block b;
    int len = pick(min_len, max_len);
    for (int k = 0; k < len; ++k) b.push_back(stmt(depth));
    return b;
  }

  Stmt stmt(int depth) {
    int r = pick(0, 99);
    if (depth >= kMaxDepth || r < 45) return collective();
    if (r < 55) {
      Stmt s;
      s.kind = Stmt::Kind::kLocal;
      return s;
    }
    Stmt s;
    if (r < 75) {
      s.kind = Stmt::Kind::kCond;
      s.expr = predicate();
      s.blocks.push_back(block(depth + 1, 0, 3));
      s.blocks.push_back(block(depth + 1, 0, 3));
    } else if (r < 85) {
      s.kind = Stmt::Kind::kSwitch;
      int branches = pick(2, 3);
      s.expr = branch_index(branches);
      for (int k = 0; k < branches; ++k) s.blocks.push_back(block(depth + 1, 0, 2));
    } else {
      s.kind = Stmt::Kind::kFori;
      s.expr = trip_count();
      s.blocks.push_back(block(depth + 1, 1, 3));
    }
    return s;
  }
};

struct Renderer {
  int n;
  std::vector<std::string> lines;
  int next_fn = 0;

  int emit(const std::string& indent, const std::string& text) {
    lines.push_back(indent + text);
    return static_cast<int>(lines.size());
  }

  std::string collective_text(const Stmt& s) {
    switch (s.op) {
      case Op::kAllGather: return "x = jnp.sum(lax.all_gather(x, 'i')) * 0.5";
      case Op::kPpermute: {
        std::string perm;
        for (int d = 0; d < n; ++d) {
          if (d) perm += ", ";
          perm += "(" + std::to_string(d) + ", " + std::to_string((d + s.shift) % n) + ")";
        }
        return "x = lax.ppermute(x, 'i', perm=[" + perm + "])";
      }
      // Not lax.psum(1, 'i'): like JAX, that is the axis size computed without
      // any communication. A psum of a traced value really meets.
      case Op::kBarrier: return "x = x + 0.0 * lax.psum(x * 0.0 + 1.0, 'i')";
      default: return std::string("x = lax.") + op_name(s.op) + "(x, 'i')";
    }
  }

  // Defines `name(params)` running `b`, returning x.
  void function(const std::string& indent, const std::string& name, const std::string& params, Block& b) {
    emit(indent, "def " + name + "(" + params + "):");
    block(indent + "    ", b);
    emit(indent + "    ", "return x");
  }

  void block(const std::string& indent, Block& b) {
    for (Stmt& s : b) {
      switch (s.kind) {
        case Stmt::Kind::kCollective: s.line = emit(indent, collective_text(s)); break;
        case Stmt::Kind::kLocal: s.line = emit(indent, "x = x * 0.5 + 1.0"); break;
        case Stmt::Kind::kCond: {
          std::string id = std::to_string(next_fn++);
          function(indent, "when_true_" + id, "x", s.blocks[0]);
          function(indent, "when_false_" + id, "x", s.blocks[1]);
          s.line = emit(indent, "x = lax.cond(" + s.expr.python() + ", when_true_" + id + ", when_false_" + id + ", x)");
          break;
        }
        case Stmt::Kind::kSwitch: {
          std::string id = std::to_string(next_fn++);
          std::string names;
          for (std::size_t k = 0; k < s.blocks.size(); ++k) {
            std::string name = "branch_" + id + "_" + std::to_string(k);
            function(indent, name, "x", s.blocks[k]);
            names += (k ? ", " : "") + name;
          }
          s.line = emit(indent, "x = lax.switch(" + s.expr.python() + ", [" + names + "], x)");
          break;
        }
        case Stmt::Kind::kFori: {
          std::string name = "body_" + std::to_string(next_fn++);
          function(indent, name, "j, x", s.blocks[0]);
          s.line = emit(indent, "x = lax.fori_loop(0, " + s.expr.python() + ", " + name + ", x)");
          break;
        }
      }
    }
  }
};

}  // namespace

Program generate(std::uint64_t seed) {
  static const int kDeviceCounts[] = {2, 3, 4, 5, 6, 8};
  Generator g{std::mt19937_64(seed * 0x9e3779b97f4a7c15ull + 7), 0};
  Program p;
  p.seed = seed;
  p.devices = kDeviceCounts[g.pick(0, 5)];
  g.n = p.devices;
  p.body = g.block(0, 2, 5);
  render(p);
  return p;
}

void render(Program& p) {
  Renderer r{p.devices, {}, 0};
  r.emit("", "# spmd: devices=" + std::to_string(p.devices));
  r.emit("", "# generated by tools/bench/soak from seed " + std::to_string(p.seed));
  r.emit("", "import jax");
  r.emit("", "import jax.numpy as jnp");
  r.emit("", "from jax import lax");
  r.emit("", "");
  r.emit("", "def f(x):");
  r.block("    ", p.body);
  r.emit("    ", "return x");
  r.emit("", "");
  r.emit("", "print(jax.pmap(f, axis_name='i')(jnp.arange(" + std::to_string(p.devices) + ".0)))");
  p.text.clear();
  for (const auto& l : r.lines) p.text += l + "\n";
}

}  // namespace spmd::soak
