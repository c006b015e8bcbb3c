// jax.random's bits, as JAX computes them: the Threefry-2x32 hash (20
// rounds, Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"), and
// JAX's ways of turning a key into bits, subkeys and numbers
// (jax/_src/random/threefry2x32.py and core.py), so a program draws the
// numbers it draws under JAX. spmdsim has no unsigned dtypes: keys and bits
// are uint32 bit patterns held in int32 arrays.
//
// Both of JAX's layouts of the counters are here: "partitionable" (JAX's
// default since 0.5: element i of a draw hashes the 64-bit counter i split
// in two words, and split(key, n) equals fold_in(key, i) for i < n) and the
// original one (one long counter stream, keys split from its halves).

#include <cstring>

#include "program/primitive_rules.h"
#include "spmd/error.h"

namespace spmd::program::rules {

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

u32 rotl(u32 v, int d) { return (v << d) | (v >> (32 - d)); }

}  // namespace

std::pair<u32, u32> threefry2x32(u32 k0, u32 k1, u32 x0, u32 x1) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const u32 ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  for (int block = 0; block < 5; ++block) {
    for (int r : kRotations[block % 2]) {
      x0 += x1;
      x1 = rotl(x1, r) ^ x0;
    }
    x0 += ks[(block + 1) % 3];
    x1 += ks[(block + 2) % 3] + static_cast<u32>(block + 1);
  }
  return {x0, x1};
}

namespace {

// The keys of a key stack (*batch, 2): one key, or the keys vmap batches.
std::vector<std::pair<u32, u32>> keys_of(const Array& key) {
  Array k = key.to_host();
  const auto* w = static_cast<const std::int32_t*>(k.raw_data());
  std::vector<std::pair<u32, u32>> keys(static_cast<std::size_t>(k.size() / 2));
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = {static_cast<u32>(w[2 * i]), static_cast<u32>(w[2 * i + 1])};
  return keys;
}

Array int32_array(const std::vector<u32>& words, const Shape& shape) {
  return Array::from_raw(words.data(), shape, DType::kInt32);
}

// threefry_2x32(key, counts) of JAX: the counts' first half hashed with
// their second half (an odd count padded with a zero), outputs concatenated.
std::vector<u32> hash_counts(u32 k0, u32 k1, const std::vector<u32>& counts) {
  const std::size_t n = counts.size();
  const std::size_t half = (n + 1) / 2;
  std::vector<u32> out(2 * half);
  for (std::size_t i = 0; i < half; ++i) {
    const u32 b = half + i < n ? counts[half + i] : 0;
    auto [y0, y1] = threefry2x32(k0, k1, counts[i], b);
    out[i] = y0;
    out[half + i] = y1;
  }
  out.resize(n);
  return out;
}

std::vector<u32> iota(std::size_t n) {
  std::vector<u32> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<u32>(i);
  return v;
}

// Partitionable: element i hashes the counter i as (high word, low word).
std::pair<std::vector<u32>, std::vector<u32>> hash_iota_2x32(u32 k0, u32 k1, std::int64_t n) {
  std::vector<u32> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    auto [y0, y1] = threefry2x32(k0, k1, static_cast<u32>(static_cast<u64>(i) >> 32), static_cast<u32>(i));
    a[static_cast<std::size_t>(i)] = y0;
    b[static_cast<std::size_t>(i)] = y1;
  }
  return {std::move(a), std::move(b)};
}

// A key is int32[2]; a stack of them, int32[*batch, 2], draws for each key
// (what vmap over keys runs), its outputs stacked along the batch axes.
Shape require_keys(const Primitive& p, const Aval& key) {
  if (key.shape.empty() || key.shape.back() != 2 || key.dtype != DType::kInt32) {
    type_error(p, "a key is a uint32[2] array (held as int32[2]: jax.random.PRNGKey), got " + key.str());
  }
  return Shape(key.shape.begin(), key.shape.end() - 1);
}

Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Each key's words (split's subkeys, bits' draws) one after another.
template <typename Word, typename PerKey>
std::vector<Word> for_each_key(const Array& keys, PerKey per_key) {
  std::vector<Word> out;
  std::size_t i = 0;
  for (auto [k0, k1] : keys_of(keys)) {
    std::vector<Word> words = per_key(k0, k1, i++);
    out.insert(out.end(), words.begin(), words.end());
  }
  return out;
}

std::vector<u32> split_words(u32 k0, u32 k1, std::int64_t n, bool partitionable) {
  if (!partitionable) return hash_counts(k0, k1, iota(static_cast<std::size_t>(2 * n)));
  std::vector<u32> keys(static_cast<std::size_t>(2 * n));
  auto [a, b] = hash_iota_2x32(k0, k1, n);
  for (std::int64_t i = 0; i < n; ++i) {
    keys[static_cast<std::size_t>(2 * i)] = a[static_cast<std::size_t>(i)];
    keys[static_cast<std::size_t>(2 * i + 1)] = b[static_cast<std::size_t>(i)];
  }
  return keys;
}

// One key's draw of n values of `width` bits: 64-bit values whole, narrower
// ones as unsigned bits in the low end of each word.
std::vector<u64> bits_of(const Primitive& p, u32 k0, u32 k1, std::int64_t n, std::int64_t width, bool partitionable) {
  std::vector<u64> out(static_cast<std::size_t>(n));
  if (partitionable) {
    auto [a, b] = hash_iota_2x32(k0, k1, n);
    const u32 mask = width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = width == 64 ? (static_cast<u64>(a[i]) << 32) | b[i] : static_cast<u64>((a[i] ^ b[i]) & mask);
    }
    return out;
  }
  // The original layout: ceil(width * n / 32) words of one counter stream.
  // (JAX splits the key into blocks past 2^32 - 1 words; no array here is that large.)
  const std::int64_t words = (width * n + 31) / 32;
  if (words >= static_cast<std::int64_t>(0xFFFFFFFFu)) type_error(p, "a draw of 2^32 words or more");
  std::vector<u32> bits = hash_counts(k0, k1, iota(static_cast<std::size_t>(words)));
  if (width == 64) {
    // The first half of the words are the high halves, the second the low.
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = (static_cast<u64>(bits[i]) << 32) | bits[out.size() + i];
    return out;
  }
  if (width == 32) return std::vector<u64>(bits.begin(), bits.end());
  // 8 and 16 bits: the words viewed as narrower unsigned values, low bits first.
  const int per_word = static_cast<int>(32 / width);
  const u32 mask = (1u << width) - 1;
  for (std::int64_t i = 0; i < n; ++i) {
    out[static_cast<std::size_t>(i)] = (bits[static_cast<std::size_t>(i / per_word)] >> (width * (i % per_word))) & mask;
  }
  return out;
}

}  // namespace

// threefry_split(key; shape, partitionable) -> int32[*batch, *shape, 2]
std::vector<Aval> threefry_split_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                          const AxisEnv&) {
  if (in.size() != 1) type_error(p, "takes one key");
  Shape batch = require_keys(p, in[0]);
  const auto& shape = params.get<std::vector<std::int64_t>>("shape", p.name);
  return {Aval{concat(concat(batch, Shape(shape.begin(), shape.end())), Shape{2}), DType::kInt32, false}};
}
std::vector<Array> threefry_split_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  const auto& shape = params.get<std::vector<std::int64_t>>("shape", p.name);
  const std::int64_t n = num_elements(shape);
  const bool partitionable = params.get<bool>("partitionable", p.name);
  std::vector<u32> keys =
      for_each_key<u32>(in[0], [&](u32 k0, u32 k1, std::size_t) { return split_words(k0, k1, n, partitionable); });
  Shape batch(in[0].shape().begin(), in[0].shape().end() - 1);
  return {int32_array(keys, concat(concat(batch, Shape(shape.begin(), shape.end())), Shape{2}))};
}

// threefry_fold_in(key, data) -> int32[*batch, 2]: each key hashed with (0, its
// data); the data is a scalar, or one per key.
std::vector<Aval> threefry_fold_in_abstract(const Primitive& p, std::span<const Aval> in, const Params&,
                                            const AxisEnv&) {
  if (in.size() != 2) type_error(p, "takes a key and the data folded into it");
  Shape batch = require_keys(p, in[0]);
  if ((!in[1].shape.empty() && in[1].shape != batch) || !is_integer(in[1].dtype)) {
    type_error(p, "fold_in data must be an integer scalar, got " + in[1].str());
  }
  return {Aval{concat(batch, Shape{2}), DType::kInt32, false}};
}
std::vector<Array> threefry_fold_in_impl(const Primitive&, std::span<const Array> in, const Params&, SourceLoc) {
  const bool per_key = !in[1].shape().empty();
  std::vector<u32> keys = for_each_key<u32>(in[0], [&](u32 k0, u32 k1, std::size_t i) {
    // JAX's threefry_seed(data): the data as a uint32 (its low word), after a zero word.
    const u32 data = static_cast<u32>(static_cast<u64>(in[1].element_as_int64(per_key ? static_cast<std::int64_t>(i) : 0)));
    auto [y0, y1] = threefry2x32(k0, k1, 0, data);
    return std::vector<u32>{y0, y1};
  });
  return {int32_array(keys, in[0].shape())};
}

// threefry_bits(key; shape, width, partitionable) -> int32[*batch, *shape]
// (width 8, 16, 32: the unsigned bits in an int32) or int64 (width 64).
std::vector<Aval> threefry_bits_abstract(const Primitive& p, std::span<const Aval> in, const Params& params,
                                         const AxisEnv&) {
  if (in.size() != 1) type_error(p, "takes one key");
  Shape batch = require_keys(p, in[0]);
  const std::int64_t width = params.get<std::int64_t>("width", p.name);
  if (width != 8 && width != 16 && width != 32 && width != 64) type_error(p, "requires 8-, 16-, 32- or 64-bit field width");
  const auto& shape = params.get<std::vector<std::int64_t>>("shape", p.name);
  return {Aval{concat(batch, Shape(shape.begin(), shape.end())), width == 64 ? DType::kInt64 : DType::kInt32, false}};
}
std::vector<Array> threefry_bits_impl(const Primitive& p, std::span<const Array> in, const Params& params, SourceLoc) {
  const auto& shape_v = params.get<std::vector<std::int64_t>>("shape", p.name);
  const std::int64_t width = params.get<std::int64_t>("width", p.name);
  const std::int64_t n = num_elements(shape_v);
  const bool partitionable = params.get<bool>("partitionable", p.name);
  std::vector<u64> bits = for_each_key<u64>(
      in[0], [&](u32 k0, u32 k1, std::size_t) { return bits_of(p, k0, k1, n, width, partitionable); });
  const Shape shape = concat(Shape(in[0].shape().begin(), in[0].shape().end() - 1), Shape(shape_v.begin(), shape_v.end()));
  if (width == 64) {
    std::vector<std::int64_t> out(bits.begin(), bits.end());
    return {Array::from_raw(out.data(), shape, DType::kInt64)};
  }
  return {int32_array(std::vector<u32>(bits.begin(), bits.end()), shape)};
}

// random_unit(bits) -> floats in [0, 1): JAX's uniform, the mantissa filled
// with the high bits and the exponent of 1.0, minus one. int32 bits give
// float32, int64 bits float64.
std::vector<Aval> random_unit_abstract(const Primitive& p, std::span<const Aval> in, const Params&, const AxisEnv&) {
  if (in.size() != 1 || (in[0].dtype != DType::kInt32 && in[0].dtype != DType::kInt64)) {
    type_error(p, "takes random bits (int32 or int64)");
  }
  return {Aval{in[0].shape, in[0].dtype == DType::kInt64 ? DType::kFloat64 : DType::kFloat32, false}};
}
std::vector<Array> random_unit_impl(const Primitive&, std::span<const Array> in, const Params&, SourceLoc) {
  Array bits = in[0].to_host();
  const std::size_t n = static_cast<std::size_t>(bits.size());
  if (bits.dtype() == DType::kInt64) {
    const auto* b = static_cast<const u64*>(bits.raw_data());
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      const u64 f = (b[i] >> 12) | 0x3FF0000000000000ull;
      double d;
      std::memcpy(&d, &f, sizeof d);
      out[i] = d - 1.0;
    }
    return {Array::from_raw(out.data(), bits.shape(), DType::kFloat64)};
  }
  const auto* b = static_cast<const u32*>(bits.raw_data());
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const u32 f = (b[i] >> 9) | 0x3F800000u;
    float x;
    std::memcpy(&x, &f, sizeof x);
    out[i] = x - 1.0f;
  }
  return {Array::from_raw(out.data(), bits.shape(), DType::kFloat32)};
}

// randint_bits(high, low, minval, maxval) -> JAX's randint from two draws of
// unsigned bits: minval + (high % span * (2^n % span) + low % span) % span,
// in n-bit unsigned arithmetic (n = 32 for int32, 64 for int64), span 1
// when maxval <= minval. minval and maxval already broadcast to the shape.
std::vector<Aval> randint_bits_abstract(const Primitive& p, std::span<const Aval> in, const Params&, const AxisEnv&) {
  if (in.size() != 4) type_error(p, "takes high bits, low bits, minval and maxval");
  const DType t = in[0].dtype;
  for (const Aval& a : in) {
    if (a.dtype != t || (t != DType::kInt32 && t != DType::kInt64)) type_error(p, "operands must share an int dtype");
    if (a.shape != in[0].shape) type_error(p, "operands must share a shape");
  }
  return {Aval{in[0].shape, t, false}};
}
std::vector<Array> randint_bits_impl(const Primitive&, std::span<const Array> in, const Params&, SourceLoc) {
  const std::int64_t n = in[0].size();
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  const bool wide = in[0].dtype() == DType::kInt64;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t lo_v = in[2].element_as_int64(i), hi_v = in[3].element_as_int64(i);
    if (wide) {
      u64 span = hi_v <= lo_v ? 1 : static_cast<u64>(hi_v) - static_cast<u64>(lo_v);
      u64 mult = (u64{1} << 32) % span;
      mult = (mult * mult) % span;  // wraps mod 2^64, as JAX's uint64 multiply does
      const u64 h = static_cast<u64>(in[0].element_as_int64(i)), l = static_cast<u64>(in[1].element_as_int64(i));
      const u64 offset = (h % span * mult + l % span) % span;  // wraps mod 2^64, as JAX's does
      out[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(static_cast<u64>(lo_v) + offset);
    } else {
      u32 span = hi_v <= lo_v ? 1u : static_cast<u32>(hi_v) - static_cast<u32>(lo_v);
      u32 mult = static_cast<u32>((u64{1} << 16) % span);
      mult = static_cast<u32>(mult * mult) % span;
      const u32 h = static_cast<u32>(in[0].element_as_int64(i)), l = static_cast<u32>(in[1].element_as_int64(i));
      const u32 offset = static_cast<u32>(h % span * mult + l % span) % span;
      out[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(static_cast<u32>(lo_v) + offset);
    }
  }
  return {Array::from_int64s(out, in[0].shape(), in[0].dtype())};
}

}  // namespace spmd::program::rules
