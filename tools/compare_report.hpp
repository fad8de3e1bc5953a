// The two forms of `sqdiff compare`'s report: text for people and one JSON
// object for scripts (keys in docs/cli.md). Numbers are printed in the
// shortest form that reads back to the same double; in JSON, NaN and the
// infinities, which JSON lacks, are the strings "nan", "inf" and "-inf".
// Paths are escaped as path_text.hpp says: each report line stays one line,
// and the JSON is valid UTF-8 whatever bytes a file name holds.
#pragma once

#include <string>

#include "compare_command.hpp"

namespace sqdiff::tools {

std::string compare_text(const CompareRequest& request, const CompareResult& result);
std::string compare_json(const CompareRequest& request, const CompareResult& result);

// The shortest decimal that reads back as `value` ("0.1", "1e+300", "nan", "inf", "-inf").
std::string shortest_double(double value);

}  // namespace sqdiff::tools
