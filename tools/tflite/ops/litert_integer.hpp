// LiteRT's integer primitives (gemmlowp's fixed point, TFLite's multipliers)
// as its x86-64 build computes them, for the operator kinds that follow that
// build bit for bit (QUANTIZE, the activations, MEAN). Where LiteRT's C++ is
// undefined (int32 arithmetic that overflows, a shift by 32 or more, a NaN or
// an out-of-range float converted to int32) the result is what the build
// gives, measured with LiteRT: int32 arithmetic wraps, a shift count is taken
// modulo 32, and the conversion gives INT32_MIN (docs/SPEC_DECISIONS.md 8c).
// The library's quantized ops (SPEC 9) do not follow the build there.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace sqdiff::tools::tflite::ops {

inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t wrapping_sub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
inline int32_t wrapping_mul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

// static_cast<int32_t>(float) as cvttss2si computes it: truncation toward
// zero, and INT32_MIN (the "integer indefinite") for a NaN or a value outside
// [-2^31, 2^31).
inline int32_t x86_float_to_int32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

// SaturatingRoundingDoublingHighMul: (a * b + nudge) / 2^31, the division
// truncating, the nudge +-2^30 by the product's sign (so ties go up).
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

// RoundingDivideByPOT: x / 2^exponent, ties away from zero. gemmlowp's is
// written for exponents up to 31; MEAN's folded 1/n reaches further, where
// this is the same rounding in 64 bits (0 <= exponent <= 62).
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int64_t mask = (int64_t{1} << exponent) - 1;
  const int64_t remainder = x & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return static_cast<int32_t>((static_cast<int64_t>(x) >> exponent) + (remainder > threshold ? 1 : 0));
}

struct Multiplier {
  int32_t m = 0;
  int shift = 0;
};

// QuantizeMultiplier (quantization_util.cc), default build: frexp, the
// fraction times 2^31 rounded half away from zero, 2^31 folded into 2^30 with
// the shift one up, shifts below -31 flushed to (0, 0). An infinite or NaN
// quotient (an output scale of 0, say) makes LiteRT convert inf or NaN to
// int64, which x86-64 gives as INT64_MIN, whose low 32 bits are 0: the
// multiplier 0.
inline Multiplier quantize_multiplier(double d) {
  if (d == 0.0 || !std::isfinite(d)) return {};
  int shift = 0;
  const double q = std::frexp(d, &shift);
  auto fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++shift;
  }
  if (shift < -31) return {};
  return {static_cast<int32_t>(fixed), shift};
}

// MultiplyByQuantizedMultiplier(int32_t, ...) of common.cc, double rounding:
// the left shift is `x * (1 << left_shift)` in int32, which wraps and whose
// shift count x86's shl takes modulo 32.
inline int32_t multiply_by_quantized_multiplier(int32_t x, Multiplier mul) {
  const int left = mul.shift > 0 ? mul.shift : 0;
  const int right = mul.shift > 0 ? 0 : -mul.shift;
  const auto factor = static_cast<int32_t>(uint32_t{1} << (left & 31));
  return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(wrapping_mul(x, factor), mul.m), right);
}

template <typename T>
int32_t clamp_to(int32_t v) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  return v < lo ? lo : (v > hi ? hi : v);
}

}  // namespace sqdiff::tools::tflite::ops
