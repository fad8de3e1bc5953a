// Which SIMD instruction set the kernels run with.
#pragma once

#include <string>
#include <vector>

namespace sqdiff {

// Name of the instruction set chosen at run time for this CPU, e.g. "AVX3".
std::string active_simd_target();

// Names of every instruction set compiled into the library, best first.
std::vector<std::string> compiled_simd_targets();

}  // namespace sqdiff
