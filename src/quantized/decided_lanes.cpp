#include "quantized/decided_lanes.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace sqdiff::detail {
namespace {

std::atomic<bool> g_fast_paths{true};
std::atomic<double> g_margin_scale{1.0};
std::atomic<int64_t> g_vectors{0};
std::atomic<int64_t> g_exact_vectors{0};

constexpr double kUnitRoundoff = 0x1p-24;  // float32
constexpr double kDoubleUnitRoundoff = 0x1p-53;
constexpr int32_t kPowerOfTwoMultiplier = int32_t{1} << 30;

bool is_single_rounding(QuantizedPipeline pipeline) {
  return pipeline == QuantizedPipeline::subtract_single_rounding ||
         pipeline == QuantizedPipeline::squared_difference_single_rounding;
}

bool is_subtract(QuantizedPipeline pipeline) {
  return pipeline == QuantizedPipeline::subtract_double_rounding ||
         pipeline == QuantizedPipeline::subtract_single_rounding;
}

// The real number a Requantizer multiplies by, m 2^(e - 31): exact in double.
double real_multiplier(const Requantizer& r, bool single) {
  if (single) return std::ldexp(static_cast<double>(r.multiplier), -r.total_shift);
  return std::ldexp(static_cast<double>(r.multiplier), r.left_shift - 31 - r.right_shift);
}

// The rounding shift r of a multiplier below 1 (e = -r).
int right_shift_of(const Requantizer& r, bool single) { return single ? r.total_shift - 31 : r.right_shift; }

// delta: how far an input's scaled integer lies from its real value.
double input_error(const Requantizer& r, bool single, bool is_half) {
  if (is_half) return 0.0;
  if (single || r.right_shift == 0) return 0.5;
  return 0.5 + std::ldexp(1.0, -(r.right_shift + 1));
}

// E_1: the first rounding of the output's double rounding.
double output_first_rounding(const Requantizer& r, bool single) {
  return !single && r.right_shift >= 1 ? std::ldexp(1.0, -(r.right_shift + 1)) : 0.0;
}

int32_t largest_magnitude(QuantizedType type) {
  switch (type) {
    case QuantizedType::i8: return 128;
    case QuantizedType::u8: return 255;
    default: return 32768;
  }
}

// k: the most fraction bits that keep every partial sum of an estimate of
// magnitude at most S within M +- 2^(21-k), (S + 2) 2^k <= 2^20, and at most
// 14 (M's bits shifted down by k are then a multiple of 256).
int fraction_bits_for(double largest) {
  return std::min(14, 20 - static_cast<int>(std::ceil(std::log2(largest + 2.0))));
}

// The rounding constants for a bound E at k fraction bits, or false where the
// margin would leave a quarter of the outputs or more undecided.
bool set_rounding(DecidedLanes& lanes, double bound, int k) {
  if (k < 4) return false;
  const double scaled = bound * g_margin_scale.load() * std::ldexp(1.0, k);
  const double least_margin = std::floor(scaled) + 1.0;  // the smallest integer above E 2^k
  int j = 1;
  while (std::ldexp(1.0, j - 1) < least_margin) ++j;  // w = 2^(j-1) > E 2^k
  if (j > k - 2) return false;
  lanes.fraction_bits = k;
  lanes.round_bias = (int32_t{1} << (k - 1)) + (int32_t{1} << (j - 1));
  lanes.undecided_mask = ((int32_t{1} << k) - 1) & ~((int32_t{1} << j) - 1);
  lanes.magic_high = std::bit_cast<int32_t>(std::ldexp(1.5f, 23 - k)) >> k;
  lanes.vectors = &g_vectors;
  lanes.exact_vectors = &g_exact_vectors;
  lanes.enabled = true;
  return true;
}

double magic(int k) { return std::ldexp(1.5, 23 - k); }

// Subtract's real value Y = x alpha - y beta + c0 and the part of its bound
// that does not depend on the estimate's precision: E_in + E_1 (the
// reference pipeline's own roundings), the same for the float32 and float64
// decided lanes.
struct SubtractModel {
  double alpha, beta, c0;
  double products;  // the largest |x alpha| + |y beta|
  double largest;   // products + |c0|: the largest |Y|
  double reference_error;
};

SubtractModel subtract_model(const QuantizedCall& call, bool single) {
  const QuantizedKernelParams& p = call.params;
  const double mu_a = real_multiplier(p.a, single);
  const double mu_b = real_multiplier(p.b, single);
  const double mu_o = real_multiplier(p.out, single);
  const double input_scale = std::ldexp(1.0, p.input_left_shift);
  SubtractModel m{};
  m.alpha = input_scale * mu_a * mu_o;  // one rounding: (input_scale mu_a) is exact
  m.beta = input_scale * mu_b * mu_o;
  m.c0 = p.out_zero_point - p.a_zero_point * m.alpha + p.b_zero_point * m.beta;
  m.products = largest_magnitude(call.type) * (m.alpha + m.beta);
  m.largest = m.products + std::abs(m.c0);
  const double e_in = (input_error(p.a, single, call.half_input == HalfInput::a) +
                       input_error(p.b, single, call.half_input == HalfInput::b)) *
                      mu_o;
  m.reference_error = e_in + output_first_rounding(p.out, single);
  return m;
}

// Subtract in float32 lanes (quantized_decided-inl.h's bound).
void decide_subtract(QuantizedCall& call, bool single) {
  QuantizedKernelParams& p = call.params;
  const SubtractModel m = subtract_model(call, single);
  const int k = fraction_bits_for(m.largest);
  const double e_f = 2.0 * kUnitRoundoff * (1.0 + 0x1p-20) * m.products + 3.0 * std::ldexp(1.0, -(k + 1)) +
                     0x1p-40 * (1.0 + m.largest);
  DecidedLanes& lanes = p.decided;
  if (!set_rounding(lanes, (m.reference_error + e_f) * (1.0 + 0x1p-20), k)) return;
  lanes.alpha = static_cast<float>(m.alpha);
  lanes.neg_beta = static_cast<float>(-m.beta);
  lanes.offset = static_cast<float>(m.c0 + magic(k));
}

// k for the float64 estimate: the most fraction bits that keep every partial
// sum of an estimate of magnitude at most S within M +- 2^(51-k),
// (S + 2) 2^k <= 2^49, and at most 32 (B's bits k..k+31 are the result).
int wide_fraction_bits_for(double largest) {
  return std::min(32, 49 - static_cast<int>(std::ceil(std::log2(largest + 2.0))));
}

// The rounding constants of the float64 estimate for a bound E at k fraction
// bits, or false where the margin would leave a quarter of the outputs or
// more undecided. Returns the offset's rounding part M + 1/2 + w 2^-k (exact).
bool set_wide_rounding(DecidedLanes& lanes, double bound, int k, double& rounding_offset) {
  if (k < 4 || k > 32) return false;
  const double scaled = bound * g_margin_scale.load() * std::ldexp(1.0, k);
  const double least_margin = std::floor(scaled) + 1.0;  // the smallest integer above E 2^k
  int j = 1;
  while (std::ldexp(1.0, j - 1) < least_margin) ++j;  // w = 2^(j-1) > E 2^k
  if (j > k - 2) return false;
  const double magic = std::ldexp(1.5, 52 - k);
  lanes.fraction_bits = k;
  const uint64_t mask = ((uint64_t{1} << k) - 1) & ~((uint64_t{1} << j) - 1);  // bits j..k-1, k <= 32
  lanes.undecided_mask = static_cast<int32_t>(static_cast<uint32_t>(mask));
  lanes.magic_high = static_cast<int32_t>(static_cast<uint32_t>(std::bit_cast<uint64_t>(magic) >> k));
  lanes.vectors = &g_vectors;
  lanes.exact_vectors = &g_exact_vectors;
  lanes.enabled = true;
  rounding_offset = magic + 0.5 + std::ldexp(1.0, j - 1 - k);
  return true;
}

// int16 subtract in float64 lanes (quantized_decided_wide-inl.h's bound).
void decide_subtract_wide(QuantizedCall& call, bool single) {
  QuantizedKernelParams& p = call.params;
  const SubtractModel m = subtract_model(call, single);
  const int k = wide_fraction_bits_for(m.largest);
  const double e_f = 2.0 * kDoubleUnitRoundoff * (1.0 + 0x1p-20) * m.products + 3.0 * std::ldexp(1.0, -(k + 1)) +
                     0x1p-50 * (std::abs(static_cast<double>(p.out_zero_point)) + m.products);
  DecidedLanes& lanes = p.decided;
  double rounding_offset = 0.0;
  if (!set_wide_rounding(lanes, (m.reference_error + e_f) * (1.0 + 0x1p-20), k, rounding_offset)) return;
  lanes.wide_alpha = m.alpha;
  lanes.wide_neg_beta = -m.beta;
  lanes.wide_offset = m.c0 + rounding_offset;
  // A decided q is round(Z) with |Z| <= S + E < S + 1: within the clamp when
  // S + 2 is, and then its low 16 bits are the int16 result.
  lanes.wide_words = k == 32 && m.largest + 2.0 <= std::min(-static_cast<double>(p.out_min), static_cast<double>(p.out_max));
}

// Squared difference: Y = min(d^2, h_max) mu_o + zp_o.
void decide_square(QuantizedCall& call, bool single) {
  QuantizedKernelParams& p = call.params;
  // A left shift of 31 or more saturates every nonzero square: the exact
  // pipeline's few instructions there are not worth a fast path.
  if (p.out.overflow_above == 0) return;
  const double mu_o = real_multiplier(p.out, single);
  // The least square whose value reaches the clamp's top plus one, plus one.
  const double reach = std::ceil((p.out_max + 1.0 - p.out_zero_point) / mu_o) + 1.0;
  const double square_max = std::clamp(reach, 1.0, std::ldexp(1.0, 30));
  const double largest = square_max * mu_o + std::abs(static_cast<double>(p.out_zero_point));
  const int k = fraction_bits_for(largest);
  const double e_1 = output_first_rounding(p.out, single);
  const double e_f = 3.0 * kUnitRoundoff * (1.0 + 0x1p-20) * square_max * mu_o + 2.0 * std::ldexp(1.0, -(k + 1)) +
                     0x1p-40 * (1.0 + largest);
  DecidedLanes& lanes = p.decided;
  if (!set_rounding(lanes, (e_1 + e_f) * (1.0 + 0x1p-20), k)) return;
  lanes.square_max = static_cast<int32_t>(square_max);
  lanes.out_multiplier = static_cast<float>(mu_o);
  lanes.offset = static_cast<float>(p.out_zero_point + magic(k));
}

// The dyadic pipeline's input shifts k - 1 - r, or false where a multiplier
// is not a power of two or a shift leaves the pipeline's exact range.
bool choose_dyadic(QuantizedCall& call, bool single) {
  QuantizedKernelParams& p = call.params;
  for (const Requantizer* r : {&p.a, &p.b, &p.out}) {
    if (r->multiplier != kPowerOfTwoMultiplier || (!single && r->left_shift != 0)) return false;
  }
  const int r_a = right_shift_of(p.a, single);
  const int r_b = right_shift_of(p.b, single);
  const int r_out = right_shift_of(p.out, single);
  const int k = p.input_left_shift;
  if (r_a < 0 || r_b < 0 || r_a > k - 1 || r_b > k - 1 || r_out < 0 || r_out > 29) return false;
  p.dyadic_a_shift = k - 1 - r_a;
  p.dyadic_b_shift = k - 1 - r_b;
  call.pipeline = single ? QuantizedPipeline::subtract_dyadic_single_rounding
                         : QuantizedPipeline::subtract_dyadic_double_rounding;
  return true;
}

}  // namespace

void choose_fast_path(QuantizedCall& call) {
  if (!g_fast_paths.load()) return;
  // The float32 decided lanes write 8-bit results (their low bytes); int16
  // subtract's estimate takes float64 (float32 has too few bits for it).
  // int16 squared difference keeps the exact pipeline.
  const bool eight_bit = call.type != QuantizedType::i16;
  const bool single = is_single_rounding(call.pipeline);
  if (is_subtract(call.pipeline)) {
    if (choose_dyadic(call, single)) return;
    if (eight_bit) {
      decide_subtract(call, single);
    } else {
      decide_subtract_wide(call, single);
    }
  } else if (eight_bit && (call.pipeline == QuantizedPipeline::squared_difference_double_rounding ||
                           call.pipeline == QuantizedPipeline::squared_difference_single_rounding)) {
    decide_square(call, single);
  }
}

void set_quantized_fast_paths(bool enabled) { g_fast_paths.store(enabled); }
void set_decided_margin_scale(double scale) { g_margin_scale.store(scale); }

DecidedLaneCounts decided_lane_counts() { return {g_vectors.load(), g_exact_vectors.load()}; }

}  // namespace sqdiff::detail
