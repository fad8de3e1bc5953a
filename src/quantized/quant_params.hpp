// The quantized ops' parameters (SPEC section 9): every check on the scales,
// zero points, types and options, and the per-call constants the kernels use,
// worked out from (scale, zero_point) as LiteRT's Prepare does.
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/quantized_table.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/quantized.hpp"

namespace sqdiff::detail {

enum class QuantizedOp : uint8_t { subtract, squared_difference };

// A real multiplier as m * 2^(e - 31): m in [2^30, 2^31) (or 0), from frexp
// and a rounding half away from zero (TFLite's QuantizeMultiplier).
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int shift = 0;  // e
};

// TFLite's QuantizeMultiplier for a real multiplier d >= 0 (finite): (0, 0)
// for 0 and wherever e < -31 (every product would shift out); with single
// rounding, e is at most 30 (m = 2^31 - 1 there), as in that build.
QuantizedMultiplier quantize_multiplier(double real_multiplier, Requantize rounding);

// The kernel's form of a multiplier (kernels/quantized_table.hpp).
Requantizer make_requantizer(QuantizedMultiplier multiplier, Requantize rounding);

// TFLite's CheckedLog2: the float32 log2 of x rounded half away from zero, and
// whether x is within 1e-3 of that power of two in the log domain.
bool checked_log2(float x, int& log2_rounded);

struct ActivationRange {
  int32_t min;
  int32_t max;
};

// TFLite's CalculateActivationRangeQuantized for an output of [type_min,
// type_max]: zero_point + round(f / scale) in float32 for the activation's
// bounds f, clipped to the type (where LiteRT refuses an f / scale beyond
// int32, the clipped bound).
ActivationRange activation_range(Activation activation, QuantParams out, int32_t type_min, int32_t type_max);

// What one call runs: the pipeline, the storage type and its constants.
struct QuantizedCall {
  QuantizedPipeline pipeline;
  HalfInput half_input;
  QuantizedType type;
  QuantizedKernelParams params;
};

// Checks the types, quantization parameters and options of a call of `op`
// (errors start with `name`) and works out its constants. Shapes, strides and
// threads are checked by the element-wise validation (shape/validate.hpp).
QuantizedCall prepare_quantized_call(std::string_view name, QuantizedOp op, DType a, QuantParams qa, DType b,
                                     QuantParams qb, DType out, QuantParams qout, const QuantizedOptions& options);

}  // namespace sqdiff::detail
