// bfloat16 (the top half of a float) as a value type, with exact conversions.
#pragma once

#include <bit>
#include <cstdint>

namespace sqdiff {

namespace detail {

constexpr uint32_t bf16_bits_to_f32_bits(uint16_t b) noexcept {
  return static_cast<uint32_t>(b) << 16;
}

// Round to nearest, ties to even (not the truncation of Highway 1.0.3's
// DemoteTo); overflow gives inf; NaN stays NaN with the quiet bit set.
constexpr uint16_t f32_bits_to_bf16_bits(uint32_t x) noexcept {
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace detail

class bfloat16 {
 public:
  constexpr bfloat16() noexcept = default;
  constexpr explicit bfloat16(float value) noexcept
      : bits_(detail::f32_bits_to_bf16_bits(std::bit_cast<uint32_t>(value))) {}

  static constexpr bfloat16 from_bits(uint16_t bits) noexcept {
    bfloat16 b;
    b.bits_ = bits;
    return b;
  }
  constexpr uint16_t bits() const noexcept { return bits_; }
  constexpr explicit operator float() const noexcept {
    return std::bit_cast<float>(detail::bf16_bits_to_f32_bits(bits_));
  }

  // Bitwise identity (so NaN == NaN and +0 != -0); use float() for IEEE comparison.
  friend constexpr bool operator==(bfloat16, bfloat16) noexcept = default;

 private:
  uint16_t bits_ = 0;
};

static_assert(sizeof(bfloat16) == 2);

}  // namespace sqdiff
