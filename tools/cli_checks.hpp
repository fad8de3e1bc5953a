// CLI11 checks for option values, run on the text before conversion, so that
// every bad value is a command-line mistake (status 2) with a message in plain
// numbers. CLI11 2.1 clamps an integer beyond its type's range
// (--axis=99999999999999999999 became INT64_MAX) instead of refusing it, and
// its NonNegativeNumber and PositiveNumber ranges print DBL_MAX in full
// (a 310-digit "0.000000 to 1797...").
#pragma once

#include <CLI/CLI.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

namespace sqdiff::tools {

// A validator accepting only decimal integers from min to max ("-2", "+17";
// not "1e3", "0x10" or values out of range).
template <typename T>
CLI::Validator integer_in(T min, T max) {
  static_assert(std::is_integral_v<T>);
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const std::string out_of_range = "value " + text + " is out of range (" + range + ")";
        if (std::is_unsigned_v<T> && !text.empty() && text.front() == '-') return out_of_range;
        T value{};
        const char* begin = text.data();
        if (!text.empty() && text.front() == '+') ++begin;
        const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
        if (error == std::errc::result_out_of_range) return out_of_range;
        if (error != std::errc() || end != text.data() + text.size()) return "value " + text + " is not an integer";
        if (value < min || value > max) return out_of_range;
        return "";
      },
      "INT in " + range);
}

// A validator of "NAME=FILE.npy" (--input of ir and tflite): a non-empty name
// and file around the first '='; `name_is` says what NAME names, for the message.
inline CLI::Validator name_equals_file(const std::string& name_is) {
  return CLI::Validator(
      [name_is](std::string& item) -> std::string {
        const std::size_t eq = item.find('=');
        if (eq != std::string::npos && eq != 0 && eq + 1 != item.size()) return "";
        return "value " + item + " is not NAME=FILE.npy (NAME is " + name_is + ")";
      },
      "NAME=FILE.npy");
}

// Any decimal integer that fits in T.
template <typename T>
CLI::Validator fits_in() {
  return integer_in<T>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
}

// A validator accepting numbers from min to max as C's strtod reads them
// ("0.5", "1e-3", "inf"; "1e999" is inf), as CLI11 then converts them; NaN is
// never accepted. `accepted` says what is, for the message: "value -1 is not
// `accepted`".
inline CLI::Validator number_in(double min, double max, const std::string& accepted) {
  return CLI::Validator(
      [min, max, accepted](std::string& text) -> std::string {
        const std::string refused = "value " + text + " is not " + accepted;
        if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return refused;
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size() || std::isnan(value) || value < min || value > max) return refused;
        return "";
      },
      "");
}

}  // namespace sqdiff::tools
