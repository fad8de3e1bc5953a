// The GMP oracle of gmp_oracle.hpp against values worked out by hand: its
// decoding of every type's bits, its rounding (ties to even at midpoints,
// subnormals, the overflow threshold of each format), and small reductions
// and gradients whose exact values are known. The other tests trust the oracle
// only because these pass.
#include "reduce/gmp_oracle.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

namespace gmp = sqdiff_test::gmp;
using sqdiff::Broadcast;
using sqdiff::BroadcastKind;
using sqdiff::DType;
using sqdiff::Shape;

mpz_class pow2(int e) { return mpz_class(1) << static_cast<mp_bitcnt_t>(e); }

// The bits of the exact value num / 2^den_exponent rounded into t.
uint64_t rounded(const mpz_class& num, int den_exponent, DType t) { return gmp::round_to_float(num, pow2(den_exponent), t); }

TEST(GmpOracle, DecodesEveryTypeFromItsBits) {
  gmp::Element e;
  const uint16_t f16_one = 0x3C00;
  gmp::decode(DType::f16, &f16_one, e);
  EXPECT_EQ(e.kind, gmp::Kind::finite);
  EXPECT_EQ(e.value, pow2(24));  // 1 at the scale 2^-24
  const uint16_t f16_smallest = 0x0001;
  gmp::decode(DType::f16, &f16_smallest, e);
  EXPECT_EQ(e.value, 1);
  const uint16_t f16_minus_max = 0xFBFF;  // -65504
  gmp::decode(DType::f16, &f16_minus_max, e);
  EXPECT_EQ(e.value, mpz_class(-65504) * pow2(24));
  const uint16_t bf16_negative_zero = 0x8000;
  gmp::decode(DType::bf16, &bf16_negative_zero, e);
  EXPECT_TRUE(e.sign);
  EXPECT_EQ(e.value, 0);
  const uint16_t bf16_three = 0x4040;
  gmp::decode(DType::bf16, &bf16_three, e);
  EXPECT_EQ(e.value, 3 * pow2(133));
  const uint32_t f32_nan = 0x7FC00001;
  gmp::decode(DType::f32, &f32_nan, e);
  EXPECT_EQ(e.kind, gmp::Kind::nan);
  const uint32_t f32_smallest_normal = 0x00800000;
  gmp::decode(DType::f32, &f32_smallest_normal, e);
  EXPECT_EQ(e.value, pow2(23));  // 2^-126 at the scale 2^-149
  const uint64_t f64_minus_inf = 0xFFF0000000000000;
  gmp::decode(DType::f64, &f64_minus_inf, e);
  EXPECT_EQ(e.kind, gmp::Kind::negative_infinity);
  const double f64_half = 0.5;
  gmp::decode(DType::f64, &f64_half, e);
  EXPECT_EQ(e.value, pow2(1073));
  const uint8_t i8_min = 0x80;
  gmp::decode(DType::i8, &i8_min, e);
  EXPECT_EQ(e.value, -128);
  const uint16_t i16_minus_one = 0xFFFF;
  gmp::decode(DType::i16, &i16_minus_one, e);
  EXPECT_EQ(e.value, -1);
  const int64_t i64_min = std::numeric_limits<int64_t>::min();
  gmp::decode(DType::i64, &i64_min, e);
  EXPECT_EQ(e.value, -pow2(63));
  const uint64_t u64_max = std::numeric_limits<uint64_t>::max();
  gmp::decode(DType::u64, &u64_max, e);
  EXPECT_EQ(e.value, pow2(64) - 1);
}

TEST(GmpOracle, RoundsHalfPrecisionTiesToEven) {
  EXPECT_EQ(rounded(pow2(11) + 1, 11, DType::f16), 0x3C00u);                  // 1 + 2^-11: tie, down to even
  EXPECT_EQ(rounded(pow2(11) + 3, 11, DType::f16), 0x3C02u);                  // 1 + 3 2^-11: tie, up to even
  EXPECT_EQ(rounded(pow2(40) + pow2(29) + 1, 40, DType::f16), 0x3C01u);       // a hair above the tie
  EXPECT_EQ(rounded(pow2(40) + pow2(29) - 1, 40, DType::f16), 0x3C00u);       // a hair below it
  EXPECT_EQ(rounded(1, 0, DType::f16), 0x3C00u);
  EXPECT_EQ(gmp::round_to_float(1, 3, DType::f16), 0x3555u);                  // 1/3
  EXPECT_EQ(gmp::round_to_float(-1, 3, DType::f16), 0xB555u);
  EXPECT_EQ(rounded(65504, 0, DType::f16), 0x7BFFu);                          // the largest f16
  EXPECT_EQ(rounded(65519, 0, DType::f16), 0x7BFFu);
  EXPECT_EQ(rounded(65520, 0, DType::f16), 0x7C00u);                          // its midpoint with 2^16: inf
  EXPECT_EQ(rounded(-65520, 0, DType::f16), 0xFC00u);
  EXPECT_EQ(rounded(1, 24, DType::f16), 0x0001u);                             // the smallest subnormal
  EXPECT_EQ(rounded(1, 25, DType::f16), 0x0000u);                             // half of it: tie to 0
  EXPECT_EQ(rounded(3, 26, DType::f16), 0x0001u);                             // 0.75 of it
  EXPECT_EQ(rounded(3, 25, DType::f16), 0x0002u);                             // 1.5: tie, to 2
  EXPECT_EQ(rounded(5, 25, DType::f16), 0x0002u);                             // 2.5: tie, to 2
  EXPECT_EQ(rounded(pow2(11) - 1, 25, DType::f16), 0x0400u);                  // 2^-14 - 2^-25: tie, up to normal
  EXPECT_EQ(rounded(1, 14, DType::f16), 0x0400u);
  EXPECT_EQ(gmp::round_to_float(60000, 1, DType::f16), 0x7B53u);
}

TEST(GmpOracle, RoundsBFloat16AndFloat) {
  EXPECT_EQ(gmp::round_to_float(1, 3, DType::bf16), 0x3EABu);
  EXPECT_EQ(rounded(1, 0, DType::bf16), 0x3F80u);
  EXPECT_EQ(rounded(1, 133, DType::bf16), 0x0001u);
  EXPECT_EQ(rounded((pow2(8) - 1) * pow2(120), 0, DType::bf16), 0x7F7Fu);   // the largest bf16
  EXPECT_EQ(rounded((pow2(9) - 1) * pow2(119), 0, DType::bf16), 0x7F80u);   // its midpoint with 2^128: inf
  EXPECT_EQ(rounded((pow2(9) - 1) * pow2(119) - 1, 0, DType::bf16), 0x7F7Fu);
  EXPECT_EQ(gmp::round_to_float(1, 3, DType::f32), 0x3EAAAAABu);
  EXPECT_EQ(gmp::round_to_float(2, 3, DType::f32), 0x3F2AAAABu);
  EXPECT_EQ(gmp::round_to_float(1, 10, DType::f32), 0x3DCCCCCDu);
  EXPECT_EQ(gmp::round_to_float(14, 3, DType::f32), 0x40955555u);
  EXPECT_EQ(rounded(1, 149, DType::f32), 0x00000001u);
  EXPECT_EQ(rounded(1, 150, DType::f32), 0x00000000u);
  EXPECT_EQ(rounded(pow2(60) + 1, 210, DType::f32), 0x00000001u);          // a hair above half the smallest
  EXPECT_EQ(rounded(pow2(24) + 1, 24, DType::f32), 0x3F800000u);           // 1 + 2^-24: tie, down
  EXPECT_EQ(rounded(pow2(24) + 3, 24, DType::f32), 0x3F800002u);           // 1 + 3 2^-24: tie, up
}

TEST(GmpOracle, RoundsDouble) {
  EXPECT_EQ(gmp::round_to_float(1, 3, DType::f64), 0x3FD5555555555555u);
  EXPECT_EQ(gmp::round_to_float(-1, 3, DType::f64), 0xBFD5555555555555u);
  EXPECT_EQ(gmp::round_to_float(1, 10, DType::f64), 0x3FB999999999999Au);
  EXPECT_EQ(rounded(1, 1074, DType::f64), 1u);
  EXPECT_EQ(rounded(1, 1075, DType::f64), 0u);
  EXPECT_EQ(rounded(pow2(125) + 1, 1200, DType::f64), 1u);
  EXPECT_EQ(rounded(pow2(53) + 1, 53, DType::f64), 0x3FF0000000000000u);
  EXPECT_EQ(rounded(pow2(53) + 3, 53, DType::f64), 0x3FF0000000000002u);
  EXPECT_EQ(rounded(pow2(128), 0, DType::f64), 0x47F0000000000000u);
  EXPECT_EQ(rounded(pow2(128) - pow2(65) + 1, 0, DType::f64), 0x47F0000000000000u);  // (2^64 - 1)^2
  const mpz_class overflow = pow2(1024) - pow2(970);
  EXPECT_EQ(rounded(overflow, 0, DType::f64), 0x7FF0000000000000u);
  EXPECT_EQ(rounded(overflow * 1024 - 1, 10, DType::f64), 0x7FEFFFFFFFFFFFFFu);
  EXPECT_EQ(rounded(-overflow, 0, DType::f64), 0xFFF0000000000000u);
}

// A dense array of doubles as f64 input.
gmp::Input f64_input(const std::vector<double>& v, Shape shape) { return {DType::f64, v.data(), std::move(shape)}; }

uint64_t only(const std::vector<gmp::Expected>& e) {
  EXPECT_EQ(e.size(), 1u);
  EXPECT_FALSE(e[0].error);
  return e[0].bits;
}

TEST(GmpOracle, ReductionsOfKnownValues) {
  const std::vector<float> a{1, 2, 3}, zeros{0, 0, 0};
  const auto r = gmp::exact_reduction({DType::f32, a.data(), {3}}, {DType::f32, zeros.data(), {3}}, {}, std::nullopt, false);
  EXPECT_EQ(r.count, 3);
  EXPECT_EQ(only(gmp::round_reduction(r, false, DType::f32)), 0x41600000u);  // 14
  EXPECT_EQ(only(gmp::round_reduction(r, true, DType::f32)), 0x40955555u);   // 14/3
  EXPECT_EQ(only(gmp::round_reduction(r, true, DType::f64)), 0x4012AAAAAAAAAAABu);
  // f16 squares beyond f16: (256 - 0)^2 = 65536, the mean 32768 fits.
  const std::vector<uint16_t> h{0x5C00, 0x0000}, hz{0x0000, 0x0000};  // 256, 0
  const auto rh = gmp::exact_reduction({DType::f16, h.data(), {2}}, {DType::f16, hz.data(), {2}}, {}, std::nullopt, false);
  EXPECT_EQ(only(gmp::round_reduction(rh, true, DType::f16)), 0x7800u);
  EXPECT_EQ(only(gmp::round_reduction(rh, false, DType::f16)), 0x7C00u);
  EXPECT_EQ(only(gmp::round_reduction(rh, false, DType::f32)), 0x47800000u);
  // Per-row sums with keepdims, numpy broadcasting of a row vector.
  const std::vector<int32_t> m{1, 2, 3, 4, 5, 6}, row{1, 1, 1};
  const auto rm = gmp::exact_reduction({DType::i32, m.data(), {2, 3}}, {DType::i32, row.data(), {3}}, {}, Shape{-1}, true);
  EXPECT_EQ(rm.out_shape, (Shape{2, 1}));
  const auto em = gmp::round_reduction(rm, false, DType::i64);
  EXPECT_EQ(em[0].bits, 5u);   // 0 + 1 + 4
  EXPECT_EQ(em[1].bits, 50u);  // 9 + 16 + 25
  // pdpd: b [2] aligned with a's dim 0 of [2,3].
  const std::vector<int32_t> col{1, 4};
  const auto rp = gmp::exact_reduction({DType::i32, m.data(), {2, 3}}, {DType::i32, col.data(), {2}},
                                       Broadcast{BroadcastKind::pdpd, 0}, Shape{0}, false);
  const auto ep = gmp::round_reduction(rp, false, DType::i64);
  ASSERT_EQ(ep.size(), 3u);
  EXPECT_EQ(ep[0].bits, 0u + 0u);  // (1-1)^2 + (4-4)^2
  EXPECT_EQ(ep[1].bits, 1u + 1u);
  EXPECT_EQ(ep[2].bits, 4u + 4u);
  // Strided input: every other element, reversed.
  const std::vector<double> s{9, 1, 8, 2, 7, 3};
  const std::vector<double> zero{0};
  const auto rs = gmp::exact_reduction({DType::f64, s.data() + 5, {3}, {-2}}, f64_input(zero, {1}), {}, Shape{0}, false);
  EXPECT_EQ(only(gmp::round_reduction(rs, false, DType::f64)), 0x402C000000000000u);  // 9 + 4 + 1 = 14
}

TEST(GmpOracle, IntegerExtremesAndOverflow) {
  const std::vector<uint64_t> big{std::numeric_limits<uint64_t>::max()}, nothing{0};
  const auto r = gmp::exact_reduction({DType::u64, big.data(), {1}}, {DType::u64, nothing.data(), {1}}, {}, std::nullopt, false);
  EXPECT_TRUE(gmp::round_reduction(r, false, DType::u64)[0].error);
  EXPECT_EQ(only(gmp::round_reduction(r, false, DType::f64)), 0x47F0000000000000u);  // (2^64 - 1)^2 rounds to 2^128
  const std::vector<int64_t> lo{std::numeric_limits<int64_t>::min()}, hi{std::numeric_limits<int64_t>::max()};
  const auto ri = gmp::exact_reduction({DType::i64, lo.data(), {1}}, {DType::i64, hi.data(), {1}}, {}, std::nullopt, false);
  EXPECT_TRUE(gmp::round_reduction(ri, false, DType::i64)[0].error);
  EXPECT_EQ(only(gmp::round_reduction(ri, true, DType::f64)), 0x47F0000000000000u);
  // 3037000499^2 = 9223372030926249001 fits i64; twice it does not.
  const std::vector<int64_t> fits{3037000499}, twice{3037000499, 3037000499}, zeros{0, 0};
  const auto rf = gmp::exact_reduction({DType::i64, fits.data(), {1}}, {DType::i64, zeros.data(), {1}}, {}, std::nullopt, false);
  EXPECT_EQ(only(gmp::round_reduction(rf, false, DType::i64)), 9223372030926249001u);
  const auto rt = gmp::exact_reduction({DType::i64, twice.data(), {2}}, {DType::i64, zeros.data(), {2}}, {}, std::nullopt, false);
  EXPECT_TRUE(gmp::round_reduction(rt, false, DType::i64)[0].error);
  // ... but fits u64 when the inputs are unsigned.
  const std::vector<uint64_t> utwice{3037000499, 3037000499}, uzeros{0, 0};
  const auto ru = gmp::exact_reduction({DType::u64, utwice.data(), {2}}, {DType::u64, uzeros.data(), {2}}, {}, std::nullopt, false);
  EXPECT_EQ(only(gmp::round_reduction(ru, false, DType::u64)), 2u * 9223372030926249001u);
}

TEST(GmpOracle, SpecialsEmptyAndZeros) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const auto one = [](std::vector<double> a, std::vector<double> b, bool mean) {
    const Shape shape{static_cast<int64_t>(a.size())};
    const auto r = gmp::exact_reduction(f64_input(a, shape), f64_input(b, shape), {}, std::nullopt, false);
    return gmp::round_reduction(r, mean, DType::f64)[0];
  };
  EXPECT_TRUE(one({nan, 1}, {0, 0}, false).nan);
  EXPECT_TRUE(one({inf, 1}, {inf, 0}, false).nan);                           // inf - inf
  EXPECT_TRUE(one({inf, nan}, {0, 0}, false).nan);                           // NaN wins over inf
  EXPECT_EQ(one({inf, 1}, {-inf, 0}, false).bits, 0x7FF0000000000000u);     // inf - -inf
  EXPECT_EQ(one({-inf}, {5}, true).bits, 0x7FF0000000000000u);
  EXPECT_EQ(one({-0.0}, {0.0}, false).bits, 0u);                            // squares are never -0
  // f64: a single square of at least 2^1024 - 2^970 is +inf even where the
  // mean would fit; (2^512 - 2^459)^2 = 2^1024 - 2^972 + 2^918 is not.
  EXPECT_EQ(one({0x1p512, 0}, {0, 0}, true).bits, 0x7FF0000000000000u);
  const double below = 0x1p512 - 0x1p459;
  EXPECT_EQ(one({below}, {0}, false).bits, 0x7FEFFFFFFFFFFFFEu);
  EXPECT_EQ(one({below, 0}, {0, 0}, true).bits, 0x7FDFFFFFFFFFFFFEu);
  EXPECT_EQ(one({below, below}, {0, 0}, false).bits, 0x7FF0000000000000u);  // the sum overflows
  EXPECT_EQ(one({below, below}, {0, 0}, true).bits, 0x7FEFFFFFFFFFFFFEu);   // its mean does not
  // Over no elements: a sum is +0, a mean NaN.
  const std::vector<double> empty;
  const auto r = gmp::exact_reduction(f64_input(empty, {0}), f64_input(empty, {0}), {}, std::nullopt, false);
  EXPECT_EQ(gmp::round_reduction(r, false, DType::f64)[0].bits, 0u);
  EXPECT_TRUE(gmp::round_reduction(r, true, DType::f64)[0].nan);
  EXPECT_EQ(gmp::round_reduction(r, false, DType::i64)[0].bits, 0u);
}

TEST(GmpOracle, GradientsOfKnownValues) {
  const std::vector<double> a{1, 2}, b{3}, g{1, 1};
  const auto ga = gmp::squared_difference_gradient(f64_input(a, {2}), f64_input(b, {1}), f64_input(g, {2}), {}, 0);
  ASSERT_EQ(ga.size(), 2u);
  EXPECT_EQ(ga[0].bits, std::bit_cast<uint64_t>(-4.0));
  EXPECT_EQ(ga[1].bits, std::bit_cast<uint64_t>(-2.0));
  const auto gb = gmp::squared_difference_gradient(f64_input(a, {2}), f64_input(b, {1}), f64_input(g, {2}), {}, 1);
  EXPECT_EQ(only(gb), std::bit_cast<uint64_t>(6.0));
  // Zeros' signs as IEEE's 2 (a - b) g: a - b is -0 only for -0 - +0.
  const auto grad = [](double x, double y, double z, int which) {
    const std::vector<double> va{x}, vb{y}, vg{z};
    return gmp::squared_difference_gradient(f64_input(va, {}), f64_input(vb, {}), f64_input(vg, {}), {}, which)[0];
  };
  EXPECT_EQ(grad(-0.0, 0.0, 1, 0).bits, std::bit_cast<uint64_t>(-0.0));
  EXPECT_EQ(grad(-0.0, 0.0, 1, 1).bits, 0u);
  EXPECT_EQ(grad(0.0, 0.0, 1, 0).bits, 0u);
  EXPECT_EQ(grad(0.0, 0.0, 1, 1).bits, std::bit_cast<uint64_t>(-0.0));
  EXPECT_EQ(grad(3, 3, -1, 0).bits, std::bit_cast<uint64_t>(-0.0));
  EXPECT_EQ(grad(2, 3, -0.0, 0).bits, 0u);  // (-1) (-0) = +0
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(grad(inf, 1, 0, 0).nan);
  EXPECT_TRUE(grad(2, 2, inf, 0).nan);
  EXPECT_EQ(grad(inf, 1, -1, 0).bits, std::bit_cast<uint64_t>(-inf));
  EXPECT_EQ(grad(inf, 1, -1, 1).bits, std::bit_cast<uint64_t>(inf));
  EXPECT_EQ(grad(1, inf, 2, 0).bits, std::bit_cast<uint64_t>(-inf));
  // Beyond f64 only in the middle: 2 (2^1023 + 2^1023) 2^-3 = 2^1022.
  EXPECT_EQ(grad(0x1p1023, -0x1p1023, 0x1p-3, 0).bits, std::bit_cast<uint64_t>(0x1p1022));
  // f16: 2 (60000 + 60000) / 4 = 60000.
  const std::vector<uint16_t> ha{0x7B53}, hb{0xFB53}, hg{0x3400};
  EXPECT_EQ(gmp::squared_difference_gradient({DType::f16, ha.data(), {}}, {DType::f16, hb.data(), {}},
                                             {DType::f16, hg.data(), {}}, {}, 0)[0].bits,
            0x7B53u);
  // subtract: sum_to(g) and sum_to(-g); -0 only when every term is -0.
  const std::vector<double> gs{1, 2, 3};
  EXPECT_EQ(only(gmp::subtract_gradient(f64_input(gs, {3}), {3}, {1}, {}, 1)), std::bit_cast<uint64_t>(-6.0));
  const std::vector<double> negative_zeros{-0.0, -0.0}, positive_zeros{0.0, 0.0}, mixed{-0.0, 0.0};
  EXPECT_EQ(only(gmp::subtract_gradient(f64_input(negative_zeros, {2}), {2}, {1}, {}, 1)), 0u);
  EXPECT_EQ(only(gmp::subtract_gradient(f64_input(positive_zeros, {2}), {2}, {1}, {}, 1)), std::bit_cast<uint64_t>(-0.0));
  EXPECT_EQ(only(gmp::subtract_gradient(f64_input(negative_zeros, {2}), {1}, {2}, {}, 0)), std::bit_cast<uint64_t>(-0.0));
  EXPECT_EQ(only(gmp::subtract_gradient(f64_input(mixed, {2}), {1}, {2}, {}, 0)), 0u);
}

}  // namespace
