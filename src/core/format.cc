#include "spmd/core/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/element_access.h"
#include "spmd/error.h"

namespace spmd {

namespace {

// numpy's print options (defaults).
constexpr int kPrecision = 8;
constexpr std::int64_t kThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;
constexpr int kLineWidth = 75;

// ---- decimal digits -------------------------------------------------------

// value = digits[0].digits[1:] x 10^exp ("0" for zero).
struct Decimal {
  bool neg = false;
  std::string digits;
  int exp = 0;
};

Decimal parse_scientific(std::string_view s, bool strip_zeros) {
  Decimal d;
  std::size_t i = 0;
  if (!s.empty() && s[0] == '-') {
    d.neg = true;
    i = 1;
  }
  std::size_t e = s.find('e');
  for (std::size_t j = i; j < e; ++j) {
    if (s[j] >= '0' && s[j] <= '9') d.digits += s[j];
  }
  d.exp = std::atoi(std::string(s.substr(e + 1)).c_str());
  if (strip_zeros) {
    while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  }
  return d;
}

template <class F>
std::string chars(F v, std::chars_format fmt, std::optional<int> precision = std::nullopt) {
  char buf[512];
  auto r = precision ? std::to_chars(buf, buf + sizeof(buf), v, fmt, *precision) : std::to_chars(buf, buf + sizeof(buf), v, fmt);
  return std::string(buf, r.ptr);
}

// Whether decimal value d (> 0) rounds to the float16 with magnitude bits `bits`.
bool half_round_trips(double d, double h, std::uint16_t bits) {
  double prev = half_to_float(static_cast<std::uint16_t>(bits - 1));
  double next = bits == 0x7bff ? 65536.0 : half_to_float(static_cast<std::uint16_t>(bits + 1));
  double lo = (prev + h) / 2, hi = (h + next) / 2;
  bool even = (bits & 1u) == 0;
  return (d > lo && d < hi) || (even && (d == lo || d == hi));
}

// Shortest digits that read back as the same float16 (what numpy's Dragon4
// prints for np.float16).
Decimal shortest_half(double v) {
  Decimal out;
  out.neg = std::signbit(v);
  double a = std::fabs(v);
  if (a == 0) {
    out.digits = "0";
    return out;
  }
  std::uint16_t bits = float_to_half(static_cast<float>(a));
  for (int p = 1; p <= 17; ++p) {
    Decimal c = parse_scientific(chars(a, std::chars_format::scientific, p - 1), false);
    long long m = std::atoll(c.digits.c_str());
    int scale = c.exp - (p - 1);
    std::optional<long long> best;
    double best_dist = 0;
    for (long long cand : {m, m - 1, m + 1}) {
      if (cand <= 0) continue;
      std::string s = std::to_string(cand) + "e" + std::to_string(scale);
      double d = std::strtod(s.c_str(), nullptr);
      if (!half_round_trips(d, a, bits)) continue;
      double dist = std::fabs(d - a);
      if (!best || dist < best_dist) {
        best = cand;
        best_dist = dist;
      }
    }
    if (best) {
      std::string digits = std::to_string(*best);
      out.exp = scale + static_cast<int>(digits.size()) - 1;
      while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
      out.digits = digits;
      return out;
    }
  }
  return parse_scientific(chars(v, std::chars_format::scientific), true);
}

// Shortest round-trip digits of v in its own dtype.
Decimal shortest(double v, DType dt) {
  if (dt == DType::kFloat16) return shortest_half(v);
  if (dt == DType::kFloat64) return parse_scientific(chars(v, std::chars_format::scientific), true);
  return parse_scientific(chars(static_cast<float>(v), std::chars_format::scientific), true);
}

// Integer part (with sign) and fraction digits of d written positionally.
std::pair<std::string, std::string> positional(const Decimal& d) {
  std::string ip, fp;
  const int nd = static_cast<int>(d.digits.size());
  if (d.exp >= 0) {
    if (nd <= d.exp + 1) {
      ip = d.digits + std::string(static_cast<std::size_t>(d.exp + 1 - nd), '0');
    } else {
      ip = d.digits.substr(0, static_cast<std::size_t>(d.exp + 1));
      fp = d.digits.substr(static_cast<std::size_t>(d.exp + 1));
    }
  } else {
    ip = "0";
    fp = std::string(static_cast<std::size_t>(-d.exp - 1), '0') + d.digits;
  }
  if (d.neg) ip = "-" + ip;
  return {ip, fp};
}

// dragon4_positional(unique=True, precision=8, trim='.'): shortest digits,
// rounded to at most `precision` fraction digits.
std::pair<std::string, std::string> positional_maxprec(double v, DType dt) {
  auto parts = positional(shortest(v, dt));
  if (static_cast<int>(parts.second.size()) <= kPrecision) return parts;
  std::string s = chars(v, std::chars_format::fixed, kPrecision);
  std::size_t dot = s.find('.');
  std::string fp = s.substr(dot + 1);
  while (!fp.empty() && fp.back() == '0') fp.pop_back();
  return {s.substr(0, dot), fp};
}

std::string exponent_string(int exp, std::size_t min_digits) {
  std::string digits = std::to_string(std::abs(exp));
  if (digits.size() < min_digits) digits = std::string(min_digits - digits.size(), '0') + digits;
  return (exp < 0 ? "-" : "+") + digits;
}

struct SciParts {
  std::string int_part;  // with sign
  std::string frac;
  int exp = 0;
};

// dragon4_scientific(unique=True, precision=8, trim='.').
SciParts scientific_maxprec(double v, DType dt) {
  Decimal d = shortest(v, dt);
  if (static_cast<int>(d.digits.size()) - 1 > kPrecision) {
    d = parse_scientific(chars(v, std::chars_format::scientific, kPrecision), true);
  }
  return {(d.neg ? "-" : "") + d.digits.substr(0, 1), d.digits.substr(1), d.exp};
}

// ostream << float, as ml_dtypes prints bfloat16 scalars (and so arrays).
std::string bfloat16_string(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// str() of a numpy float scalar.
std::string float_scalar_string(double v, DType dt) {
  if (dt == DType::kBFloat16) return bfloat16_string(v);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  double a = std::fabs(v);
  Decimal d = shortest(v, dt);
  if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    auto [ip, fp] = positional(d);
    return ip + "." + (fp.empty() ? "0" : fp);
  }
  std::string mant = (d.neg ? "-" : "") + d.digits.substr(0, 1);
  if (d.digits.size() > 1) mant += "." + d.digits.substr(1);
  return mant + "e" + exponent_string(d.exp, 2);
}

// ---- per-array element formats (numpy arrayprint) ----------------------

class ElementFormat {
 public:
  ElementFormat(const Array& x, const std::vector<std::int64_t>& shown) : x_(x), dtype_(x.dtype()) {
    if (dtype_ == DType::kBool) {
      true_str_ = x.ndim() == 0 ? "True" : " True";
    } else if (is_integer(dtype_)) {
      fill_int(shown);
    } else if (dtype_ != DType::kBFloat16) {
      fill_float(shown);
    }
  }

  std::string operator()(std::int64_t flat) const {
    if (dtype_ == DType::kBool) return x_.element_as_bool(flat) ? true_str_ : "False";
    if (is_integer(dtype_)) {
      std::string s = std::to_string(x_.element_as_int64(flat));
      return pad_to(s, int_width_);
    }
    double v = x_.element_as_double(flat);
    if (dtype_ == DType::kBFloat16) return bfloat16_string(v);
    return format_float(v);
  }

 private:
  static std::string pad_to(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
  }

  void fill_int(const std::vector<std::int64_t>& shown) {
    for (auto i : shown) {
      int_width_ = std::max(int_width_, std::to_string(x_.element_as_int64(i)).size());
    }
  }

  // Rounds a ratio to the array's precision before comparing (numpy computes
  // max/min in the array dtype).
  double in_dtype(double v) const {
    switch (dtype_) {
      case DType::kFloat64: return v;
      case DType::kFloat16: return static_cast<double>(half_to_float(float_to_half(static_cast<float>(v))));
      default: return static_cast<double>(static_cast<float>(v));
    }
  }

  void fill_float(const std::vector<std::int64_t>& shown) {
    std::vector<double> finite;
    bool has_nonfinite = false, neginf = false;
    for (auto i : shown) {
      double v = x_.element_as_double(i);
      if (std::isfinite(v)) {
        finite.push_back(v);
      } else {
        has_nonfinite = true;
        if (std::isinf(v) && v < 0) neginf = true;
      }
    }
    double max_val = 0, min_val = 0;
    bool any_nonzero = false;
    for (double v : finite) {
      if (v == 0) continue;
      double a = std::fabs(v);
      if (!any_nonzero) {
        max_val = min_val = a;
        any_nonzero = true;
      } else {
        max_val = std::max(max_val, a);
        min_val = std::min(min_val, a);
      }
    }
    if (any_nonzero) {
      exp_format_ = max_val >= 1e8 || min_val < 0.0001 || in_dtype(max_val / min_val) > 1000.0;
    }
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
    } else if (exp_format_) {
      std::size_t exp_len = 0;
      for (double v : finite) {
        SciParts p = scientific_maxprec(v, dtype_);
        exp_len = std::max(exp_len, exponent_string(p.exp, 2).size());
        precision_ = std::max(precision_, static_cast<int>(p.frac.size()));
        pad_left_ = std::max(pad_left_, static_cast<int>(p.int_part.size()));
      }
      exp_size_ = static_cast<int>(exp_len) - 1;
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      for (double v : finite) {
        auto [ip, fp] = positional_maxprec(v, dtype_);
        pad_left_ = std::max(pad_left_, static_cast<int>(ip.size()));
        pad_right_ = std::max(pad_right_, static_cast<int>(fp.size()));
      }
    }
    if (has_nonfinite) {
      int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (neginf ? 1 : 0) - offset});
    }
  }

  std::string format_float(double v) const {
    if (!std::isfinite(v)) {
      std::string s = std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
      return pad_to(s, static_cast<std::size_t>(pad_left_ + pad_right_ + 1));
    }
    if (exp_format_) {
      SciParts p = scientific_maxprec(v, dtype_);
      std::string frac = p.frac + std::string(static_cast<std::size_t>(precision_) - p.frac.size(), '0');
      return pad_to(p.int_part, static_cast<std::size_t>(pad_left_)) + "." + frac + "e" +
             exponent_string(p.exp, static_cast<std::size_t>(exp_size_));
    }
    auto [ip, fp] = positional_maxprec(v, dtype_);
    return pad_to(ip, static_cast<std::size_t>(pad_left_)) + "." + fp +
           std::string(static_cast<std::size_t>(pad_right_) - fp.size(), ' ');
  }

  const Array& x_;
  DType dtype_;
  std::string true_str_;
  std::size_t int_width_ = 0;
  bool exp_format_ = false;
  int pad_left_ = 0, pad_right_ = 0, precision_ = 0, exp_size_ = -1;
};

// ---- layout (numpy's _formatArray) ---------------------------------------

std::string rstrip(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

class Printer {
 public:
  Printer(const Array& x, std::string separator, int line_width, std::string first_prefix)
      : x_(x),
        shape_(x.shape()),
        strides_(row_major_strides(x.shape())),
        summarize_(x.size() > kThreshold),
        sep_(std::move(separator)),
        line_width_(line_width),
        prefix_(std::move(first_prefix)),
        format_(x, shown_elements()) {}

  std::string run() { return recurse(0, 0, prefix_, line_width_); }

 private:
  bool summarized_axis(std::size_t axis) const { return summarize_ && 2 * kEdgeItems < shape_[axis]; }

  std::vector<std::int64_t> shown_elements() const {
    std::vector<std::int64_t> out;
    collect(0, 0, out);
    return out;
  }

  void collect(std::size_t axis, std::int64_t offset, std::vector<std::int64_t>& out) const {
    if (axis == shape_.size()) {
      out.push_back(offset);
      return;
    }
    const std::int64_t n = shape_[axis];
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarized_axis(axis) && i == kEdgeItems) i = n - kEdgeItems;
      collect(axis + 1, offset + i * strides_[axis], out);
    }
  }

  void extend_line(std::string& s, std::string& line, const std::string& word, int width,
                   const std::string& next_prefix) const {
    bool wrap = static_cast<int>(line.size() + word.size()) > width;
    if (line.size() <= next_prefix.size()) wrap = false;
    if (wrap) {
      s += rstrip(line) + "\n";
      line = next_prefix;
    }
    line += word;
  }

  std::string recurse(std::size_t axis, std::int64_t offset, const std::string& hanging, int width) const {
    if (axis == shape_.size()) return format_(offset);
    const std::string next_hanging = hanging + " ";
    const int next_width = width - 1;
    const std::int64_t n = shape_[axis];
    const bool summary = summarized_axis(axis);
    const std::int64_t leading = summary ? kEdgeItems : 0;
    const std::int64_t trailing = summary ? kEdgeItems : n;
    const std::int64_t stride = strides_[axis];
    const std::string sep_stripped = rstrip(sep_);
    std::string s;
    if (axis + 1 == shape_.size()) {
      const int elem_width = width - std::max(static_cast<int>(sep_stripped.size()), 1);
      std::string line = hanging;
      for (std::int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, recurse(axis + 1, offset + i * stride, next_hanging, next_width), elem_width, hanging);
        line += sep_;
      }
      if (summary) {
        extend_line(s, line, "...", elem_width, hanging);
        line += sep_;
      }
      for (std::int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, recurse(axis + 1, offset + (n - i) * stride, next_hanging, next_width), elem_width,
                    hanging);
        line += sep_;
      }
      extend_line(s, line, recurse(axis + 1, offset + (n - 1) * stride, next_hanging, next_width), elem_width,
                  hanging);
      s += line;
    } else {
      const std::string line_sep = sep_stripped + std::string(shape_.size() - axis - 1, '\n');
      for (std::int64_t i = 0; i < leading; ++i) {
        s += hanging + recurse(axis + 1, offset + i * stride, next_hanging, next_width) + line_sep;
      }
      if (summary) s += hanging + "..." + line_sep;
      for (std::int64_t i = trailing; i > 1; --i) {
        s += hanging + recurse(axis + 1, offset + (n - i) * stride, next_hanging, next_width) + line_sep;
      }
      s += hanging + recurse(axis + 1, offset + (n - 1) * stride, next_hanging, next_width);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }

  const Array& x_;
  Shape shape_;
  std::vector<std::int64_t> strides_;
  bool summarize_;
  std::string sep_;
  int line_width_;
  std::string prefix_;
  ElementFormat format_;
};

}  // namespace

std::string format_scalar(const Array& x, std::int64_t flat) {
  check_placement(x, "format");
  if (flat < 0 || flat >= x.size()) {
    throw_invalid_argument("IndexError",
                           "format: index " + std::to_string(flat) + " is out of bounds for an array of size " +
                               std::to_string(x.size()),
                           "pass a row-major element index in 0..size-1");
  }
  DType dt = x.dtype();
  if (dt == DType::kBool) return x.element_as_bool(flat) ? "True" : "False";
  if (is_integer(dt)) return std::to_string(x.element_as_int64(flat));
  return float_scalar_string(x.element_as_double(flat), dt);
}

std::string to_string(const Array& x_in) {
  check_placement(x_in, "str");
  const Array x = x_in.to_host();
  if (x.ndim() == 0) return format_scalar(x, 0);
  if (x.size() == 0) return "[]";
  return Printer(x, " ", kLineWidth, " ").run();
}

std::string repr(const Array& x_in) {
  check_placement(x_in, "repr");
  const Array x = x_in.to_host();
  const std::string prefix = "Array(";
  const std::string dtype_str =
      "dtype=" + std::string(dtype_name(x.dtype())) + (x.weak_type() ? ", weak_type=True)" : ")");
  std::string s;
  if (x.size() == 0) {
    s = "[], shape=" + shape_to_string(x.shape());
  } else if (x.ndim() == 0) {
    s = ElementFormat(x, {0})(0);
  } else {
    // array2string(prefix="Array(", suffix=",", separator=", "): the suffix
    // takes one column off the line width.
    s = Printer(x, ", ", kLineWidth - 1, std::string(prefix.size() + 1, ' ')).run();
  }
  const std::size_t nl = s.rfind('\n');
  const std::size_t last_line_len = nl == std::string::npos ? s.size() + 2 : s.size() - nl + 1;
  const std::string sep = last_line_len + dtype_str.size() + 1 > static_cast<std::size_t>(kLineWidth)
                              ? std::string(prefix.size(), ' ')
                              : " ";
  return prefix + s + "," + sep + dtype_str;
}

}  // namespace spmd
