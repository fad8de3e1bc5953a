// CLI11 checks for integer options: CLI11 2.1 clamps a value beyond the
// type's range (--axis=99999999999999999999 became INT64_MAX) instead of
// refusing it. Each check runs on the text before conversion.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <limits>
#include <string>
#include <type_traits>

namespace sqdiff::tools {

// A validator accepting only decimal integers that fit in T ("-2", "17";
// not "1e3", "0x10" or out-of-range values).
template <typename T>
CLI::Validator fits_in() {
  static_assert(std::is_integral_v<T>);
  const std::string range = std::to_string(std::numeric_limits<T>::min()) + " to " +
                            std::to_string(std::numeric_limits<T>::max());
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        if (std::is_unsigned_v<T> && !text.empty() && text.front() == '-') {
          return "value " + text + " is out of range (" + range + ")";
        }
        T value{};
        const char* begin = text.data();
        if (!text.empty() && text.front() == '+') ++begin;
        const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
        if (error == std::errc::result_out_of_range) return "value " + text + " is out of range (" + range + ")";
        if (error != std::errc() || end != text.data() + text.size()) return "value " + text + " is not an integer";
        return "";
      },
      "INT in " + range);
}

}  // namespace sqdiff::tools
