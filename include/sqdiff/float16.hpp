// IEEE 754 binary16 as a value type, with exact conversions to and from float.
#pragma once

#include <bit>
#include <cstdint>

namespace sqdiff {

namespace detail {

// Exact: every binary16 value is a float. A signalling NaN comes back quiet,
// as the F16C instruction does, so SIMD and scalar paths agree bit for bit.
constexpr uint32_t f16_bits_to_f32_bits(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) {
    return sign | 0x7F800000u | (mantissa << 13) | (mantissa != 0 ? 0x00400000u : 0u);
  }
  if (exponent != 0) return sign | ((exponent + 112) << 23) | (mantissa << 13);
  if (mantissa == 0) return sign;
  // Subnormal: shift the leading 1 up to the implicit-bit position.
  uint32_t f32_exponent = 113;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --f32_exponent;
  }
  return sign | (f32_exponent << 23) | ((mantissa & 0x3FFu) << 13);
}

// Round to nearest, ties to even; overflow gives inf; NaN stays NaN (quiet,
// with the top payload bits kept, as F16C's vcvtps2ph does).
constexpr uint16_t f32_bits_to_f16_bits(uint32_t x) noexcept {
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to inf
  if (magnitude >= 0x38800000u) {  // normal in binary16: rebias, then round on bit 13
    const uint32_t rebiased = magnitude - 0x38000000u;
    return static_cast<uint16_t>(sign | ((rebiased + 0xFFFu + ((rebiased >> 13) & 1u)) >> 13));
  }
  if (magnitude <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25 ties to even: 0
  // Subnormal in binary16: count in units of 2^-24 and round the dropped bits.
  const uint32_t exponent = magnitude >> 23;
  const uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - exponent;
  const uint32_t quotient = significand >> shift;
  const uint32_t remainder = significand & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  const uint32_t round_up = (remainder > half || (remainder == half && (quotient & 1u))) ? 1u : 0u;
  return static_cast<uint16_t>(sign | (quotient + round_up));
}

}  // namespace detail

class float16 {
 public:
  constexpr float16() noexcept = default;
  constexpr explicit float16(float value) noexcept
      : bits_(detail::f32_bits_to_f16_bits(std::bit_cast<uint32_t>(value))) {}

  static constexpr float16 from_bits(uint16_t bits) noexcept {
    float16 h;
    h.bits_ = bits;
    return h;
  }
  constexpr uint16_t bits() const noexcept { return bits_; }
  constexpr explicit operator float() const noexcept {
    return std::bit_cast<float>(detail::f16_bits_to_f32_bits(bits_));
  }

  // Bitwise identity (so NaN == NaN and +0 != -0); use float() for IEEE comparison.
  friend constexpr bool operator==(float16, float16) noexcept = default;

 private:
  uint16_t bits_ = 0;
};

static_assert(sizeof(float16) == 2);

}  // namespace sqdiff
