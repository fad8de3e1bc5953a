// The row kernels of the quantized ops (SPEC section 9), one per (pipeline,
// storage type, row kind), for the SIMD target chosen at run time. They have
// the element-wise row kernels' signature (kernel_table.hpp) and read the
// call's precomputed multipliers from RowBatch::params, so that the
// element-wise plan and walk (elementwise/execute.hpp) run them unchanged.
#pragma once

#include <atomic>
#include <cstdint>

#include "kernels/kernel_table.hpp"

namespace sqdiff::detail {

// One fixed-point multiplication by a real multiplier, precomputed once per
// call from QuantizeMultiplier's (m, e) (quantized/quant_params.hpp):
// - double rounding: RDBPOT(SRDHM(x * 2^left_shift mod 2^32, multiplier), right_shift);
// - single rounding: (x * multiplier + rounding) >> total_shift, in 64 bits.
struct Requantizer {
  int32_t multiplier = 0;   // in [0, 2^31)
  int32_t left_shift = 0;   // 0..31
  int32_t right_shift = 0;  // 0..31
  int32_t total_shift = 1;  // single rounding: 31 - e, in 1..62
  int64_t rounding = 1;     // single rounding: 2^(total_shift - 1)
  // The largest non-negative x whose product stays an int32: x 2^left_shift
  // (double rounding) or (x m + rounding) >> total_shift (single rounding).
  // A multiplier of 1 or more (squared_difference's output) overflows int32
  // beyond it, where TFLite-Micro's arithmetic wraps; SPEC 9 takes the product
  // in 64 bits instead, so such an x gives a result far above every type's
  // range, which the clamp saturates.
  int32_t overflow_above = INT32_MAX;
};

// The decided lanes' per-call constants (quantized_decided-inl.h proves the
// bound they come from; quantized/decided_lanes.cpp works them out). The
// estimate is a float32 in the binade of M = 1.5 2^(23-k), whose bits are then
// M's plus the estimate in fixed point with k fraction bits:
// - subtract: Y = x alpha + (y neg_beta + offset);
// - squared_difference: Y = min(d^2, square_max) out_multiplier + offset;
// offset holds the zero points' terms and M. The bits plus round_bias have all
// of undecided_mask's bits clear where the estimate may be too near a rounding
// boundary; elsewhere their top bits (>> k) less magic_high are the rounded
// result. int16 subtract's estimate is a float64 instead, in the binade of
// M = 1.5 2^(52-k) (quantized_decided_wide-inl.h): Y = x wide_alpha +
// (y wide_neg_beta + wide_offset), wide_offset holding 1/2 and the margin as
// well; its low 32 bits have all of undecided_mask's bits clear where the
// estimate may be too near a rounding boundary, and elsewhere its bits
// k..k+31 less magic_high (the low 32 bits of bits(M) >> k) are the result.
struct DecidedLanes {
  bool enabled = false;
  float alpha = 0.0f;           // subtract
  float neg_beta = 0.0f;        // subtract
  float out_multiplier = 0.0f;  // squared_difference
  float offset = 0.0f;
  int32_t square_max = 0;  // squared_difference: the square past which every output is the clamp's top
  int32_t fraction_bits = 0;
  int32_t round_bias = 0;
  int32_t undecided_mask = 0;
  int32_t magic_high = 0;
  double wide_alpha = 0.0;  // int16 subtract
  double wide_neg_beta = 0.0;
  double wide_offset = 0.0;
  // k = 32 and |q| + 1 within the clamp for every decided lane: the results
  // are the low words of the estimates' high halves, no clamp, no saturation.
  bool wide_words = false;
  // Where the kernels count vectors for decided_lane_counts() (quantized/decided_lanes.hpp).
  std::atomic<int64_t>* vectors = nullptr;
  std::atomic<int64_t>* exact_vectors = nullptr;
};

// Everything a row needs, worked out once per call.
struct QuantizedKernelParams {
  int32_t a_zero_point = 0;
  int32_t b_zero_point = 0;
  int32_t out_zero_point = 0;
  int32_t input_left_shift = 0;  // 20 (i8/u8 subtract), 15 (i16 subtract), 7 (i8/u8 squared), 0 (i16 squared)
  Requantizer a;                 // the pot path uses a.right_shift and b.right_shift only
  Requantizer b;
  Requantizer out;
  int32_t out_min = 0;  // the activation's range, within the type's
  int32_t out_max = 0;
  DecidedLanes decided;  // the general pipelines: the fast path, when enabled
  int32_t dyadic_a_shift = 0;  // the dyadic pipelines: (x - zp) 2^shift, exact
  int32_t dyadic_b_shift = 0;
};

// The integer algorithms of SPEC 9's table.
enum class QuantizedPipeline : uint8_t {
  subtract_double_rounding,
  subtract_single_rounding,
  squared_difference_double_rounding,
  squared_difference_single_rounding,
  subtract_int16_power_of_two,  // reference_ops::Sub16: rounding shifts and a saturating subtract
  // The general subtract when all three multipliers are powers of two (equal
  // scales, scales 2^n apart): the same results from shifts alone.
  subtract_dyadic_double_rounding,
  subtract_dyadic_single_rounding,
};
inline constexpr int kQuantizedPipelineCount = 7;

// The input whose multiplier is exactly 1/2: the one of the larger scale
// (s / (2 s) in double is exactly 1/2), either when the scales are equal. Its
// scaling is a shift, so the kernels take it as a template parameter.
enum class HalfInput : uint8_t { a, b };
inline constexpr int kHalfInputCount = 2;

// The storage types: i8, u8, i16.
enum class QuantizedType : uint8_t { i8, u8, i16 };
inline constexpr int kQuantizedTypeCount = 3;

struct QuantizedKernelTable {
  int64_t target;  // the HWY_* bit of the target these kernels were compiled for
  // plain: ordinary stores; streaming: non-temporal stores where aligned (the
  // caller fences). narrow_long_rows is plain (RowKernels' third set).
  // The power-of-two pipeline has no multipliers: both of its HalfInput entries are the same.
  RowKernels kernels[kQuantizedPipelineCount][kHalfInputCount][kQuantizedTypeCount];

  const RowKernels& at(QuantizedPipeline pipeline, HalfInput half, QuantizedType type) const {
    return kernels[static_cast<int>(pipeline)][static_cast<int>(half)][static_cast<int>(type)];
  }
};

// The table for the best target the CPU supports (honours hwy's
// SetSupportedTargetsForTest, so tests can run every target).
const QuantizedKernelTable& quantized_kernel_table();

// The targets the quantized kernels were compiled for: the others' and
// AVX3_DL (AVX-512 VBMI, whose byte permutes apply a constant operand's table).
int64_t quantized_compiled_targets();

}  // namespace sqdiff::detail
