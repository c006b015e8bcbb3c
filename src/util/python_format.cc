// Python's format-spec mini-language and float repr, as CPython implements
// them (format(x, ".3f"), f"{x:>8}"), for both front ends' printing.

#include "util/python_format.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "spmd/error.h"
#include "util/utf8.h"

namespace spmd {

namespace {

[[noreturn]] void value_error(const std::string& message) { throw_invalid_argument("ValueError", message); }

[[noreturn]] void too_wide(const char* what, std::string_view spec) {
  throw_invalid_argument("ValueError",
                         "format spec '" + std::string(spec) + "': the " + what + " is larger than " +
                             std::to_string(kMaxFormatWidth),
                         "a printed field this wide is a typo; spmdsim bounds widths and precisions so that one "
                         "print cannot fill the memory or the disk");
}

struct Spec {
  std::string fill = " ";
  char align = 0;
  char sign = '-';
  bool alt = false;
  bool zero = false;
  int width = -1;
  char grouping = 0;
  int precision = -1;
  char type = 0;
};

bool is_align(char c) { return c == '<' || c == '>' || c == '^' || c == '='; }

Spec parse_spec(std::string_view s) {
  Spec sp;
  std::size_t i = 0;
  // fill may be a multi-byte character
  std::size_t first_len = 1;
  if (!s.empty() && static_cast<unsigned char>(s[0]) >= 0x80) {
    while (first_len < s.size() && (static_cast<unsigned char>(s[first_len]) & 0xC0) == 0x80) ++first_len;
  }
  if (s.size() > first_len && is_align(s[first_len])) {
    sp.fill = std::string(s.substr(0, first_len));
    sp.align = s[first_len];
    i = first_len + 1;
  } else if (!s.empty() && is_align(s[0])) {
    sp.align = s[0];
    i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) sp.sign = s[i++];
  if (i < s.size() && s[i] == 'z') ++i;
  if (i < s.size() && s[i] == '#') {
    sp.alt = true;
    ++i;
  }
  if (i < s.size() && s[i] == '0') {
    sp.zero = true;
    ++i;
  }
  int width = 0;
  bool has_width = false;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    width = width * 10 + (s[i++] - '0');
    if (width > kMaxFormatWidth) too_wide("width", s);
    has_width = true;
  }
  if (has_width) sp.width = width;
  if (i < s.size() && (s[i] == ',' || s[i] == '_')) sp.grouping = s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    int p = 0;
    bool any = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      p = p * 10 + (s[i++] - '0');
      if (p > kMaxFormatWidth) too_wide("precision", s);
      any = true;
    }
    if (!any) value_error("Format specifier missing precision");
    sp.precision = p;
  }
  if (i < s.size()) sp.type = s[i++];
  if (i != s.size()) value_error("Invalid format specifier '" + std::string(s) + "'");
  if (sp.zero && sp.align == 0) {
    sp.fill = "0";
    sp.align = '=';
  }
  return sp;
}

std::string group_digits(const std::string& digits, char sep, int every) {
  if (!sep) return digits;
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % every == 0) out += sep;
    out += digits[static_cast<std::size_t>(i)];
  }
  return out;
}

std::string pad(const std::string& sign, const std::string& body, const Spec& sp, char default_align) {
  std::size_t len = utf8_length(sign) + utf8_length(body);
  char align = sp.align ? sp.align : default_align;
  if (sp.width < 0 || len >= static_cast<std::size_t>(sp.width)) return sign + body;
  std::size_t n = static_cast<std::size_t>(sp.width) - len;
  auto fill = [&](std::size_t k) {
    std::string f;
    for (std::size_t i = 0; i < k; ++i) f += sp.fill;
    return f;
  };
  switch (align) {
    case '<': return sign + body + fill(n);
    case '^': return fill(n / 2) + sign + body + fill(n - n / 2);
    case '=': return sign + fill(n) + body;
    default: return fill(n) + sign + body;
  }
}

std::string sign_of(bool negative, const Spec& sp) {
  if (negative) return "-";
  if (sp.sign == '+') return "+";
  if (sp.sign == ' ') return " ";
  return "";
}

std::string format_int(std::int64_t v, Spec sp) {
  bool neg = v < 0;
  std::uint64_t mag = neg ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  std::string digits;
  std::string prefix;
  int base = 10;
  switch (sp.type) {
    case 0: case 'd': case 'n': base = 10; break;
    case 'b': base = 2; prefix = "0b"; break;
    case 'o': base = 8; prefix = "0o"; break;
    case 'x': base = 16; prefix = "0x"; break;
    case 'X': base = 16; prefix = "0X"; break;
    case 'c': {
      if (v < 0 || v > 0x10FFFF) value_error("%c arg not in range(0x110000)");
      std::string s;
      append_utf8(s, static_cast<std::uint32_t>(v));
      return pad("", s, sp, '<');
    }
    default: value_error(std::string("Unknown format code '") + sp.type + "' for object of type 'int'");
  }
  if (sp.precision >= 0) value_error("Precision not allowed in integer format specifier");
  char buf[80];
  auto r = std::to_chars(buf, buf + sizeof buf, mag, base);
  digits.assign(buf, r.ptr);
  if (sp.type == 'X') {
    for (auto& c : digits) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  digits = group_digits(digits, sp.grouping, base == 10 ? 3 : 4);
  std::string sign = sign_of(neg, sp) + (sp.alt ? prefix : "");
  return pad(sign, digits, sp, '>');
}

std::string format_float(double v, Spec sp) {
  bool neg = std::signbit(v) && !std::isnan(v);
  double mag = std::fabs(v);
  char type = sp.type;
  std::string body;
  bool percent = false;
  if (type == '%') {
    percent = true;
    mag *= 100;
    type = 'f';
  }
  if (std::isnan(mag) || std::isinf(mag)) {
    body = std::isnan(mag) ? "nan" : "inf";
    if (type == 'E' || type == 'F' || type == 'G') body = std::isnan(mag) ? "NAN" : "INF";
  } else if (type == 0 && sp.precision < 0) {
    body = float_repr(mag);
  } else {
    int prec = sp.precision < 0 ? 6 : sp.precision;
    char conv = type;
    if (type == 0 || type == 'n') conv = 'g';
    if (conv != 'e' && conv != 'E' && conv != 'f' && conv != 'F' && conv != 'g' && conv != 'G') {
      value_error(std::string("Unknown format code '") + type + "' for object of type 'float'");
    }
    if (type == 0 && prec == 0) prec = 1;
    char fmt[16];
    std::snprintf(fmt, sizeof fmt, "%%%s.%d%c", sp.alt ? "#" : "", prec, conv);
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, mag);
    body = buf;
    if (type == 0 && body.find_first_of(".eE") == std::string::npos) body += ".0";
  }
  if (sp.grouping) {
    std::size_t end = body.find_first_not_of("0123456789");
    if (end == std::string::npos) end = body.size();
    body = group_digits(body.substr(0, end), sp.grouping, 3) + body.substr(end);
  }
  if (percent) body += "%";
  return pad(sign_of(neg, sp), body, sp, '>');
}

std::string format_str(const std::string& s, Spec sp) {
  if (sp.type != 0 && sp.type != 's') {
    value_error(std::string("Unknown format code '") + sp.type + "' for object of type 'str'");
  }
  if (sp.sign != '-') value_error("Sign not allowed in string format specifier");
  if (sp.align == '=') value_error("'=' alignment not allowed in string format specifier");
  std::string body = s;
  if (sp.precision >= 0) {
    std::string cut;
    std::size_t count = 0;
    for (std::size_t i = 0; i < s.size() && count < static_cast<std::size_t>(sp.precision); ++count) {
      std::size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
      cut += s.substr(i, j - i);
      i = j;
    }
    body = cut;
  }
  return pad("", body, sp, '<');
}

}  // namespace

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string s(buf, res.ptr);
  std::string sign;
  if (s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  std::size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  int exp = std::stoi(s.substr(e + 1));
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp >= 0) {
      std::size_t ip = static_cast<std::size_t>(exp) + 1;
      if (digits.size() <= ip) {
        out = digits + std::string(ip - digits.size(), '0') + ".0";
      } else {
        out = digits.substr(0, ip) + "." + digits.substr(ip);
      }
    } else {
      out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return sign + out + ebuf;
}


std::string format_int_spec(std::int64_t v, std::string_view spec) {
  Spec sp = parse_spec(spec);
  if (sp.type == 'e' || sp.type == 'E' || sp.type == 'f' || sp.type == 'F' || sp.type == 'g' || sp.type == 'G' ||
      sp.type == '%') {
    return format_float(static_cast<double>(v), sp);
  }
  return format_int(v, sp);
}

std::string format_float_spec(double v, std::string_view spec) { return format_float(v, parse_spec(spec)); }

std::string format_str_spec(const std::string& s, std::string_view spec) { return format_str(s, parse_spec(spec)); }

char format_spec_type(std::string_view spec) { return parse_spec(spec).type; }

}  // namespace spmd
