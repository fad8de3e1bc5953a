// Hand-checked examples of SPEC section 9, each worked out in its comment.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "sqdiff/sqdiff.hpp"

namespace {

using sqdiff::Activation;
using sqdiff::DType;
using sqdiff::QuantizedOptions;
using sqdiff::QuantParams;
using sqdiff::Requantize;

template <class T>
constexpr DType dtype_of() {
  return sizeof(T) == 2 ? DType::i16 : std::is_signed_v<T> ? DType::i8 : DType::u8;
}

template <class T>
std::vector<T> subtract(std::vector<T> a, QuantParams qa, std::vector<T> b, QuantParams qb, QuantParams qout,
                        const QuantizedOptions& options = {}) {
  std::vector<T> out(a.size());
  const int64_t n = static_cast<int64_t>(a.size());
  sqdiff::quantized_subtract({a.data(), dtype_of<T>(), {n}}, qa, {b.data(), dtype_of<T>(), {n}}, qb,
                             {out.data(), dtype_of<T>(), {n}}, qout, options);
  return out;
}

template <class T>
std::vector<T> squared_difference(std::vector<T> a, QuantParams qa, std::vector<T> b, QuantParams qb,
                                  QuantParams qout, const QuantizedOptions& options = {}) {
  std::vector<T> out(a.size());
  const int64_t n = static_cast<int64_t>(a.size());
  sqdiff::quantized_squared_difference({a.data(), dtype_of<T>(), {n}}, qa, {b.data(), dtype_of<T>(), {n}}, qb,
                                       {out.data(), dtype_of<T>(), {n}}, qout, options);
  return out;
}

// int8 subtract, scales 0.5, 0.5, 1, zero points 0: a = 10, b = 4.
// s = 2 max = 1; input multiplier 0.5 = frexp (0.5, 0): m = 2^30, e = 0.
// c_a = SRDHM(10 * 2^20, 2^30) = floor((10 * 2^50 + 2^30) / 2^31) = 10 * 2^19; c_b = 4 * 2^19.
// Output multiplier 1 / (2^20 * 1) = frexp (0.5, -19): m = 2^30, e = -19.
// SRDHM(6 * 2^19, 2^30) = 6 * 2^18; RDBPOT(6 * 2^18, 19) = 3. Real: 5 - 2 = 3.
TEST(QuantizedExamples, Int8SubtractExact) {
  EXPECT_EQ(subtract<int8_t>({10}, {0.5f, 0}, {4}, {0.5f, 0}, {1.0f, 0}), std::vector<int8_t>{3});
}

// int8 subtract, scales 1, 1, 2: a = +-3, b = 0: real +-1.5 output steps, a tie.
// c_a = +-3 * 2^19; output multiplier 2 / (2^20 * 2) = 2^-20: m = 2^30, e = -19.
// Double rounding: SRDHM(+-3 * 2^19, 2^30) = +-3 * 2^18 exactly, RDBPOT(., 19) = +-1.5 -> +-2 (away from 0).
// Single rounding: (-3 * 2^19 * 2^30 + 2^49) >> 50 = -2^50 >> 50 = -1 (ties go up); +3 gives 2^51 >> 50 = 2.
TEST(QuantizedExamples, Int8SubtractTieRoundsAwayFromZeroWithDoubleRoundingOnly) {
  EXPECT_EQ(subtract<int8_t>({3, -3}, {1.0f, 0}, {0, 0}, {1.0f, 0}, {2.0f, 0}), (std::vector<int8_t>{2, -2}));
  QuantizedOptions single;
  single.rounding = Requantize::single_rounding;
  EXPECT_EQ(subtract<int8_t>({3, -3}, {1.0f, 0}, {0, 0}, {1.0f, 0}, {2.0f, 0}, single), (std::vector<int8_t>{2, -1}));
}

// uint8 subtract with zero points: a = 200 (zp 128, scale 0.5: 36), b = 10 (zp 0, scale 0.5: 5),
// out scale 1, zp 100: 31 + 100 = 131; the relu6 clamp: bounds [100 + 0, 100 + 6] -> 106.
TEST(QuantizedExamples, Uint8SubtractWithZeroPointsAndRelu6) {
  EXPECT_EQ(subtract<uint8_t>({200}, {0.5f, 128}, {10}, {0.5f, 0}, {1.0f, 100}), std::vector<uint8_t>{131});
  QuantizedOptions relu6;
  relu6.activation = Activation::relu6;
  EXPECT_EQ(subtract<uint8_t>({200}, {0.5f, 128}, {10}, {0.5f, 0}, {1.0f, 100}, relu6), std::vector<uint8_t>{106});
  // relu: at least the zero point. 10 - 200 -> 100 + (5 - 36) = 69 -> 100.
  QuantizedOptions relu;
  relu.activation = Activation::relu;
  EXPECT_EQ(subtract<uint8_t>({10}, {0.5f, 0}, {200}, {0.5f, 128}, {1.0f, 100}, relu), std::vector<uint8_t>{100});
}

// relu_n1_to_1 with out scale 0.01, zp 0: bounds [-100, 100]; 1 - 0 real (100 steps) and 2 - 0 (200 -> 100).
TEST(QuantizedExamples, Int8SubtractReluN1To1) {
  QuantizedOptions options;
  options.activation = Activation::relu_n1_to_1;
  EXPECT_EQ(subtract<int8_t>({1, 2, -2}, {1.0f, 0}, {0, 0, 0}, {1.0f, 0}, {0.01f, 0}, options),
            (std::vector<int8_t>{100, 100, -100}));
}

// int8 squared_difference, scales 0.5, 0.5, 1, out zp -128: a = 6 (3.0), b = 2 (1.0): real 4 -> -124.
// s = 1, input multiplier 0.5 (m = 2^30, e = 0): c_a = SRDHM(6 * 2^7, 2^30) = floor(384 + 1/2) = 384, c_b = 128.
// d = 256, d^2 = 65536. Output multiplier 1 / (2^14 * 1) = frexp (0.5, -13): m = 2^30, e = -13.
// SRDHM(65536, 2^30) = 32768; RDBPOT(32768, 13) = 4; 4 - 128 = -124.
TEST(QuantizedExamples, Int8SquaredDifference) {
  EXPECT_EQ(squared_difference<int8_t>({6, 2}, {0.5f, 0}, {2, 6}, {0.5f, 0}, {1.0f, -128}),
            (std::vector<int8_t>{-124, -124}));
}

// int16 squared_difference (TFLite-Micro): scales 2^-8, 2^-8, 2^-6; a = 512 (2.0), b = 256 (1.0): real 1 -> 64.
// s = 2^-7; c_a = SRDHM(512, 2^30) = 256, c_b = 128; d^2 = 16384; output multiplier 2^-14 / 2^-6 = 2^-8:
// m = 2^30, e = -7; SRDHM(16384, 2^30) = 8192; RDBPOT(8192, 7) = 64.
TEST(QuantizedExamples, Int16SquaredDifference) {
  const float s = std::ldexp(1.0f, -8);
  EXPECT_EQ(squared_difference<int16_t>({512}, {s, 0}, {256}, {s, 0}, {std::ldexp(1.0f, -6), 0}),
            std::vector<int16_t>{64});
}

// An output multiplier of 1 or more: LiteRT aborts, sqdiff computes as TFLite-Micro (a left shift).
// Scales 1, 1, 2^-16: multiplier 4 / (2^14 * 2^-16) = 16 = frexp (0.5, 5): m = 2^30, left shift 5.
// a = b: 0; a = 1, b = 0: c_a = 64, d^2 = 4096, 4096 * 2^5 = 131072, SRDHM(., 2^30) = 65536 -> 127.
TEST(QuantizedExamples, SquaredDifferenceOutputMultiplierAboveOne) {
  EXPECT_EQ(squared_difference<int8_t>({5, 1}, {1.0f, 0}, {5, 0}, {1.0f, 0}, {std::ldexp(1.0f, -16), 0}),
            (std::vector<int8_t>{0, 127}));
}

// int16 subtract, power-of-two scales a 2^-10, b 2^-12, out 2^-10: e_a = 0, e_b = -2 (Sub16).
// b = 6: RDBPOT(6, 2) = 1.5 -> 2, 100 - 2 = 98 (the real 98.5 is not what LiteRT computes);
// b = -6: -2, 102; a = 32767, b = -4 (RDBPOT -1): 32768 saturates to 32767.
// With pot_scale_int16 = false the general path: c = (x 2^15) scaled: 100 - 6/4 = 98.5 -> 99.
TEST(QuantizedExamples, Int16SubtractPowerOfTwoPath) {
  const QuantParams qa{std::ldexp(1.0f, -10), 0};
  const QuantParams qb{std::ldexp(1.0f, -12), 0};
  EXPECT_EQ(subtract<int16_t>({100, 100, 32767}, qa, {6, -6, -4}, qb, qa), (std::vector<int16_t>{98, 102, 32767}));
  QuantizedOptions general;
  general.pot_scale_int16 = false;
  EXPECT_EQ(subtract<int16_t>({100}, qa, {6}, qb, qa, general), std::vector<int16_t>{99});
  // relu6 on the pot path: 6 / 2^-10 = 6144.
  QuantizedOptions relu6;
  relu6.activation = Activation::relu6;
  EXPECT_EQ(subtract<int16_t>({32767, -5}, qa, {0, 0}, qb, qa, relu6), (std::vector<int16_t>{6144, 0}));
}

// In place and broadcast: out is a; b = [1] broadcast. Scales 1, 1, 1, zero points 0:
// c = x 2^19, output multiplier 2 / 2^20 = 2^-19: out = a - b exactly where it fits, clamped elsewhere.
TEST(QuantizedExamples, InPlaceWithBroadcast) {
  std::vector<int8_t> a{5, -128, 127, 0};
  std::vector<int8_t> b{3};
  sqdiff::quantized_subtract({a.data(), DType::i8, {4}}, {1.0f, 0}, {b.data(), DType::i8, {1}}, {1.0f, 0},
                             {a.data(), DType::i8, {4}}, {1.0f, 0});
  EXPECT_EQ(a, (std::vector<int8_t>{2, -128, 124, -3}));
}

}  // namespace
