// An independent oracle of the quantized ops, written straight from SPEC
// section 9's formulas in plain int64 / i128 arithmetic: floor divisions
// instead of shifts, the rounding of RDBPOT spelt out on magnitudes, no
// library code. It also says which parameters SPEC 9 refuses.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff_test::quantized_oracle {

// 128-bit integers (GCC, Clang): the products below need 94 bits at most.
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

using sqdiff::Activation;
using sqdiff::DType;
using sqdiff::QuantParams;
using sqdiff::Requantize;

enum class Op { subtract, squared_difference };

struct TypeLimits {
  int64_t min;
  int64_t max;
};

inline TypeLimits limits(DType dtype) {
  if (dtype == DType::i8) return {-128, 127};
  if (dtype == DType::u8) return {0, 255};
  return {-32768, 32767};
}

// floor(n / 2^k) for k >= 0, by division (no shifts of negative numbers).
inline i128 floor_div_pow2(i128 n, int k) {
  const i128 d = static_cast<i128>(1) << k;
  i128 q = n / d;
  if (n % d != 0 && n < 0) q -= 1;
  return q;
}

// SRDHM(a, b) = floor((a b + 2^30) / 2^31), saturating for a = b = INT32_MIN.
// Exact for any |a| below 2^93 (SPEC 9's products never wrap).
inline i128 srdhm(i128 a, int64_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  return floor_div_pow2(a * b + (int64_t{1} << 30), 31);
}

// RDBPOT(x, e): x / 2^e to nearest, ties away from zero.
inline int64_t rdbpot(int64_t x, int e) {
  if (e == 0) return x;
  const i128 magnitude = x < 0 ? -static_cast<i128>(x) : x;
  const i128 rounded = (magnitude + (static_cast<i128>(1) << (e - 1))) >> e;  // magnitudes: no sign issue
  return static_cast<int64_t>(x < 0 ? -rounded : rounded);
}

struct Multiplier {
  int64_t m;
  int e;
};

// QuantizeMultiplier(d): (q, e) = frexp(d), m = round_half_away(q 2^31),
// 2^31 -> 2^30 with e + 1, e < -31 -> (0, 0); the single-rounding build also
// saturates e > 30 to (2^31 - 1, 30).
inline Multiplier quantize_multiplier(double d, Requantize rounding) {
  if (d == 0) return {0, 0};
  int e = 0;
  const double q = std::frexp(d, &e);
  const double scaled = q * 2147483648.0;
  // half away from zero, spelt out: floor(x + 0.5) for the positive x here
  auto m = static_cast<int64_t>(std::floor(scaled + 0.5));
  if (m == (int64_t{1} << 31)) {
    m = int64_t{1} << 30;
    e += 1;
  }
  if (e < -31) return {0, 0};
  if (rounding == Requantize::single_rounding && e > 30) return {(int64_t{1} << 31) - 1, 30};
  return {m, e};
}

// A value beyond every type's range, for results past int64 (the clamp saturates them).
inline constexpr int64_t kBeyondEveryType = int64_t{1} << 60;

// MBQM in exact arithmetic, as SPEC 9 defines it (no int32 wrap-around where
// TFLite-Micro's arithmetic overflows): double rounding
// RDBPOT(SRDHM(x 2^max(e,0), m), max(-e,0)); single rounding
// (x m + 2^(30-e)) >> (31-e).
inline int64_t mbqm(int64_t x, Multiplier q, Requantize rounding) {
  if (rounding == Requantize::single_rounding) {
    const i128 total = static_cast<i128>(x) * q.m + (static_cast<i128>(1) << (30 - q.e));
    return static_cast<int64_t>(floor_div_pow2(total, 31 - q.e));
  }
  const int left = std::max(q.e, 0);
  const int right = std::max(-q.e, 0);
  // Past 2^60 every nonzero x saturates; testing it first also keeps the shift below defined.
  if (left >= 60) return x == 0 ? 0 : (x > 0 ? kBeyondEveryType : -kBeyondEveryType);
  const i128 product = srdhm(static_cast<i128>(x) * (static_cast<i128>(1) << left), q.m);
  return rdbpot(static_cast<int64_t>(std::clamp<i128>(product, -kBeyondEveryType, kBeyondEveryType)), right);
}

// TFLite's CheckedLog2 as SPEC 9 names it: float32 log(x) * (1 / log(2)),
// rounded half away; a power of two when within 1e-3 of the rounded value.
inline bool checked_log2(float x, int& rounded_log) {
  const float log = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(log);
  rounded_log = static_cast<int>(rounded);
  return std::fabs(log - rounded) < 1e-3f;
}

// CalculateActivationRangeQuantized: zp + round_half_away(f / s) (float32), clipped.
inline TypeLimits activation_bounds(Activation activation, QuantParams out, TypeLimits type) {
  const auto q = [&](float f) -> int64_t {
    const float t = std::round(f / out.scale);
    const double clipped = std::clamp(static_cast<double>(t), -1e12, 1e12);
    return std::clamp<int64_t>(out.zero_point + static_cast<int64_t>(clipped), type.min, type.max);
  };
  switch (activation) {
    case Activation::relu: return {std::max(type.min, q(0.0f)), type.max};
    case Activation::relu6: return {std::max(type.min, q(0.0f)), std::min(type.max, q(6.0f))};
    case Activation::relu_n1_to_1: return {std::max(type.min, q(-1.0f)), std::min(type.max, q(1.0f))};
    default: return type;
  }
}

// One call's parameters, worked out as SPEC 9 says, or the reason it is refused.
struct Config {
  Op op = Op::subtract;
  DType dtype = DType::i8;
  QuantParams qa, qb, qout;
  Activation activation = Activation::none;
  Requantize rounding = Requantize::double_rounding;
  bool pot_scale_int16 = true;
};

struct Prepared {
  std::optional<std::string> refused;  // set: SPEC 9 says this call is an error
  bool power_of_two = false;
  int shift_a = 0, shift_b = 0;  // pot path: RDBPOT amounts
  int left = 0;                  // general path: 20 / 15 / 7 / 0
  Multiplier ma{}, mb{}, mout{};
  TypeLimits bounds{};
};

inline bool valid_scale(float s) { return std::isfinite(s) && s > 0; }

inline Prepared prepare(const Config& c) {
  Prepared p;
  const TypeLimits type = limits(c.dtype);
  for (const QuantParams& q : {c.qa, c.qb, c.qout}) {
    if (!valid_scale(q.scale)) {
      p.refused = "scale";
      return p;
    }
    if (q.zero_point < type.min || q.zero_point > type.max || (c.dtype == DType::i16 && q.zero_point != 0)) {
      p.refused = "zero point";
      return p;
    }
  }
  if (c.op == Op::squared_difference && c.activation != Activation::none) {
    p.refused = "activation";
    return p;
  }
  p.bounds = c.op == Op::subtract ? activation_bounds(c.activation, c.qout, type) : type;
  if (c.op == Op::subtract && c.dtype == DType::i16 && c.pot_scale_int16) {
    int la = 0, lb = 0, lo = 0;
    const bool a_pot = checked_log2(c.qa.scale, la);
    const bool b_pot = checked_log2(c.qb.scale, lb);
    const bool o_pot = checked_log2(c.qout.scale, lo);
    if (a_pot && b_pot && o_pot) {
      const int ea = la - lo;
      const int eb = lb - lo;
      if (!((ea == 0 || eb == 0) && ea <= 0 && eb <= 0)) {
        p.refused = "power-of-two shifts";
        return p;
      }
      p.power_of_two = true;
      p.shift_a = -ea;
      p.shift_b = -eb;
      return p;
    }
  }
  const bool i16 = c.dtype == DType::i16;
  p.left = c.op == Op::subtract ? (i16 ? 15 : 20) : (i16 ? 0 : 7);
  const double s = 2.0 * std::max<double>(c.qa.scale, c.qb.scale);
  p.ma = quantize_multiplier(c.qa.scale / s, c.rounding);
  p.mb = quantize_multiplier(c.qb.scale / s, c.rounding);
  if (c.op == Op::subtract) {
    const double real = s / (std::ldexp(1.0, p.left) * c.qout.scale);
    // QuantizeMultiplier with the rounding of either build decides e > 0 alike.
    const Multiplier m = quantize_multiplier(real, Requantize::double_rounding);
    if (m.e > 0) {
      p.refused = "output multiplier";
      return p;
    }
    p.mout = quantize_multiplier(real, c.rounding);
  } else {
    p.mout = quantize_multiplier(s * s / (std::ldexp(1.0, 2 * p.left) * c.qout.scale), c.rounding);
  }
  return p;
}

// One output element from the stored integers x and y.
inline int64_t element(const Config& c, const Prepared& p, int64_t x, int64_t y) {
  if (p.power_of_two) {
    // sat16(RDBPOT(x, -e_a) - RDBPOT(y, -e_b)), then the activation's clamp;
    // shifts past 62 round every int16 to 0, as 62 does.
    const int64_t d = rdbpot(x, std::min(p.shift_a, 62)) - rdbpot(y, std::min(p.shift_b, 62));
    const int64_t saturated = std::clamp<int64_t>(d, -32768, 32767);
    return std::clamp(saturated, p.bounds.min, p.bounds.max);
  }
  const int64_t ca = mbqm((x - c.qa.zero_point) * (int64_t{1} << p.left), p.ma, c.rounding);
  const int64_t cb = mbqm((y - c.qb.zero_point) * (int64_t{1} << p.left), p.mb, c.rounding);
  const int64_t d = ca - cb;
  const int64_t scaled = mbqm(c.op == Op::subtract ? d : d * d, p.mout, c.rounding);
  return std::clamp(scaled + c.qout.zero_point, p.bounds.min, p.bounds.max);
}

}  // namespace sqdiff_test::quantized_oracle
