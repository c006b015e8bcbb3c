#include "scenario/value.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "scenario/python_errors.h"

namespace spmd::scenario {

Value Value::str(std::string s) { return object(Kind::kStr, std::make_shared<StrObject>(std::move(s))); }

Value Value::tuple(std::vector<Value> items) {
  return object(Kind::kTuple, std::make_shared<TupleObject>(std::move(items)));
}

Value Value::list(std::vector<Value> items, std::uint64_t owner) {
  return object(Kind::kList, std::make_shared<ListObject>(std::move(items), owner));
}

Value Value::array(Array a) { return object(Kind::kArray, std::make_shared<ArrayObject>(std::move(a))); }

const std::string& Value::as_str() const { return static_cast<const StrObject&>(*obj_).s; }
const Array& Value::as_array() const { return static_cast<const ArrayObject&>(*obj_).array; }
const std::vector<Value>& Value::tuple_items() const { return static_cast<const TupleObject&>(*obj_).items; }

bool Value::is_same(const Value& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
    case Kind::kEllipsis:
      return true;
    case Kind::kBool:
    case Kind::kInt:
    case Kind::kDType:
      return u_.i == other.u_.i;
    case Kind::kFloat:
      return std::memcmp(&u_.f, &other.u_.f, sizeof(double)) == 0;
    default:
      return obj_ == other.obj_;
  }
}

std::int64_t RangeObject::length() const {
  if (step > 0 && start < stop) return (stop - start + step - 1) / step;
  if (step < 0 && start > stop) return (start - stop - step - 1) / (-step);
  return 0;
}

namespace {

std::size_t hash_mix(std::size_t h, std::size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

}  // namespace

void release_items(std::vector<Value>& items) noexcept {
  // Values dropped while another container is being destroyed are parked in
  // `pending` and freed by the outermost call, so the C++ stack stays flat.
  thread_local int depth = 0;
  thread_local std::vector<Value>* pending = nullptr;
  if (depth > 0) {
    if (pending == nullptr) pending = new std::vector<Value>();
    for (auto& v : items) {
      if (v.object() != nullptr) pending->push_back(std::move(v));
    }
    items.clear();
    return;
  }
  ++depth;
  items.clear();
  while (pending != nullptr && !pending->empty()) {
    Value v = std::move(pending->back());
    pending->pop_back();
    v = Value();
  }
  --depth;
}

PyDict::~PyDict() {
  std::vector<Value> parked;
  parked.reserve(entries_.size() * 2);
  for (auto& e : entries_) {
    parked.push_back(std::move(e.key));
    parked.push_back(std::move(e.value));
  }
  index_.clear();
  entries_.clear();
  release_items(parked);
}

std::size_t hash_value(const Value& v, int depth) {
  if (depth > kMaxValueDepth) raise_error("RecursionError", "maximum recursion depth exceeded while hashing a value");
  switch (v.kind()) {
    case Kind::kNone:
      return 0x5bd1e995;
    case Kind::kEllipsis:
      return 0x27d4eb2f;
    case Kind::kBool:
    case Kind::kInt:
      return std::hash<std::int64_t>()(v.as_int());
    case Kind::kFloat: {
      double d = v.as_float();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
        return std::hash<std::int64_t>()(static_cast<std::int64_t>(d));
      }
      return std::hash<double>()(d);
    }
    case Kind::kDType:
      return hash_mix(0x85ebca6b, static_cast<std::size_t>(v.as_int()));
    case Kind::kStr:
      return std::hash<std::string>()(v.as_str());
    case Kind::kTuple: {
      std::size_t h = 0x345678;
      for (const auto& item : v.tuple_items()) h = hash_mix(h, hash_value(item, depth + 1));
      return h;
    }
    case Kind::kList:
    case Kind::kDict:
    case Kind::kArray:
    case Kind::kSlice:
    case Kind::kUndefined:
      raise_type_error("unhashable type: '" + type_name(v) + "'");
    case Kind::kSet:
      if (!v.as<SetObject>().frozen) raise_type_error("unhashable type: 'set'");
      return std::hash<const void*>()(v.object());
    default:
      return std::hash<const void*>()(v.object());
  }
}

bool keys_equal(const Value& a, const Value& b, int depth) {
  if (depth > kMaxValueDepth) raise_error("RecursionError", "maximum recursion depth exceeded in comparison");
  if (a.is_number() && b.is_number()) {
    if (a.kind() != Kind::kFloat && b.kind() != Kind::kFloat) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kStr:
      return a.as_str() == b.as_str();
    case Kind::kTuple: {
      const auto& x = a.tuple_items();
      const auto& y = b.tuple_items();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!keys_equal(x[i], y[i], depth + 1)) return false;
      }
      return true;
    }
    default:
      return a.is_same(b);
  }
}

Value* PyDict::find(const Value& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].value;
}

const Value* PyDict::find(const Value& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].value;
}

void PyDict::set(const Value& key, Value value) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    entries_[it->second].value = std::move(value);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.push_back(Entry{key, std::move(value), true});
}

bool PyDict::erase(const Value& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  Entry& e = entries_[it->second];
  e.live = false;
  e.key = Value();
  e.value = Value();
  index_.erase(it);
  if (entries_.size() > 16 && index_.size() * 2 < entries_.size()) compact();
  return true;
}

void PyDict::clear() {
  entries_.clear();
  index_.clear();
}

void PyDict::compact() {
  std::vector<Entry> live;
  live.reserve(index_.size());
  for (auto& e : entries_) {
    if (e.live) live.push_back(std::move(e));
  }
  entries_ = std::move(live);
  index_.clear();
  for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].key, i);
}

std::vector<Value> PyDict::keys() const {
  std::vector<Value> out;
  out.reserve(size());
  for_each([&](const Value& k, const Value&) { out.push_back(k); });
  return out;
}

std::vector<Value> PyDict::values() const {
  std::vector<Value> out;
  out.reserve(size());
  for_each([&](const Value&, const Value& v) { out.push_back(v); });
  return out;
}

std::vector<std::pair<Value, Value>> PyDict::items() const {
  std::vector<std::pair<Value, Value>> out;
  out.reserve(size());
  for_each([&](const Value& k, const Value& v) { out.emplace_back(k, v); });
  return out;
}

std::vector<Value> set_keys(const SetObject& s) {
  std::vector<Value> keys = s.map.keys();
  bool small_ints = std::all_of(keys.begin(), keys.end(), [&](const Value& k) {
    return k.is_int_like() && k.as_int() >= 0 && k.as_int() < 8 * static_cast<std::int64_t>(keys.size() + 1);
  });
  if (small_ints) {
    std::sort(keys.begin(), keys.end(), [](const Value& a, const Value& b) { return a.as_int() < b.as_int(); });
  }
  return keys;
}

Value make_dict(std::uint64_t owner) { return Value::object(Kind::kDict, std::make_shared<DictObject>(owner)); }
Value make_set(std::uint64_t owner) { return Value::object(Kind::kSet, std::make_shared<SetObject>(owner)); }

}  // namespace spmd::scenario
