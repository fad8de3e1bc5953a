#include "sqdiff/simd_target.hpp"

#include <hwy/targets.h>

#include "kernels/kernel_table.hpp"

namespace sqdiff {

std::string active_simd_target() { return hwy::TargetName(detail::kernel_table().target); }

std::vector<std::string> compiled_simd_targets() {
  std::vector<std::string> names;
  // Lower bits are better targets in Highway's numbering.
  for (int64_t targets = detail::compiled_targets(); targets != 0; targets &= targets - 1) {
    names.emplace_back(hwy::TargetName(targets & -targets));
  }
  return names;
}

}  // namespace sqdiff
