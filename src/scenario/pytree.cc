#include "scenario/pytree.h"

#include <algorithm>

#include "scenario/operators.h"
#include "scenario/python_errors.h"

namespace spmd::scenario {

namespace {

const std::vector<Value>& seq_items(const Value& v) {
  return v.is(Kind::kList) ? v.as<ListObject>().items : v.tuple_items();
}

std::vector<Value> sorted_keys(Interpreter& interp, ExecState& st, const PyDict& map) {
  std::vector<Value> keys = map.keys();
  try {
    std::stable_sort(keys.begin(), keys.end(), [&](const Value& a, const Value& b) { return py_less(interp, st, a, b); });
  } catch (ProgramError& e) {
    if (e.kind() != "TypeError") throw;
    raise_type_error("pytree dict keys must be sortable (all str or all int): " + e.report().message);
  }
  return keys;
}

}  // namespace

TreeDef tree_flatten(Interpreter& interp, ExecState& st, const Value& v, std::vector<Value>& leaves) {
  interp.check_native_stack(st);
  TreeDef t;
  switch (v.kind()) {
    case Kind::kNone:
      t.type = TreeDef::Type::kNone;
      t.num_leaves = 0;
      return t;
    case Kind::kTuple:
    case Kind::kList: {
      t.type = v.is(Kind::kTuple) ? TreeDef::Type::kTuple : TreeDef::Type::kList;
      std::vector<Value> items = interp.iterate(st, v);
      t.num_leaves = 0;
      for (const auto& item : items) {
        t.children.push_back(tree_flatten(interp, st, item, leaves));
        t.num_leaves += t.children.back().num_leaves;
      }
      return t;
    }
    case Kind::kDict: {
      t.type = TreeDef::Type::kDict;
      PyDict copy;
      {
        Interpreter::HeapGuard g(interp, st, v.object());
        v.as<DictObject>().map.for_each([&](const Value& k, const Value& x) { copy.set(k, x); });
      }
      t.keys = sorted_keys(interp, st, copy);
      t.num_leaves = 0;
      for (const auto& k : t.keys) {
        t.children.push_back(tree_flatten(interp, st, *copy.find(k), leaves));
        t.num_leaves += t.children.back().num_leaves;
      }
      return t;
    }
    default:
      leaves.push_back(v);
      return t;
  }
}

namespace {

Value unflatten_at(ExecState& st, const TreeDef& t, const std::vector<Value>& leaves, std::size_t& pos) {
  switch (t.type) {
    case TreeDef::Type::kLeaf:
      return leaves.at(pos++);
    case TreeDef::Type::kNone:
      return Value::none();
    case TreeDef::Type::kTuple:
    case TreeDef::Type::kList: {
      std::vector<Value> items;
      for (const auto& c : t.children) items.push_back(unflatten_at(st, c, leaves, pos));
      if (t.type == TreeDef::Type::kTuple) return Value::tuple(std::move(items));
      return Value::list(std::move(items), st.token);
    }
    case TreeDef::Type::kDict: {
      Value d = make_dict(st.token);
      for (std::size_t i = 0; i < t.keys.size(); ++i) {
        d.as<DictObject>().map.set(t.keys[i], unflatten_at(st, t.children[i], leaves, pos));
      }
      return d;
    }
  }
  return Value::none();
}

}  // namespace

Value tree_unflatten(ExecState& st, const TreeDef& t, const std::vector<Value>& leaves) {
  std::size_t pos = 0;
  return unflatten_at(st, t, leaves, pos);
}

namespace {

void render(Interpreter& interp, ExecState& st, const TreeDef& t, std::string& out) {
  switch (t.type) {
    case TreeDef::Type::kLeaf:
      out += "*";
      return;
    case TreeDef::Type::kNone:
      out += "None";
      return;
    case TreeDef::Type::kTuple:
    case TreeDef::Type::kList: {
      bool tuple = t.type == TreeDef::Type::kTuple;
      out += tuple ? "(" : "[";
      for (std::size_t i = 0; i < t.children.size(); ++i) {
        if (i) out += ", ";
        render(interp, st, t.children[i], out);
      }
      if (tuple && t.children.size() == 1) out += ",";
      out += tuple ? ")" : "]";
      return;
    }
    case TreeDef::Type::kDict:
      out += "{";
      for (std::size_t i = 0; i < t.children.size(); ++i) {
        if (i) out += ", ";
        out += interp.repr(st, t.keys[i]) + ": ";
        render(interp, st, t.children[i], out);
      }
      out += "}";
      return;
  }
}

}  // namespace

std::string TreeDef::to_string(Interpreter& interp, ExecState& st) const {
  std::string out = "PyTreeDef(";
  render(interp, st, *this, out);
  return out + ")";
}

bool TreeDef::same_structure(const TreeDef& o) const {
  if (type != o.type || children.size() != o.children.size()) return false;
  if (type == Type::kDict) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!keys_equal(keys[i], o.keys[i])) return false;
    }
  }
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (!children[i].same_structure(o.children[i])) return false;
  }
  return true;
}

void leaf_paths(Interpreter& interp, ExecState& st, const TreeDef& t, const std::string& base,
                std::vector<std::string>& out) {
  switch (t.type) {
    case TreeDef::Type::kLeaf:
      out.push_back(base);
      return;
    case TreeDef::Type::kNone:
      return;
    case TreeDef::Type::kTuple:
    case TreeDef::Type::kList:
      for (std::size_t i = 0; i < t.children.size(); ++i) {
        leaf_paths(interp, st, t.children[i], base + "[" + std::to_string(i) + "]", out);
      }
      return;
    case TreeDef::Type::kDict:
      for (std::size_t i = 0; i < t.children.size(); ++i) {
        leaf_paths(interp, st, t.children[i], base + "[" + interp.repr(st, t.keys[i]) + "]", out);
      }
      return;
  }
}

bool broadcast_prefix(Interpreter& interp, ExecState& st, const Value& prefix, const TreeDef& full,
                      std::vector<Value>& out) {
  bool container = prefix.is(Kind::kTuple) || prefix.is(Kind::kList) || prefix.is(Kind::kDict);
  if (!container) {
    for (std::size_t i = 0; i < full.num_leaves; ++i) out.push_back(prefix);
    return true;
  }
  if (prefix.is(Kind::kTuple) != (full.type == TreeDef::Type::kTuple) ||
      prefix.is(Kind::kList) != (full.type == TreeDef::Type::kList) ||
      prefix.is(Kind::kDict) != (full.type == TreeDef::Type::kDict)) {
    return false;
  }
  if (prefix.is(Kind::kDict)) {
    const auto& map = prefix.as<DictObject>().map;
    if (map.size() != full.keys.size()) return false;
    for (std::size_t i = 0; i < full.keys.size(); ++i) {
      const Value* v = map.find(full.keys[i]);
      if (!v || !broadcast_prefix(interp, st, *v, full.children[i], out)) return false;
    }
    return true;
  }
  const std::vector<Value>& items = seq_items(prefix);
  if (items.size() != full.children.size()) return false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!broadcast_prefix(interp, st, items[i], full.children[i], out)) return false;
  }
  return true;
}

}  // namespace spmd::scenario
