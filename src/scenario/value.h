#pragma once
// The value model of the scenario interpreter.
//
// A Value is a small handle: None, bool, int (64-bit), float, Ellipsis and
// dtypes are stored inline; everything else points to a reference-counted
// Object. Strings, tuples, arrays, ranges and slices are immutable; lists,
// dicts, sets and cells are mutable and remember the device-function
// invocation that created them (`owner`, 0 for the host), which is how
// side effects inside a pmap-ed function are recognised.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "spmd/core/array.h"
#include "spmd/core/dtype.h"

namespace spmd::scenario {

class Object;
struct StrObject;
struct TupleObject;
struct ListObject;
struct DictObject;
struct ArrayObject;

enum class Kind : std::uint8_t {
  kUndefined,  ///< internal: an unbound variable or an omitted argument
  kNone,
  kBool,
  kInt,
  kFloat,
  kEllipsis,
  kDType,      ///< jnp.float32 and friends
  kStr,
  kTuple,
  kList,
  kDict,
  kSet,
  kArray,
  kRange,
  kSlice,
  kFunction,   ///< a user function (def / lambda)
  kNative,     ///< a built-in function or bound method
  kModule,
  kType,       ///< int, float, str, list, ... as values
  kException,  ///< an exception object (raise / except ... as e)
  kIterator,
  kCell,
  kOther,      ///< CustomObject: pmap-ed functions, devices, .at helpers, ...
};

class Value {
 public:
  Value() = default;

  static Value none() { return Value(Kind::kNone); }
  static Value boolean(bool b) {
    Value v(Kind::kBool);
    v.u_.i = b;
    return v;
  }
  static Value integer(std::int64_t i) {
    Value v(Kind::kInt);
    v.u_.i = i;
    return v;
  }
  static Value floating(double f) {
    Value v(Kind::kFloat);
    v.u_.f = f;
    return v;
  }
  static Value ellipsis() { return Value(Kind::kEllipsis); }
  static Value dtype(DType t) {
    Value v(Kind::kDType);
    v.u_.i = static_cast<std::int64_t>(t);
    return v;
  }
  static Value str(std::string s);
  static Value tuple(std::vector<Value> items);
  static Value list(std::vector<Value> items, std::uint64_t owner);
  static Value array(Array a);
  static Value object(Kind kind, std::shared_ptr<Object> obj) {
    Value v(kind);
    v.obj_ = std::move(obj);
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is(Kind k) const { return kind_ == k; }
  /// bool or int (Python's int includes bool).
  bool is_int_like() const { return kind_ == Kind::kInt || kind_ == Kind::kBool; }
  /// bool, int or float.
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kBool || kind_ == Kind::kFloat; }

  bool as_bool() const { return u_.i != 0; }
  std::int64_t as_int() const { return u_.i; }  ///< int or bool
  double as_float() const { return kind_ == Kind::kFloat ? u_.f : static_cast<double>(u_.i); }
  DType as_dtype() const { return static_cast<DType>(u_.i); }
  const std::string& as_str() const;
  const Array& as_array() const;
  const std::vector<Value>& tuple_items() const;

  Object* object() const { return obj_.get(); }
  const std::shared_ptr<Object>& object_ptr() const { return obj_; }
  template <class T>
  T& as() const {
    return static_cast<T&>(*obj_);
  }

  /// Identity (Python `is`): same inline value or same object.
  bool is_same(const Value& other) const;

 private:
  explicit Value(Kind k) : kind_(k) {}
  Kind kind_ = Kind::kUndefined;
  union {
    std::int64_t i;
    double f;
  } u_{0};
  std::shared_ptr<Object> obj_;
};

class Object {
 public:
  explicit Object(std::uint64_t owner = 0) : owner_(owner) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  /// The device-function invocation that created this object (0: the host).
  std::uint64_t owner() const { return owner_; }

 private:
  std::uint64_t owner_;
};

struct StrObject : Object {
  explicit StrObject(std::string v) : s(std::move(v)) {}
  std::string s;
};

/// Releases `items` without unbounded recursion: deeply nested containers
/// (x = [x] in a loop) are freed iteratively, like CPython's trashcan.
void release_items(std::vector<Value>& items) noexcept;

struct TupleObject : Object {
  explicit TupleObject(std::vector<Value> v) : items(std::move(v)) {}
  ~TupleObject() override { release_items(items); }
  std::vector<Value> items;
};

struct ListObject : Object {
  ListObject(std::vector<Value> v, std::uint64_t owner) : Object(owner), items(std::move(v)) {}
  ~ListObject() override { release_items(items); }
  std::vector<Value> items;
};

struct ArrayObject : Object {
  explicit ArrayObject(Array a) : array(std::move(a)) {}
  Array array;
};

struct RangeObject : Object {
  RangeObject(std::int64_t a, std::int64_t b, std::int64_t c) : start(a), stop(b), step(c) {}
  std::int64_t length() const;
  std::int64_t start, stop, step;
};

struct SliceObject : Object {
  SliceObject(Value a, Value b, Value c) : start(std::move(a)), stop(std::move(b)), step(std::move(c)) {}
  Value start, stop, step;
};

struct CellObject : Object {
  explicit CellObject(std::uint64_t owner, Value v = {}) : Object(owner), value(std::move(v)) {}
  Value value;
};

struct ExceptionObject : Object {
  ExceptionObject(std::string k, std::string m) : kind(std::move(k)), message(std::move(m)) {}
  std::string kind;
  std::string message;
};

struct IteratorObject : Object {
  IteratorObject(std::string type, std::vector<Value> v, std::uint64_t owner)
      : Object(owner), type_name(std::move(type)), items(std::move(v)) {}
  std::string type_name;  ///< "zip", "map", "list_iterator", ...
  std::vector<Value> items;
  std::size_t next = 0;
};

/// Built-in types as values (int, float, str, list, jnp.ndarray, ...).
struct TypeObject : Object {
  TypeObject(std::string n, Kind k, Value c) : name(std::move(n)), instance_kind(k), ctor(std::move(c)) {}
  std::string name;    ///< "int", "ArrayImpl", "ValueError", ...
  Kind instance_kind;  ///< what isinstance() checks (kException: exception classes, matched by name)
  Value ctor;          ///< called when the type is called: int("3"), ValueError("bad"); may be undefined
};

// --- hashing and dict ------------------------------------------------------

/// Python's hash for hashable values; throws TypeError ("unhashable type: 'list'").
std::size_t hash_value(const Value& v, int depth = 0);
/// Python `==` for hashable values (1 == 1.0 == True, tuples elementwise).
bool keys_equal(const Value& a, const Value& b, int depth = 0);
/// Nesting accepted by the recursive helpers on values before RecursionError.
inline constexpr int kMaxValueDepth = 500;

/// An insertion-ordered hash map keyed by Values (Python's dict and set).
class PyDict {
 public:
  PyDict() = default;
  PyDict(const PyDict&) = default;
  PyDict& operator=(const PyDict&) = default;
  ~PyDict();
  std::size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  /// The value stored under `key`, or nullptr.
  Value* find(const Value& key);
  const Value* find(const Value& key) const;
  void set(const Value& key, Value value);
  bool erase(const Value& key);
  void clear();
  /// Live entries in insertion order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& e : entries_) {
      if (e.live) f(e.key, e.value);
    }
  }
  std::vector<Value> keys() const;
  std::vector<Value> values() const;
  std::vector<std::pair<Value, Value>> items() const;

 private:
  struct Entry {
    Value key;
    Value value;
    bool live;
  };
  struct Hash {
    std::size_t operator()(const Value& v) const { return hash_value(v); }
  };
  struct Eq {
    bool operator()(const Value& a, const Value& b) const { return keys_equal(a, b); }
  };
  void compact();
  std::vector<Entry> entries_;
  std::unordered_map<Value, std::size_t, Hash, Eq> index_;
};

struct DictObject : Object {
  explicit DictObject(std::uint64_t owner) : Object(owner) {}
  PyDict map;
};

struct SetObject : Object {
  explicit SetObject(std::uint64_t owner, bool frozen = false) : Object(owner), frozen(frozen) {}
  PyDict map;  ///< keys only; values are None
  bool frozen;
};

/// A set's elements in iteration order: ascending for small non-negative ints
/// (as CPython's hash table yields them), insertion order otherwise.
std::vector<Value> set_keys(const SetObject& s);

Value make_dict(std::uint64_t owner);
Value make_set(std::uint64_t owner);

// --- names -------------------------------------------------------------------

/// Python's type name of a value: "int", "list", "ArrayImpl", "function", ...
std::string type_name(const Value& v);

}  // namespace spmd::scenario
