// The reports of `sqdiff compare` and sqdiff.compare() on the library's
// comparisons (sqdiff/compare.hpp): one JSON tree per comparison (printed by
// --json, handed to Python as dicts), and the text report for people. The keys and types are documented in docs/cli.md
// ("JSON schema"); every key is always present and always of one JSON type,
// or null where documented. A float that is NaN or infinite is written null,
// and the object holding it names it in its "nonfinite" key:
// {"mse": null, ..., "nonfinite": {"mse": "nan"}}.
// Paths and tensor names are bytes: JSON strings are valid UTF-8 (U+FFFD for
// ill-formed parts, with all the bytes in hex under "<key>_bytes"), and each
// text line stays one line (path_text.hpp).
#pragma once

#include <string>
#include <vector>

#include "json_value.hpp"
#include "sqdiff/compare.hpp"

namespace sqdiff::tools {

// The fields of one comparison, without the inputs' paths (what Python's
// report holds).
JsonObject comparison_fields(const sqdiff::CompareStats& comparison);
// {"a": ..., "b": ..., then comparison_fields}: the program's report of two files.
JsonValue pair_report(const std::string& a_path, const std::string& b_path, const sqdiff::CompareStats& comparison);

struct NamedComparison {
  std::string name;
  sqdiff::CompareStats comparison;
};

// The whole-set verdict: every tensor compared by name passed, and no name
// is held by one side only (a missing or an extra one fails the gate).
bool set_passed(const std::vector<NamedComparison>& tensors, std::size_t missing, std::size_t extra);

// Two sets of tensors compared by name: the per-tensor reports (in the order
// given), the names only in a ("missing": not in b) and only in b ("extra"),
// and one verdict. `a_path`/`b_path` are omitted when empty (Python).
JsonValue set_report(const std::string& a_path, const std::string& b_path, const std::vector<NamedComparison>& tensors,
                     const std::vector<std::string>& missing, const std::vector<std::string>& extra);

std::string compare_text(const std::string& a_path, const std::string& b_path, const sqdiff::CompareStats& comparison);
std::string set_text(const std::string& a_path, const std::string& b_path, const std::vector<NamedComparison>& tensors,
                     const std::vector<std::string>& missing, const std::vector<std::string>& extra);

// The shortest decimal that reads back as `value` ("0.1", "1e+300", "nan", "inf", "-inf").
std::string shortest_double(double value);

}  // namespace sqdiff::tools
