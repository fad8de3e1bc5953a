// TFLite's fused activation on float and integer outputs that the operator
// computes before it (SUB, MUL): ActivationFunctionWithMinMax, min(max(x, lo),
// hi) with a NaN kept, over the range CalculateActivationRange gives. NONE's
// range is [lowest, max], so a float that overflowed, or an infinite input,
// comes out as +-FLT_MAX, as LiteRT's reference kernels and TFLite-Micro write.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tflite/tflite_model.hpp"

namespace sqdiff::tools::tflite {

template <typename T>
struct ActivationRange {
  T lo = std::numeric_limits<T>::lowest();
  T hi = std::numeric_limits<T>::max();
  T operator()(T x) const { return std::min(std::max(x, lo), hi); }
};

// The range; for an integer type under NONE it is the type's own, so callers
// may skip the clamp (needs_clamp).
template <typename T>
ActivationRange<T> activation_range(FusedActivation activation) {
  ActivationRange<T> range;
  switch (activation) {
    case FusedActivation::relu: range.lo = 0; break;
    case FusedActivation::relu6: range.lo = 0; range.hi = 6; break;
    case FusedActivation::relu_n1_to_1: range.lo = -1; range.hi = 1; break;
    default: break;  // NONE (the check refuses TANH and SIGN_BIT)
  }
  return range;
}

template <typename T>
bool needs_clamp(FusedActivation activation) {
  return !std::is_integral_v<T> || activation != FusedActivation::none;
}

// Clamps `count` elements of `data` in place.
template <typename T>
void clamp_activation(void* data, int64_t count, FusedActivation activation) {
  if (!needs_clamp<T>(activation)) return;
  const ActivationRange<T> range = activation_range<T>(activation);
  auto* p = static_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) p[i] = range(p[i]);
}

}  // namespace sqdiff::tools::tflite
