// The .npy header: its dict parsed and written, descrs and their dtypes, the
// strides of each order (npy_header.hpp).
#include "npy_header.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include "npy.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::tools::npy_header {

std::string errno_text(int error) { return std::strerror(error); }

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw sqdiff::Error(path + ": " + reason);
}

std::string shape_text(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

namespace {

// Parsed strictly enough to reject garbage and loosely enough for every writer
// (NumPy, its Python 2 "3L" longs, other libraries' double quotes).
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Header parse() {
    Header header;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"') {
          bad("'descr' is not a string (structured dtypes are not supported)");
        }
        header.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        header.shape = parse_tuple();
        have_shape = true;
      } else {
        bad("unexpected key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        bad("expected ',' or '}' at offset " + std::to_string(pos_));
      }
    }
    skip_space();
    if (pos_ != s_.size()) bad("trailing characters after the dict");
    if (!have_descr) bad("no 'descr' key");
    if (!have_order) bad("no 'fortran_order' key");
    if (!have_shape) bad("no 'shape' key");
    return header;
  }

 private:
  [[noreturn]] void bad(const std::string& reason) const { fail(path_, "malformed .npy header: " + reason); }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  void expect(char c) {
    if (peek() != c) bad(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
    ++pos_;
  }

  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string at offset " + std::to_string(pos_));
    ++pos_;
    const std::size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }

  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    bad("'fortran_order' is not True or False");
  }

  // NumPy requires a tuple: a list, and "(3)" (an int in parentheses: a
  // one-element tuple is written "(3,)"), are refused, as np.load refuses them.
  Shape parse_tuple() {
    if (peek() != '(') bad("'shape' is not a tuple");
    const char close = ')';
    ++pos_;
    Shape shape;
    bool comma_after_last = false;
    while (true) {
      skip_space();
      if (peek() == close) {
        if (shape.size() == 1 && !comma_after_last) bad("'shape' is an int in parentheses, not a tuple (write (N,))");
        ++pos_;
        return shape;
      }
      if (peek() < '0' || peek() > '9') bad("'shape' holds something other than non-negative integers");
      int64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, peek() - '0', &value)) {
          bad("a dimension in 'shape' does not fit in int64");
        }
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long
      shape.push_back(value);
      if (shape.size() > kMaxNpyRank) {
        bad("'shape' has more than " + std::to_string(kMaxNpyRank) + " dims, which NumPy cannot read");
      }
      skip_space();
      comma_after_last = peek() == ',';
      if (comma_after_last) {
        ++pos_;
      } else if (peek() != close) {
        bad("expected ',' or ')' in 'shape'");
      }
    }
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

}  // namespace

Header parse_header(std::string_view text, const std::string& path) { return DictParser(text, path).parse(); }

Shape order_strides(const Shape& shape, bool fortran) {
  Shape strides(shape.size());
  int64_t step = 1;
  if (fortran) {
    for (std::size_t i = 0; i < shape.size(); ++i) {
      strides[i] = step;
      step *= std::max<int64_t>(shape[i], 1);
    }
  } else {
    for (std::size_t i = shape.size(); i-- > 0;) {
      strides[i] = step;
      step *= std::max<int64_t>(shape[i], 1);
    }
  }
  return strides;
}

std::string describe_descr(std::string_view descr) {
  if (descr.empty()) return "an empty descr";
  const char kind = (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=') && descr.size() > 1
                        ? descr[1]
                        : descr[0];
  switch (kind) {
    case 'b':
    case '?':
      return "bool";
    case 'c':
      return "complex";
    case 'U':
    case 'S':
    case 'a':
      return "string";
    case 'O':
      return "object";
    case 'V':
      return "void/raw bytes";
    case 'M':
    case 'm':
      return "datetime";
    default:
      return "unsupported";
  }
}

std::string header_for(DType dtype, const Shape& shape, std::size_t* total_header_size) {
  std::string dict = "{'descr': '" + npy_descr(dtype) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1) dict += ',';
  dict += "), }";
  // Version 1.0 has a 2-byte header length, 2.0 a 4-byte one. Pad so that the
  // data starts at a multiple of 64 bytes, as NumPy does.
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const std::size_t prefix = v2 ? 12 : 10;
  const std::size_t unpadded = prefix + dict.size() + 1;
  const std::size_t total = (unpadded + 63) / 64 * 64;
  dict.append(total - unpadded, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const std::size_t len = dict.size();
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += dict;
  *total_header_size = out.size();
  return out;
}

bool is_two_byte_void(std::string_view descr) {
  if (!descr.empty() && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=')) descr.remove_prefix(1);
  return descr == "V2";
}

}  // namespace sqdiff::tools::npy_header

namespace sqdiff::tools {

std::optional<DType> dtype_from_npy_descr(std::string_view descr) {
  if (descr.size() < 2) return std::nullopt;
  char order = '=';
  if (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=') {
    order = descr[0];
    descr.remove_prefix(1);
  }
  struct Entry {
    std::string_view code;
    DType dtype;
  };
  static constexpr Entry kTable[] = {
      {"f2", DType::f16}, {"f4", DType::f32}, {"f8", DType::f64}, {"i1", DType::i8},
      {"i2", DType::i16}, {"i4", DType::i32}, {"i8", DType::i64}, {"u1", DType::u8},
      {"u2", DType::u16}, {"u4", DType::u32}, {"u8", DType::u64},
  };
  for (const Entry& e : kTable) {
    if (descr != e.code) continue;
    const bool single_byte = e.code[1] == '1';
    // '=' is the native order, little-endian on every host this builds for.
    if (order == '>' && !single_byte) return std::nullopt;
    if (order == '|' && !single_byte) return std::nullopt;
    return e.dtype;
  }
  return std::nullopt;
}

std::string npy_descr(DType dtype) {
  switch (dtype) {
    case DType::f16: return "<f2";
    case DType::bf16: return "<u2";
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::i8: return "|i1";
    case DType::i16: return "<i2";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::u8: return "|u1";
    case DType::u16: return "<u2";
    case DType::u32: return "<u4";
    case DType::u64: return "<u8";
  }
  throw sqdiff::Error("npy_descr: invalid dtype " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace sqdiff::tools
