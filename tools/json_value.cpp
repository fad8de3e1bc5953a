#include "json_value.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "path_text.hpp"

namespace sqdiff::tools {
namespace {

void append(std::string& out, const JsonValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          out += "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          out += std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          char text[64];
          const auto [end, error] = std::to_chars(text, text + sizeof text, v);
          (void)error;  // 64 characters always suffice for a double
          out.append(text, end);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out += json_string(v);
        } else if constexpr (std::is_same_v<T, JsonArray>) {
          out += '[';
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out += ", ";
            append(out, v[i]);
          }
          out += ']';
        } else {
          out += '{';
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (i) out += ", ";
            out += json_string(v[i].first);
            out += ": ";
            append(out, v[i].second);
          }
          out += '}';
        }
      },
      value.variant());
}

}  // namespace

JsonValue::JsonValue(double value) : value_(value) {
  if (!std::isfinite(value)) throw std::logic_error("JsonValue: a non-finite number has no JSON form");
}

std::string to_json_text(const JsonValue& value) {
  std::string out;
  append(out, value);
  return out;
}

}  // namespace sqdiff::tools
