#include "util/pretty_printer.h"

#include <utility>

namespace spmd::pp {

struct Node {
  enum class Kind { kNil, kText, kBreak, kNest, kGroup, kConcat };
  Kind kind = Kind::kNil;
  std::string text;  // kText, and kBreak's flat form
  int indent = 0;    // kNest
  std::vector<Doc> children;
};

namespace {

Doc make(Node::Kind kind, std::string s = {}, int indent = 0, std::vector<Doc> children = {}) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->text = std::move(s);
  n->indent = indent;
  n->children = std::move(children);
  return n;
}

enum class Mode { kFlat, kBreak };

struct Item {
  int indent;
  Mode mode;
  const Node* node;
};

// Whether `node` laid flat fits in `width` columns. Only the group itself
// counts, not what follows it on the line (as JAX's printer decides).
bool fits(const Node* node, long width) {
  std::vector<const Node*> agenda{node};
  while (width >= 0 && !agenda.empty()) {
    const Node* n = agenda.back();
    agenda.pop_back();
    switch (n->kind) {
      case Node::Kind::kNil: break;
      case Node::Kind::kText:
      case Node::Kind::kBreak: width -= static_cast<long>(n->text.size()); break;
      case Node::Kind::kNest:
      case Node::Kind::kGroup: agenda.push_back(n->children[0].get()); break;
      case Node::Kind::kConcat:
        for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) agenda.push_back(it->get());
        break;
    }
  }
  return width >= 0;
}

}  // namespace

Doc nil() { return make(Node::Kind::kNil); }
Doc text(std::string s) { return make(Node::Kind::kText, std::move(s)); }
Doc brk(std::string flat) { return make(Node::Kind::kBreak, std::move(flat)); }
Doc nest(int n, Doc child) { return make(Node::Kind::kNest, {}, n, {std::move(child)}); }
Doc group(Doc child) { return make(Node::Kind::kGroup, {}, 0, {std::move(child)}); }
Doc concat(std::vector<Doc> children) { return make(Node::Kind::kConcat, {}, 0, std::move(children)); }

Doc join(const Doc& separator, const std::vector<Doc>& docs) {
  std::vector<Doc> out;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (i) out.push_back(separator);
    out.push_back(docs[i]);
  }
  return concat(std::move(out));
}

std::string format(const Doc& doc, int width) {
  std::string out;
  long column = 0;
  std::vector<Item> agenda{{0, Mode::kBreak, doc.get()}};
  while (!agenda.empty()) {
    Item item = agenda.back();
    agenda.pop_back();
    const Node* n = item.node;
    switch (n->kind) {
      case Node::Kind::kNil: break;
      case Node::Kind::kText:
        out += n->text;
        column += static_cast<long>(n->text.size());
        break;
      case Node::Kind::kBreak:
        if (item.mode == Mode::kBreak) {
          out += '\n';
          out.append(static_cast<std::size_t>(item.indent), ' ');
          column = item.indent;
        } else {
          out += n->text;
          column += static_cast<long>(n->text.size());
        }
        break;
      case Node::Kind::kNest: agenda.push_back({item.indent + n->indent, item.mode, n->children[0].get()}); break;
      case Node::Kind::kGroup:
        agenda.push_back({item.indent, fits(n->children[0].get(), width - column) ? Mode::kFlat : Mode::kBreak,
                          n->children[0].get()});
        break;
      case Node::Kind::kConcat:
        for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) agenda.push_back({item.indent, item.mode, it->get()});
        break;
    }
  }
  return out;
}

}  // namespace spmd::pp
