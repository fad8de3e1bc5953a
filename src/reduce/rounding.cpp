#include "reduce/rounding.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

namespace sqdiff::detail {
namespace {

struct FloatFormat {
  int precision;     // significand bits, the hidden one included
  int min_exponent;  // of the smallest normal value
  int max_exponent;  // of the largest finite value
  int total_bits;
};

FloatFormat float_format(DType out) {
  switch (out) {
    case DType::f16: return {11, -14, 15, 16};
    case DType::bf16: return {8, -126, 127, 16};
    case DType::f32: return {24, -126, 127, 32};
    case DType::f64: return {53, -1022, 1023, 64};
    default: throw std::logic_error("rounding: not a float output type");
  }
}

int exponent_bits(const FloatFormat& f) { return f.total_bits - f.precision; }
int exponent_bias(const FloatFormat& f) { return f.max_exponent; }

uint64_t sign_bit(const FloatFormat& f, bool negative) {
  return negative ? uint64_t{1} << (f.total_bits - 1) : 0;
}

// Bits of an unsigned multi-limb magnitude (least significant limb first).
int bit_length(std::span<const uint64_t> magnitude) {
  for (std::size_t i = magnitude.size(); i-- > 0;) {
    if (magnitude[i] != 0) return static_cast<int>(i * 64) + 64 - std::countl_zero(magnitude[i]);
  }
  return 0;
}

bool bit_at(std::span<const uint64_t> magnitude, int position) {
  const auto limb = static_cast<std::size_t>(position / 64);
  return limb < magnitude.size() && ((magnitude[limb] >> (position % 64)) & 1) != 0;
}

bool any_bit_below(std::span<const uint64_t> magnitude, int position) {
  const auto limb = static_cast<std::size_t>(position / 64);
  for (std::size_t i = 0; i < limb && i < magnitude.size(); ++i) {
    if (magnitude[i] != 0) return true;
  }
  const int within = position % 64;
  return limb < magnitude.size() && within > 0 && (magnitude[limb] & ((uint64_t{1} << within) - 1)) != 0;
}

// Bits [from, from + count) (count at most 64) as a number.
uint64_t bits_from(std::span<const uint64_t> magnitude, int from, int count) {
  uint64_t value = 0;
  for (int k = 0; k < count; ++k) {
    if (bit_at(magnitude, from + k)) value |= uint64_t{1} << k;
  }
  return value;
}

// magnitude * 2^lsb_exponent (plus something below its lowest bit when
// `sticky`, which callers only set with at least two bits below the result's
// last place) rounded to nearest, ties to even, in format f.
uint64_t round_magnitude(std::span<const uint64_t> magnitude, int lsb_exponent, bool sticky, bool negative,
                         const FloatFormat& f) {
  const int length = bit_length(magnitude);
  if (length == 0) return sign_bit(f, negative);
  const int top_exponent = lsb_exponent + length - 1;
  if (top_exponent > f.max_exponent + 1) {
    return sign_bit(f, negative) | (((uint64_t{1} << exponent_bits(f)) - 1) << (f.precision - 1));
  }
  int ulp_exponent = std::max(top_exponent, f.min_exponent) - (f.precision - 1);
  const int shift = ulp_exponent - lsb_exponent;
  uint64_t kept;
  if (shift <= 0) {
    if (sticky) throw std::logic_error("rounding: too few bits below the last place");
    kept = bits_from(magnitude, 0, length) << -shift;
  } else {
    kept = bits_from(magnitude, shift, std::min(length - shift, 64));
    const bool round_bit = bit_at(magnitude, shift - 1);
    const bool rest = sticky || any_bit_below(magnitude, shift - 1);
    if (round_bit && (rest || (kept & 1) != 0)) ++kept;
    if (kept == uint64_t{1} << f.precision) {
      kept >>= 1;
      ++ulp_exponent;
    }
  }
  const uint64_t hidden = uint64_t{1} << (f.precision - 1);
  if (kept == 0) return sign_bit(f, negative);
  if (kept < hidden) return sign_bit(f, negative) | kept;  // subnormal
  const int exponent = ulp_exponent + f.precision - 1;
  if (exponent > f.max_exponent) {
    return sign_bit(f, negative) | (((uint64_t{1} << exponent_bits(f)) - 1) << (f.precision - 1));
  }
  const auto field = static_cast<uint64_t>(exponent + exponent_bias(f));
  return sign_bit(f, negative) | (field << (f.precision - 1)) | (kept - hidden);
}

// x rounded into f when it lies in f's normal range, with a few integer
// operations: every output of the fast paths goes through here, and the
// general rounding below walks the bits one at a time (~900 instructions,
// most of the time of a pairwise sum of 64 terms per output).
std::optional<uint64_t> round_normal_double(uint64_t bits, const FloatFormat& f) {
  const auto field = static_cast<int>((bits >> 52) & 0x7FF);
  const int exponent = field - 1023;
  if (field == 0 || exponent < f.min_exponent || exponent > f.max_exponent) return std::nullopt;
  const int dropped = 53 - f.precision;
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  const uint64_t rest = fraction & ((uint64_t{1} << dropped) - 1);
  const uint64_t half = uint64_t{1} << (dropped - 1);
  // The exponent field sits right above the kept fraction, so rounding up
  // carries into it: the next binade, or infinity past the largest finite.
  uint64_t magnitude = (static_cast<uint64_t>(exponent + exponent_bias(f)) << (f.precision - 1)) | (fraction >> dropped);
  if (rest > half || (rest == half && (magnitude & 1) != 0)) ++magnitude;
  return sign_bit(f, (bits >> 63) != 0) | magnitude;
}

uint64_t round_double(double x, DType out) {
  const FloatFormat f = float_format(out);
  if (out == DType::f64) return std::bit_cast<uint64_t>(x);
  if (std::isnan(x)) return nan_bits(out);
  if (std::isinf(x)) return infinity_bits(out, std::signbit(x));
  const auto bits = std::bit_cast<uint64_t>(x);
  if (const std::optional<uint64_t> normal = round_normal_double(bits, f)) return *normal;
  const auto field = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  const uint64_t mantissa = field == 0 ? fraction : fraction | (uint64_t{1} << 52);
  const int exponent = field == 0 ? -1074 : field - 1075;
  const uint64_t limb[1] = {mantissa};
  return round_magnitude(limb, exponent, false, std::signbit(x), f);
}

// Knuth's TwoSum: a + b = s + e exactly.
void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bv = s - a;
  e = (a - (s - bv)) + (b - bv);
}

// The largest double not above hi + lo (exact real), and the smallest not below.
// The neighbours of a finite non-zero double, by its bits (std::nextafter is
// a library call that checks what these callers already know).
double next_toward_zero(double x) { return std::bit_cast<double>(std::bit_cast<uint64_t>(x) - 1); }
double next_away_from_zero(double x) { return std::bit_cast<double>(std::bit_cast<uint64_t>(x) + 1); }

double next_down(double x) {
  if (x == 0 || !std::isfinite(x)) return std::nextafter(x, -INFINITY);
  return x > 0 ? next_toward_zero(x) : next_away_from_zero(x);
}

double next_up(double x) {
  if (x == 0 || !std::isfinite(x)) return std::nextafter(x, INFINITY);
  return x > 0 ? next_away_from_zero(x) : next_toward_zero(x);
}

double round_down_sum(double hi, double lo) {
  double s, e;
  two_sum(hi, lo, s, e);
  return e < 0 ? next_down(s) : s;
}

double round_up_sum(double hi, double lo) {
  double s, e;
  two_sum(hi, lo, s, e);
  return e > 0 ? next_up(s) : s;
}

constexpr double kUnit = 0x1p-53;  // half an ulp of 1: a double's relative rounding error

}  // namespace

bool is_float_output(DType out) {
  return out == DType::f16 || out == DType::bf16 || out == DType::f32 || out == DType::f64;
}

uint64_t nan_bits(DType out) {
  switch (out) {
    case DType::f16: return 0x7E00;
    case DType::bf16: return 0x7FC0;
    case DType::f32: return 0x7FC00000;
    default: return 0x7FF8000000000000;
  }
}

uint64_t infinity_bits(DType out, bool negative) {
  const FloatFormat f = float_format(out);
  return sign_bit(f, negative) | (((uint64_t{1} << exponent_bits(f)) - 1) << (f.precision - 1));
}

uint64_t zero_bits(DType out, bool negative) { return sign_bit(float_format(out), negative); }

double float_bits_to_double(uint64_t bits, DType out) {
  const FloatFormat f = float_format(out);
  const bool negative = ((bits >> (f.total_bits - 1)) & 1) != 0;
  const auto field = static_cast<int>((bits >> (f.precision - 1)) & ((uint64_t{1} << exponent_bits(f)) - 1));
  const uint64_t fraction = bits & ((uint64_t{1} << (f.precision - 1)) - 1);
  double magnitude;
  if (field == (1 << exponent_bits(f)) - 1) {
    magnitude = fraction != 0 ? NAN : INFINITY;
  } else if (field == 0) {
    magnitude = std::ldexp(static_cast<double>(fraction), f.min_exponent - (f.precision - 1));
  } else {
    magnitude = std::ldexp(static_cast<double>(fraction | (uint64_t{1} << (f.precision - 1))),
                           field - exponent_bias(f) - (f.precision - 1));
  }
  return negative ? -magnitude : magnitude;
}

std::optional<uint64_t> round_exact(const ExactSum& sum, bool mean, uint64_t divisor, DType out) {
  const bool float_out = is_float_output(out);
  if (float_out) {
    if (sum.is_nan() || (mean && divisor == 0)) return nan_bits(out);
    if (sum.is_positive_infinity()) return infinity_bits(out, false);
    if (sum.is_negative_infinity()) return infinity_bits(out, true);
  } else if (!sum.is_finite() || mean) {
    throw std::logic_error("rounding: an integer output takes finite sums only");
  }
  // The magnitude, two extra limbs below it for a mean's quotient bits.
  const std::span<const uint64_t> limbs = sum.limbs();
  const bool negative = sum.is_negative();
  std::vector<uint64_t> magnitude(limbs.size() + 2, 0);
  uint64_t borrow = 1;  // negating: invert and add one
  for (std::size_t i = 0; i < limbs.size(); ++i) {
    uint64_t word = limbs[i];
    if (negative) {
      word = ~word + borrow;
      borrow = (borrow != 0 && word == 0) ? 1 : 0;
    }
    magnitude[i + 2] = word;
  }
  int lsb = sum.format().lsb_exponent - 128;
  bool sticky = false;
  if (mean) {
    // magnitude * 2^128 / divisor, from the top limb down.
    uint128_t remainder = 0;
    for (std::size_t i = magnitude.size(); i-- > 0;) {
      const uint128_t current = (remainder << 64) | magnitude[i];
      magnitude[i] = static_cast<uint64_t>(current / divisor);
      remainder = current % divisor;
    }
    sticky = remainder != 0;
  }
  if (float_out) {
    if (sum.is_zero()) return zero_bits(out, sum.only_negative_zeros());
    return round_magnitude(magnitude, lsb, sticky, negative, float_format(out));
  }
  // An integer sum (exponent 0): it must fit.
  const int length = bit_length(magnitude) - 128;
  if (out == DType::u64) {
    if (negative || length > 64) return std::nullopt;
    return magnitude[2];
  }
  if (length > 64 || (negative ? (length == 64 && magnitude[2] != (uint64_t{1} << 63)) : length > 63)) {
    return std::nullopt;
  }
  return negative ? ~magnitude[2] + 1 : magnitude[2];
}

std::optional<uint64_t> round_if_decided(const Approximation& x, DType out) {
  if (!std::isfinite(x.hi) || !std::isfinite(x.lo) || !std::isfinite(x.error)) return std::nullopt;
  // The ends of the interval as lo - e and lo + e, computed so that the
  // rounding of that subtraction stays inside the bound: e at least a few
  // units of lo's last place.
  const double e = 2 * std::max(x.error, kUnit * std::fabs(x.lo)) * (1 + 0x1p-40);
  const double lo_low = x.lo - e;
  const double lo_high = x.lo + e;
  uint64_t low_bits;
  uint64_t high_bits;
  if (out == DType::f64) {
    // Round to nearest is monotone: hi + lo_low <= exact <= hi + lo_high.
    low_bits = std::bit_cast<uint64_t>(x.hi + lo_low);
    high_bits = std::bit_cast<uint64_t>(x.hi + lo_high);
    if (std::isinf(x.hi + lo_low) || std::isinf(x.hi + lo_high)) return std::nullopt;
  } else {
    low_bits = round_double(round_down_sum(x.hi, lo_low), out);
    high_bits = round_double(round_up_sum(x.hi, lo_high), out);
  }
  // A zero at either end: the sign of a zero result is the exact path's.
  if (low_bits != high_bits || (low_bits & ~sign_bit(float_format(out), true)) == 0) return std::nullopt;
  return low_bits;
}

std::optional<uint64_t> round_to_f32_if_decided(const Approximation& x) {
  // s is within half an ulp of hi + lo, the exact value within `error` of that.
  const double s = x.hi + x.lo;
  const double margin = (x.error + std::fabs(s) * kUnit) * (1 + 0x1p-40);
  return f32_if_decided(s, margin);
}

std::optional<Approximation> divide(const Approximation& x, uint64_t divisor) {
  if (divisor == 0 || divisor > (uint64_t{1} << 53)) return std::nullopt;
  const auto n = static_cast<double>(divisor);  // exact below 2^53
  const double q1 = x.hi / n;
  if (!std::isfinite(q1) || (q1 != 0 && std::fabs(q1) < 0x1p-900)) return std::nullopt;
  // hi + lo - q1 n, exactly: q1 n = p + pe (FMA), hi - p is exact (p is within
  // a factor of 2 of hi).
  const double p = q1 * n;
  const double pe = std::fma(q1, n, -p);
  const double residual = ((x.hi - p) - pe) + x.lo;
  const double q2 = residual / n;
  double hi, lo;
  two_sum(q1, q2, hi, lo);
  // x's bound divided, plus the roundings of the residual and of q2 (each a
  // unit of their own size) and a margin.
  const double error = x.error / n * (1 + 0x1p-50) + 4 * kUnit * (std::fabs(residual) / n + std::fabs(q2)) +
                       0x1p-104 * std::fabs(q1);
  return Approximation{hi, lo, error};
}

}  // namespace sqdiff::detail
