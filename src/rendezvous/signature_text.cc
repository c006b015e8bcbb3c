#include "rendezvous/signature_text.h"

#include <cctype>
#include <string>

#include "spmd/core/dtype.h"

namespace spmd::detail {

namespace {

// A cursor over a small text (params), for the hand-written grammar of params().
struct Cursor {
  const std::string& s;
  std::size_t i = 0;
  void ws() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool integer(int& v) {
    ws();
    std::size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == start || (i == start + 1 && s[start] == '-')) return false;
    try {
      v = std::stoi(s.substr(start, i - start));
    } catch (...) {
      return false;
    }
    return true;
  }
};

}  // namespace

bool parse_operand_type(const std::string& text, OperandType& out) {
  auto open = text.find('[');
  if (open == std::string::npos || text.empty() || text.back() != ']') return false;
  auto dtype = parse_dtype(text.substr(0, open));
  if (!dtype) return false;
  out.dtype = *dtype;
  out.shape.clear();
  std::string dims = text.substr(open + 1, text.size() - open - 2);
  if (dims.empty()) return true;
  std::size_t pos = 0;
  while (pos <= dims.size()) {
    std::size_t comma = dims.find(',', pos);
    std::string d = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (d.empty() || d.size() > 18) return false;
    for (char c : d) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    out.shape.push_back(std::stoll(d));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

bool parse_params(const std::string& text, CollectiveSignature& sig) {
  Cursor c{text};
  while (true) {
    c.ws();
    if (c.i >= text.size()) return true;
    std::size_t eq = text.find('=', c.i);
    if (eq == std::string::npos) return false;
    std::string key = text.substr(c.i, eq - c.i);
    c.i = eq + 1;
    if (key == "axis" || key == "scatter_dimension" || key == "split_axis") {
      if (!c.integer(sig.axis)) return false;
    } else if (key == "concat_axis") {
      if (!c.integer(sig.concat_axis)) return false;
    } else if (key == "tiled") {
      if (text.compare(c.i, 4, "True") == 0) {
        sig.tiled = true;
        c.i += 4;
      } else if (text.compare(c.i, 5, "False") == 0) {
        sig.tiled = false;
        c.i += 5;
      } else {
        return false;
      }
    } else if (key == "perm") {
      if (!c.eat('[')) return false;
      SharedPerm::Pairs pairs;
      if (!c.eat(']')) {
        do {
          int a, b;
          if (!c.eat('(') || !c.integer(a) || !c.eat(',') || !c.integer(b) || !c.eat(')')) return false;
          pairs.push_back({a, b});
        } while (c.eat(','));
        if (!c.eat(']')) return false;
      }
      sig.perm = SharedPerm(std::move(pairs));
    } else if (key == "axis_index_groups") {
      if (!c.eat('[')) return false;
      sig.groups.clear();
      do {
        std::vector<int> g;
        if (!c.eat('[')) return false;
        if (!c.eat(']')) {
          do {
            int v;
            if (!c.integer(v)) return false;
            g.push_back(v);
          } while (c.eat(','));
          if (!c.eat(']')) return false;
        }
        sig.groups.push_back(std::move(g));
      } while (c.eat(','));
      if (!c.eat(']')) return false;
    } else {
      return false;
    }
  }
}

}  // namespace spmd::detail
