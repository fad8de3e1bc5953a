// Running a test on each SIMD target compiled into the library that this CPU
// supports: the list of them, and a guard that forces one (Highway's
// SetSupportedTargetsForTest) for its lifetime.
#pragma once

#include <hwy/targets.h>

#include <cstdint>
#include <vector>

#include "kernels/kernel_table.hpp"
#include "kernels/quantized_table.hpp"

namespace sqdiff_test {

inline std::vector<int64_t> targets_to_run() {
  std::vector<int64_t> r;
  const int64_t mask = sqdiff::detail::compiled_targets() & hwy::SupportedTargets();
  for (int64_t t = mask; t != 0; t &= t - 1) r.push_back(t & -t);
  return r;
}

// The quantized kernels have one target more than the others (AVX3_DL). One
// forced target: `target` for them, and `mask` (target, with AVX3 beside
// AVX3_DL so that the other kernel tables still find theirs) for the guard.
struct QuantizedTarget {
  int64_t target;
  int64_t mask;
};

inline std::vector<QuantizedTarget> quantized_targets_to_run() {
  std::vector<QuantizedTarget> r;
  const int64_t mask = sqdiff::detail::quantized_compiled_targets() & hwy::SupportedTargets();
  for (int64_t t = mask; t != 0; t &= t - 1) {
    const int64_t target = t & -t;
    r.push_back({target, target == HWY_AVX3_DL ? (target | HWY_AVX3) : target});
  }
  return r;
}

// 0 forces nothing (the best target runs).
class TargetGuard {
 public:
  explicit TargetGuard(int64_t target) : forced_(target != 0) {
    if (forced_) hwy::SetSupportedTargetsForTest(target);
  }
  ~TargetGuard() {
    if (forced_) hwy::SetSupportedTargetsForTest(0);
  }
  TargetGuard(const TargetGuard&) = delete;
  TargetGuard& operator=(const TargetGuard&) = delete;

 private:
  bool forced_;
};

}  // namespace sqdiff_test
