#include "diagnose/pickle_reader.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <variant>
#include <vector>

#include "spmd/error.h"

namespace spmd::detail {

namespace {

// The pickle machine's values, owned by the machine and named by index.
// Containers are shared, as in Python: the memo holds the same list a later
// APPEND fills, and a value memoised once may be fetched many times (the
// flight recorder shares one dict per stack frame). A hostile pickle may
// even put a list inside itself: indices make that a cycle the conversion
// stops at (depth bound), not a leak.
using NodePtr = std::size_t;
struct Node {
  enum class Kind { kScalar, kList, kTuple, kDict } kind = Kind::kScalar;
  Json scalar;
  std::vector<NodePtr> items;                        // list, tuple
  std::vector<std::pair<NodePtr, NodePtr>> entries;  // dict
};

class Machine {
 public:
  Machine(std::string_view bytes, const std::string& source) : in_(bytes), source_(source) {}

  Json run() {
    for (;;) {
      const std::size_t op_at = pos_;
      const auto op = static_cast<unsigned char>(take(1)[0]);
      switch (op) {
        case 0x80: take(1); break;           // PROTO
        case 0x95: take(8); break;           // FRAME: a length hint
        case '.': {                          // STOP
          if (stack_.size() != 1 || !marks_.empty()) fail(op_at, "STOP with " + std::to_string(stack_.size()) + " values on the stack");
          std::size_t budget = kMaxValues;
          return to_json(stack_.back(), 0, budget);
        }
        case '(': marks_.push_back(stack_.size()); break;
        case 'N': push(scalar(Json())); break;
        case 0x88: push(scalar(Json(true))); break;
        case 0x89: push(scalar(Json(false))); break;
        case 'K': push(scalar(Json(static_cast<std::int64_t>(static_cast<unsigned char>(take(1)[0]))))); break;
        case 'M': push(scalar(Json(static_cast<std::int64_t>(little_endian(take(2)))))); break;
        case 'J': push(scalar(Json(static_cast<std::int64_t>(static_cast<std::int32_t>(little_endian(take(4))))))); break;
        case 0x8a: push(scalar(Json(long_value(op_at, static_cast<unsigned char>(take(1)[0]))))); break;
        case 0x8b: push(scalar(Json(long_value(op_at, little_endian(take(4)))))); break;
        case 'I':
        case 'L': push(scalar(text_int(op_at, line()))); break;
        case 'G': {
          std::uint64_t bits = 0;
          for (char c : take(8)) bits = bits << 8 | static_cast<unsigned char>(c);
          push(scalar(Json(std::bit_cast<double>(bits))));
          break;
        }
        case 'X': push(scalar(Json(std::string(take(little_endian(take(4))))))); break;
        case 0x8c: push(scalar(Json(std::string(take(static_cast<unsigned char>(take(1)[0])))))); break;
        case 0x8d: push(scalar(Json(std::string(take(little_endian(take(8))))))); break;
        case 'T': push(scalar(Json(std::string(take(little_endian(take(4))))))); break;  // BINSTRING
        case 'U': push(scalar(Json(std::string(take(static_cast<unsigned char>(take(1)[0])))))); break;
        case 'B': push(scalar(Json(std::string(take(little_endian(take(4))))))); break;  // BINBYTES
        case 'C': push(scalar(Json(std::string(take(static_cast<unsigned char>(take(1)[0])))))); break;
        case 0x8e: push(scalar(Json(std::string(take(little_endian(take(8))))))); break;
        case '}': push(container(Node::Kind::kDict)); break;
        case ']': push(container(Node::Kind::kList)); break;
        case ')': push(container(Node::Kind::kTuple)); break;
        case 'd': {
          std::vector<NodePtr> items = pop_mark(op_at);
          if (items.size() % 2 != 0) fail(op_at, "DICT with an odd number of items");
          NodePtr d = container(Node::Kind::kDict);
          for (std::size_t k = 0; k < items.size(); k += 2) node(d).entries.emplace_back(items[k], items[k + 1]);
          push(d);
          break;
        }
        case 'l':
        case 't': {
          std::vector<NodePtr> items = pop_mark(op_at);
          NodePtr c = container(op == 'l' ? Node::Kind::kList : Node::Kind::kTuple);
          node(c).items = std::move(items);
          push(c);
          break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {
          const std::size_t n = op - 0x84u;
          if (stack_.size() < n) fail(op_at, "TUPLE" + std::to_string(n) + " on a stack of " + std::to_string(stack_.size()));
          std::vector<NodePtr> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
          stack_.resize(stack_.size() - n);
          NodePtr t = container(Node::Kind::kTuple);
          node(t).items = std::move(items);
          push(t);
          break;
        }
        case 'a': {
          NodePtr v = pop(op_at);
          target(op_at, Node::Kind::kList, stack_.size())->items.push_back(v);
          break;
        }
        case 'e': {
          std::vector<NodePtr> items = pop_mark(op_at);
          auto& list = target(op_at, Node::Kind::kList, stack_.size())->items;
          list.insert(list.end(), items.begin(), items.end());
          break;
        }
        case 's': {
          NodePtr v = pop(op_at);
          NodePtr k = pop(op_at);
          target(op_at, Node::Kind::kDict, stack_.size())->entries.emplace_back(k, v);
          break;
        }
        case 'u': {
          std::vector<NodePtr> items = pop_mark(op_at);
          if (items.size() % 2 != 0) fail(op_at, "SETITEMS with an odd number of items");
          auto& dict = target(op_at, Node::Kind::kDict, stack_.size())->entries;
          for (std::size_t k = 0; k < items.size(); k += 2) dict.emplace_back(items[k], items[k + 1]);
          break;
        }
        case 'q': memo_[static_cast<unsigned char>(take(1)[0])] = top(op_at); break;
        case 'r': memo_[little_endian(take(4))] = top(op_at); break;
        case 0x94: memo_[memo_.size()] = top(op_at); break;
        case 'p': memo_[text_index(op_at, line())] = top(op_at); break;
        case 'h': push(memo_get(op_at, static_cast<unsigned char>(take(1)[0]))); break;
        case 'j': push(memo_get(op_at, little_endian(take(4)))); break;
        case 'g': push(memo_get(op_at, text_index(op_at, line()))); break;
        case '0': pop(op_at); break;
        case '2': push(top(op_at)); break;
        case '1': pop_mark(op_at); break;
        default:
          fail(op_at, "opcode " + describe(op) +
                          " is outside plain data (it would build Python objects), and a flight-recorder dump never "
                          "holds one");
      }
    }
  }

 private:
  NodePtr scalar(Json v) {
    nodes_.emplace_back();
    nodes_.back().scalar = std::move(v);
    return nodes_.size() - 1;
  }
  NodePtr container(Node::Kind k) {
    nodes_.emplace_back();
    nodes_.back().kind = k;
    return nodes_.size() - 1;
  }
  Node& node(NodePtr n) { return nodes_[n]; }

  static constexpr std::size_t kMaxValues = std::size_t{1} << 22;
  static constexpr int kMaxDepth = 200;

  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    Report r = make_report("SyntaxError", source_ + ": byte " + std::to_string(at) + ": invalid pickle: " + what,
                           "give the dump as the flight recorder wrote it (a pickle or its JSON form), whole");
    r.where = SourceLoc{intern_path(source_), 1, 1};
    throw SyntaxError(std::move(r));
  }

  static std::string describe(unsigned char op) {
    static const char* const hex = "0123456789abcdef";
    std::string s = "0x";
    s += hex[op >> 4];
    s += hex[op & 15];
    if (op >= 0x20 && op < 0x7f) s += std::string(" ('") + static_cast<char>(op) + "')";
    return s;
  }

  std::string_view take(std::uint64_t n) {
    if (n > in_.size() - pos_) fail(pos_, "the file ends in the middle of a value (cut short?)");
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string_view line() {
    const std::size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) fail(pos_, "the file ends in the middle of a value (cut short?)");
    std::string_view s = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  static std::uint64_t little_endian(std::string_view b) {
    std::uint64_t v = 0;
    for (std::size_t k = b.size(); k-- > 0;) v = v << 8 | static_cast<unsigned char>(b[k]);
    return v;
  }
  Json long_value(std::size_t at, std::uint64_t n) {
    if (n > 8) fail(at, "an integer of " + std::to_string(n) + " bytes (more than 64 bits)");
    std::string_view b = take(n);
    if (n == 0) return Json(std::int64_t{0});
    std::uint64_t v = little_endian(b);
    if (n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80)) v |= ~std::uint64_t{0} << (8 * n);  // sign
    return Json(static_cast<std::int64_t>(v));
  }
  Json text_int(std::size_t at, std::string_view s) {
    if (!s.empty() && s.back() == 'L') s.remove_suffix(1);
    if (s == "01") return Json(true);
    if (s == "00") return Json(false);
    std::int64_t v = 0;
    bool neg = !s.empty() && s[0] == '-';
    std::size_t k = neg ? 1 : 0;
    if (k == s.size() || s.size() - k > 18) fail(at, "an integer '" + std::string(s.substr(0, 40)) + "' out of reach");
    for (; k < s.size(); ++k) {
      if (s[k] < '0' || s[k] > '9') fail(at, "an integer '" + std::string(s.substr(0, 40)) + "' that is not one");
      v = v * 10 + (s[k] - '0');
    }
    return Json(neg ? -v : v);
  }
  std::uint64_t text_index(std::size_t at, std::string_view s) {
    Json v = text_int(at, s);
    if (!v.is_int() || v.as_int() < 0) fail(at, "a memo index that is not one");
    return static_cast<std::uint64_t>(v.as_int());
  }

  void push(NodePtr n) {
    if (stack_.size() > kMaxValues || nodes_.size() > kMaxValues) fail(pos_, "more than " + std::to_string(kMaxValues) + " values on the stack");
    stack_.push_back(std::move(n));
  }
  NodePtr pop(std::size_t at) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail(at, "a value taken from an empty stack");
    NodePtr n = stack_.back();
    stack_.pop_back();
    return n;
  }
  NodePtr top(std::size_t at) {
    if (stack_.empty()) fail(at, "a memo entry for an empty stack");
    return stack_.back();
  }
  std::vector<NodePtr> pop_mark(std::size_t at) {
    if (marks_.empty()) fail(at, "no MARK to end");
    const std::size_t from = marks_.back();
    marks_.pop_back();
    std::vector<NodePtr> items(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
    stack_.resize(from);
    return items;
  }
  // The container below the values just taken.
  Node* target(std::size_t at, Node::Kind kind, std::size_t size) {
    if (size == 0 || size <= (marks_.empty() ? 0 : marks_.back()) || nodes_[stack_[size - 1]].kind != kind) {
      fail(at, std::string(kind == Node::Kind::kList ? "APPEND to something that is not a list"
                                                     : "SETITEM on something that is not a dict"));
    }
    return &nodes_[stack_[size - 1]];
  }
  NodePtr memo_get(std::size_t at, std::uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail(at, "memo entry " + std::to_string(index) + " fetched before it was stored");
    return it->second;
  }

  Json to_json(NodePtr id, int depth, std::size_t& budget) const {
    const Node* n = &nodes_[id];
    if (budget-- == 0) fail(pos_, "the value expands to more than " + std::to_string(kMaxValues) + " items");
    if (depth > kMaxDepth) fail(pos_, "values nested more than " + std::to_string(kMaxDepth) + " deep");
    switch (n->kind) {
      case Node::Kind::kScalar: return n->scalar;
      case Node::Kind::kList:
      case Node::Kind::kTuple: {
        Json a = Json::array();
        for (NodePtr i : n->items) a.push(to_json(i, depth + 1, budget));
        return a;
      }
      case Node::Kind::kDict: {
        Json o = Json::object();
        for (const auto& [k, v] : n->entries) {
          Json key = to_json(k, depth + 1, budget);
          o.set(key.is_string() ? key.as_string() : key.dump(), to_json(v, depth + 1, budget));
        }
        return o;
      }
    }
    return Json();
  }

  std::string_view in_;
  const std::string& source_;
  std::size_t pos_ = 0;
  std::vector<NodePtr> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, NodePtr> memo_;
  std::deque<Node> nodes_;
};

}  // namespace

Json read_pickle(std::string_view bytes, const std::string& source) { return Machine(bytes, source).run(); }

}  // namespace spmd::detail
