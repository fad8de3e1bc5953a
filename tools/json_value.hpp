// A JSON document held as a tree, built once and then either printed
// (`sqdiff compare --json`) or handed to Python as dicts and lists
// (sqdiff.compare's report): the two can only agree, since both come from one
// tree. Objects keep their keys in insertion order.
//
// Numbers are finite by construction: a report's builder writes a NaN or an
// infinity as null and names it in the object's "nonfinite" key (see
// compare_report.hpp), so a printed document is always valid JSON.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sqdiff::tools {

class JsonValue;
using JsonArray = std::vector<JsonValue>;
using JsonObject = std::vector<std::pair<std::string, JsonValue>>;

class JsonValue {
 public:
  // Strings hold bytes, printed by json_string (path_text.hpp): escaped, and
  // U+FFFD for what is not well-formed UTF-8.
  using Variant = std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, std::string, JsonArray, JsonObject>;

  JsonValue() : value_(nullptr) {}
  JsonValue(std::nullptr_t) : value_(nullptr) {}
  JsonValue(bool value) : value_(value) {}
  JsonValue(int value) : value_(int64_t{value}) {}
  JsonValue(int64_t value) : value_(value) {}
  JsonValue(uint64_t value) : value_(value) {}
  // Throws std::logic_error for a NaN or an infinity (a builder's mistake).
  JsonValue(double value);
  JsonValue(const char* value) : value_(std::string(value)) {}
  JsonValue(std::string value) : value_(std::move(value)) {}
  JsonValue(JsonArray value) : value_(std::move(value)) {}
  JsonValue(JsonObject value) : value_(std::move(value)) {}

  const Variant& variant() const { return value_; }

 private:
  Variant value_;
};

// One line, no trailing newline: `{"a": 1, "b": [1, 2]}` (a space after each
// ':' and ','). Doubles in the shortest form that reads back as the same
// double ("0.1", "1e+300", "2").
std::string to_json_text(const JsonValue& value);

}  // namespace sqdiff::tools
