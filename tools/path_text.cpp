#include "path_text.hpp"

#include <cstdint>

namespace sqdiff::tools {
namespace {

struct Utf8Sequence {
  std::size_t length = 0;  // 0: the bytes at this position start no well-formed sequence
  uint32_t code_point = 0;
  // When length is 0: how many bytes one U+FFFD stands for, the longest start
  // of a well-formed sequence there, at least 1 (Unicode's "maximal subpart"
  // practice, as Python's decode("utf-8", "replace") and browsers count).
  std::size_t ill_formed = 0;
};

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// The well-formed sequence at `at`, per RFC 3629's table: the second byte's
// range depends on the first (E0: A0-BF against overlong forms, ED: 80-9F
// against surrogates, F0: 90-BF, F4: 80-8F against code points above U+10FFFF).
Utf8Sequence sequence_at(std::string_view bytes, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(bytes[at + k]); };
  const unsigned char first = byte(0);
  if (first < 0x80) return {1, first, 0};
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (first >= 0xC2 && first <= 0xDF) {
    length = 2;
  } else if (first >= 0xE0 && first <= 0xEF) {
    length = 3;
    if (first == 0xE0) low = 0xA0;
    if (first == 0xED) high = 0x9F;
  } else if (first >= 0xF0 && first <= 0xF4) {
    length = 4;
    if (first == 0xF0) low = 0x90;
    if (first == 0xF4) high = 0x8F;
  } else {
    return {0, 0, 1};  // 80-C1 and F5-FF never start a sequence
  }
  uint32_t code_point = first & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    const bool fits = at + k < bytes.size() &&
                      (k == 1 ? byte(1) >= low && byte(1) <= high : is_continuation(byte(k)));
    if (!fits) return {0, 0, k};
    code_point = (code_point << 6) | (byte(k) & 0x3F);
  }
  return {length, code_point, 0};
}

constexpr char kHexDigits[] = "0123456789abcdef";

void append_hex_byte(std::string& out, unsigned char byte) {
  out += kHexDigits[byte >> 4];
  out += kHexDigits[byte & 0xF];
}

// \b, \t, \n, \f, \r for those control characters, else nullptr.
const char* short_escape(unsigned char c) {
  switch (c) {
    case '\b': return "\\b";
    case '\t': return "\\t";
    case '\n': return "\\n";
    case '\f': return "\\f";
    case '\r': return "\\r";
    default: return nullptr;
  }
}

void append_u_escape(std::string& out, uint32_t code_point) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHexDigits[(code_point >> shift) & 0xF];
}

}  // namespace

bool is_utf8(std::string_view bytes) {
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t length = sequence_at(bytes, at).length;
    if (length == 0) return false;
    at += length;
  }
  return true;
}

std::string json_string(std::string_view bytes) {
  std::string out = "\"";
  for (std::size_t at = 0; at < bytes.size();) {
    const Utf8Sequence sequence = sequence_at(bytes, at);
    if (sequence.length == 0) {
      out += "\\ufffd";
      at += sequence.ill_formed;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(bytes[at]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      const char* escape = short_escape(c);
      if (escape) {
        out += escape;
      } else {
        append_u_escape(out, c);
      }
    } else {
      out.append(bytes.substr(at, sequence.length));
    }
    at += sequence.length;
  }
  return out + "\"";
}

std::string hex_bytes(std::string_view bytes) {
  std::string out;
  out.reserve(2 * bytes.size());
  for (const char c : bytes) append_hex_byte(out, static_cast<unsigned char>(c));
  return out;
}

std::string one_line_text(std::string_view bytes) {
  std::string out;
  for (std::size_t at = 0; at < bytes.size();) {
    const Utf8Sequence sequence = sequence_at(bytes, at);
    const unsigned char c = static_cast<unsigned char>(bytes[at]);
    const uint32_t code_point = sequence.code_point;
    if (sequence.length == 0 || (sequence.length == 1 && (c < 0x20 || c == 0x7F))) {
      if (c == '\n' || c == '\t' || c == '\r') {
        out += short_escape(c);
      } else {
        out += "\\x";
        append_hex_byte(out, c);
      }
      ++at;  // byte by byte: \xHH keeps every byte of an ill-formed part
      continue;
    }
    if (c == '\\') {
      out += "\\\\";
    } else if ((code_point >= 0x80 && code_point <= 0x9F) || code_point == 0x2028 || code_point == 0x2029) {
      append_u_escape(out, code_point);
    } else {
      out.append(bytes.substr(at, sequence.length));
    }
    at += sequence.length;
  }
  return out;
}

void write_line(std::ostream& out, std::string_view line) { out << one_line_text(line) << '\n'; }

std::string error_line(std::string_view message) { return "sqdiff: error: " + one_line_text(message) + "\n"; }

}  // namespace sqdiff::tools
