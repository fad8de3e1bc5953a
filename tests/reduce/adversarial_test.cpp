// The reductions on values chosen to break them (SPEC section 7), checked bit
// for bit against the GMP oracle and, where the answer is known by
// construction, against that answer too:
//  - sums built to lie exactly on a rounding midpoint of the output type, or
//    a hair (far below any fast accumulation's error bound) above or below
//    it: normal midpoints whose lower neighbour is even or odd, the midpoint
//    below the smallest subnormal, and the one between the largest finite
//    value and infinity; for every float input type and float output type,
//    sums and means (over 2^k elements), as one long row, as rows of a
//    matrix and as its columns, so that they run through the fast paths
//    (the rows alone on every compiled SIMD target);
//  - huge and tiny magnitudes together, f16 squares beyond f16, subnormals,
//    NaN and infinities at random places, -0;
//  - integer extremes (u64 max vs 0, i64 min vs max), sums exactly at the
//    top of i64 / u64 and one past it (Error, nothing written).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "reduce/fast_squares.hpp"
#include "reduce/gmp_oracle.hpp"
#include "reduce/reduce_test_support.hpp"

namespace {

namespace gmp = sqdiff_test::gmp;
using namespace sqdiff_test::reduce;

mpz_class pow2(long e) { return mpz_class(1) << static_cast<mp_bitcnt_t>(e); }

// The bits of 2^k in type t (k within its range; integers: k >= 0).
uint64_t power_of_two_bits(DType t, long k) {
  if (!gmp::is_float(t)) return uint64_t{1} << k;
  const gmp::FloatFormat f = gmp::format_of(t);
  if (k >= f.min_exponent()) return static_cast<uint64_t>(k + f.bias) << (f.precision - 1);
  return uint64_t{1} << (k - f.smallest_step());
}

// The largest k for which 2^k is a value of t whose square is an ordinary
// term (for f64 below the square limit of SPEC 7).
long largest_power(DType t) {
  switch (t) {
    case DType::f16: return 15;
    case DType::bf16:
    case DType::f32: return 127;
    case DType::f64: return 511;
    default: return static_cast<long>(gmp::size_of(t)) * 8 - (gmp::is_signed_integer(t) ? 2 : 1);
  }
}
long smallest_power(DType t) { return gmp::is_float(t) ? gmp::format_of(t).smallest_step() : 0; }

// Pairs (a, b) as bits.
struct Pairs {
  std::vector<uint64_t> a, b;
};

// Pairs whose squared differences sum exactly to `target` * 2^-scale2 (scale2
// = 2 scale(t)): each set bit 2^e is (2^(e/2))^2, or twice (2^((e-1)/2))^2
// for odd e, or copies of the largest square above that. False when some
// bit cannot be made (or needs more than `cap` terms).
bool add_square_terms(DType t, const mpz_class& target, std::mt19937_64& rng, Pairs& out, std::size_t cap) {
  const long scale2 = 2L * gmp::scale_of(t);
  const std::size_t bits = mpz_sizeinbase(target.get_mpz_t(), 2);
  const uint64_t sign = gmp::is_float(t) ? uint64_t{1} << (gmp::format_of(t).width - 1) : 0;
  for (std::size_t j = 0; j < bits; ++j) {
    if (mpz_tstbit(target.get_mpz_t(), j) == 0) continue;
    const long e = static_cast<long>(j) - scale2;
    long k = e >= 0 ? e / 2 : -((-e + 1) / 2);  // floor(e / 2)
    std::size_t copies = (e - 2 * k) == 1 ? 2 : 1;
    while (k > largest_power(t)) {
      --k;
      copies *= 4;
      if (copies > cap) return false;
    }
    if (k < smallest_power(t)) return false;
    const uint64_t d = power_of_two_bits(t, k);
    for (std::size_t c = 0; c < copies; ++c) {
      // d - 0, -d - 0, 0 - d or -0 - -d: every sign arrangement squares to d^2.
      switch (gmp::is_float(t) ? rng() % 4 : 0) {
        case 0: out.a.push_back(d); out.b.push_back(0); break;
        case 1: out.a.push_back(d | sign); out.b.push_back(0); break;
        case 2: out.a.push_back(0); out.b.push_back(d); break;
        default: out.a.push_back(sign); out.b.push_back(d | sign); break;
      }
    }
    if (out.a.size() > cap) return false;
  }
  return true;
}

// Pads to n pairs with equal values (terms of 0) and shuffles.
void pad_and_shuffle(DType t, Pairs& p, std::size_t n, std::mt19937_64& rng) {
  ValueMix ordinary;
  ordinary.extremes = 0;
  while (p.a.size() < n) {
    const uint64_t x = random_bits(t, rng, ordinary);
    p.a.push_back(x);
    p.b.push_back(x);
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  Pairs shuffled;
  for (std::size_t i : order) {
    shuffled.a.push_back(p.a[i]);
    shuffled.b.push_back(p.b[i]);
  }
  p = shuffled;
}

// A rounding midpoint (2K + 1) 2^(q - 1) of a float output type: between
// K 2^q and (K + 1) 2^q.
struct Midpoint {
  const char* name;
  long q;
  mpz_class k;
};

std::vector<Midpoint> midpoints(DType out) {
  const gmp::FloatFormat f = gmp::format_of(out);
  const long p = f.precision;
  return {
      {"at 1, lower even", 1 - p, pow2(p - 1)},
      {"at 1, lower odd", 1 - p, pow2(p - 1) + 1},
      {"at 2^(p+1), lower even", 2, pow2(p - 1)},  // whole numbers: integer inputs reach these
      {"at 2^(p+1), lower odd", 2, pow2(p - 1) + 1},
      {"half the smallest subnormal", f.smallest_step(), 0},
      {"between the smallest subnormals", f.smallest_step(), 1},
      {"between the largest finite and infinity", f.bias - p + 1, pow2(p) - 1},
  };
}

// `hair` -1, 0 or +1: the exact value is the midpoint, or 2^hair_exponent
// below or above it.
struct Construction {
  Pairs pairs;
  uint64_t expected = 0;  // the bits by construction
  std::string what;
};

// One construction for input t, output o, midpoint m, hair sign; a mean
// over n (a power of two) or a sum of n terms. False when the input type
// cannot make this sum.
bool construct(DType t, DType o, const Midpoint& m, int hair, bool mean, std::size_t n, std::mt19937_64& rng,
               Construction& c) {
  const long scale2 = 2L * gmp::scale_of(t);
  const long log2n = mean ? static_cast<long>(std::countr_zero(n)) : 0;
  // The hair: the lowest square the input has, but not more than 300 bits
  // below the midpoint (a run of ones that long is plenty and stays cheap).
  const long hair_exponent = std::max(-scale2, m.q - 1 - 300);
  if (hair_exponent >= m.q - 1) return false;
  if (m.q - 1 + scale2 < 0) return false;
  mpz_class target = (2 * m.k + 1) << static_cast<mp_bitcnt_t>(m.q - 1 + scale2);
  if (hair != 0) {
    const mpz_class h = pow2(hair_exponent + scale2);
    target += hair > 0 ? h : mpz_class(-h);
  }
  target <<= static_cast<mp_bitcnt_t>(log2n);
  c.pairs = {};
  if (!add_square_terms(t, target, rng, c.pairs, n)) return false;
  pad_and_shuffle(t, c.pairs, n, rng);
  // Expected: K 2^q below, (K + 1) 2^q above, the even one of them on the tie.
  const bool up = hair > 0 || (hair == 0 && mpz_odd_p(m.k.get_mpz_t()));
  const mpz_class neighbour = up ? mpz_class(m.k + 1) : m.k;
  c.expected = sgn(neighbour) == 0 ? 0
               : m.q >= 0           ? gmp::round_to_float(neighbour << static_cast<mp_bitcnt_t>(m.q), 1, o)
                                    : gmp::round_to_float(neighbour, pow2(-m.q), o);
  c.what = std::string(sqdiff::dtype_name(t)) + " -> " + std::string(sqdiff::dtype_name(o)) + ", " + m.name +
           (hair > 0 ? ", a hair above" : hair < 0 ? ", a hair below" : ", exactly on it") + (mean ? ", mean of " : ", sum of ") +
           std::to_string(n) + " (hair 2^" + std::to_string(hair_exponent) + ")";
  return true;
}

Array dense_from_bits(DType t, const Shape& shape, const std::vector<uint64_t>& bits) {
  Array a{t, shape, dense_layout(shape), std::vector<unsigned char>(bits.size() * gmp::size_of(t))};
  for (std::size_t i = 0; i < bits.size(); ++i) a.set_bits_at(static_cast<int64_t>(i), bits[i]);
  return a;
}

void reduce(const Array& a, const Array& b, Array& out, bool mean, const std::optional<Shape>& axes, int threads) {
  sqdiff::ReduceOptions options;
  options.axes = axes;
  options.threads = threads;
  if (mean) sqdiff::mean_squared_difference(a.view(), b.view(), out.mutable_view(), options);
  else sqdiff::sum_squared_difference(a.view(), b.view(), out.mutable_view(), options);
}

// Checks the constructions as one row each, as the rows of a matrix (last
// axis) and as its columns (first axis).
void check_constructions(DType t, DType o, bool mean, const std::vector<Construction>& cs, std::size_t n) {
  // Each alone, and against the oracle (which must agree with the construction).
  for (const Construction& c : cs) {
    const Array a = dense_from_bits(t, {static_cast<int64_t>(n)}, c.pairs.a);
    const Array b = dense_from_bits(t, {static_cast<int64_t>(n)}, c.pairs.b);
    const gmp::Expected oracle =
        gmp::round_reduction(gmp::exact_reduction(a.input(), b.input(), {}, std::nullopt, false), mean, o)[0];
    ASSERT_EQ(oracle.bits, c.expected) << "the oracle disagrees with the construction: " << c.what;
    for (const int64_t target : targets_to_run()) {  // each target's kernels and bounds
      const TargetGuard guard(target);
      for (const int threads : {1, 2}) {
        Array out = sentinel_array(o, {}, dense_layout({}));
        reduce(a, b, out, mean, std::nullopt, threads);
        EXPECT_TRUE(output_matches(out, {oracle})) << c.what << ", " << threads << " threads, " << target_text(target);
      }
    }
  }
  // Rows of a matrix, and the same matrix transposed (columns).
  const auto rows = static_cast<int64_t>(cs.size());
  std::vector<uint64_t> ra, rb, ca(cs.size() * n), cb(cs.size() * n);
  std::vector<gmp::Expected> expected;
  for (std::size_t r = 0; r < cs.size(); ++r) {
    ra.insert(ra.end(), cs[r].pairs.a.begin(), cs[r].pairs.a.end());
    rb.insert(rb.end(), cs[r].pairs.b.begin(), cs[r].pairs.b.end());
    for (std::size_t i = 0; i < n; ++i) {
      ca[i * cs.size() + r] = cs[r].pairs.a[i];
      cb[i * cs.size() + r] = cs[r].pairs.b[i];
    }
    gmp::Expected e;
    e.bits = cs[r].expected;
    expected.push_back(e);
  }
  const auto len = static_cast<int64_t>(n);
  for (const int threads : {1, 2}) {
    Array out = sentinel_array(o, {rows}, dense_layout({rows}));
    reduce(dense_from_bits(t, {rows, len}, ra), dense_from_bits(t, {rows, len}, rb), out, mean, Shape{-1}, threads);
    EXPECT_TRUE(output_matches(out, expected)) << "rows, " << cs[0].what << ", " << threads << " threads";
    Array out_columns = sentinel_array(o, {rows}, dense_layout({rows}));
    reduce(dense_from_bits(t, {len, rows}, ca), dense_from_bits(t, {len, rows}, cb), out_columns, mean, Shape{0}, threads);
    EXPECT_TRUE(output_matches(out_columns, expected)) << "columns, " << cs[0].what << ", " << threads << " threads";
  }
}

class Midpoints : public ::testing::TestWithParam<DType> {};

TEST_P(Midpoints, OnlyTheExactSumRoundsRight) {
  const DType t = GetParam();
  std::mt19937_64 rng(1300 + static_cast<int>(t));
  const auto before = sqdiff::detail::fast_square_counts();
  int made = 0;
  for (const bool mean : {false, true}) {
    for (const DType o : output_types(t, mean)) {
      if (!gmp::is_float(o)) continue;
      for (const Midpoint& m : midpoints(o)) {
        // The shortest array (at least 4096, for the fast paths) that holds
        // the terms of all three: rows of one matrix must be equally long.
        std::size_t n = 0;
        for (const std::size_t len : {4096, 8192, 16384}) {
          bool all = true;
          for (const int hair : {-1, 0, 1}) {
            Construction c;
            all = all && construct(t, o, m, hair, mean, len, rng, c);
          }
          if (all) {
            n = len;
            break;
          }
        }
        if (n == 0) continue;  // this input type cannot reach that midpoint
        std::vector<Construction> cs;
        for (const int hair : {-1, 0, 1}) {
          Construction c;
          ASSERT_TRUE(construct(t, o, m, hair, mean, n, rng, c));
          cs.push_back(c);
        }
        check_constructions(t, o, mean, cs, n);
        made += 3;
      }
    }
  }
  RecordProperty("constructions", made);
  // Float inputs reach most midpoints of every output type (66 to 108 rows);
  // integers those at 2^(p+1) of the wider outputs (6 to 18).
  EXPECT_GE(made, gmp::is_float(t) ? 60 : 6);
  if (gmp::is_float(t)) {
    EXPECT_GT(sqdiff::detail::fast_square_counts().exact, before.exact) << "the exact path never ran";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryInputType, Midpoints,
                         ::testing::Values(DType::f16, DType::bf16, DType::f32, DType::f64, DType::i16, DType::i32,
                                           DType::i64, DType::u16, DType::u32, DType::u64),
                         type_param_name);

// Runs every output type of a long 1-D pair (and its rows view [8, n/8])
// against the oracle.
void check_against_oracle(DType t, const std::vector<uint64_t>& a_bits, const std::vector<uint64_t>& b_bits,
                          const std::string& what) {
  const auto n = static_cast<int64_t>(a_bits.size());
  for (const Shape& shape : {Shape{n}, Shape{8, n / 8}}) {
    if (count_of(shape) != n) continue;
    const Array a = dense_from_bits(t, shape, a_bits), b = dense_from_bits(t, shape, b_bits);
    const std::optional<Shape> axes = shape.size() == 1 ? std::nullopt : std::optional<Shape>(Shape{-1});
    const gmp::ExactReduction exact = gmp::exact_reduction(a.input(), b.input(), {}, axes, false);
    for (const bool mean : {false, true}) {
      for (const DType o : output_types(t, mean)) {
        for (const int threads : {1, 2}) {
          Array out = sentinel_array(o, exact.out_shape, dense_layout(exact.out_shape));
          const std::vector<gmp::Expected> expected = gmp::round_reduction(exact, mean, o);
          const std::string where = what + ", " + text(shape) + " -> " + std::string(sqdiff::dtype_name(o)) +
                                    (mean ? " mean" : " sum") + ", " + std::to_string(threads) + " threads";
          if (any_error(expected)) {
            EXPECT_THROW(reduce(a, b, out, mean, axes, threads), sqdiff::Error) << where;
            EXPECT_TRUE(untouched(out)) << where;
          } else {
            reduce(a, b, out, mean, axes, threads);
            EXPECT_TRUE(output_matches(out, expected)) << where;
          }
        }
      }
    }
  }
}

uint64_t bits_of(DType t, double x) {
  // Only values exact in t are used here; the library's conversions are not needed.
  const gmp::FloatFormat f = gmp::format_of(t);
  if (t == DType::f64) return std::bit_cast<uint64_t>(x);
  const auto single = std::bit_cast<uint32_t>(static_cast<float>(x));
  if (t == DType::f32) return single;
  if (t == DType::bf16) return single >> 16;
  // f16 from an exact f32: rebuild the fields.
  const uint64_t sign = single >> 31;
  if (x == 0) return sign << 15;
  int e = 0;
  const double m = std::frexp(std::fabs(x), &e);  // x = m 2^e, m in [0.5, 1)
  const long exponent = e - 1;
  if (exponent < f.min_exponent()) {
    return (sign << 15) | static_cast<uint64_t>(std::ldexp(std::fabs(x), -f.smallest_step()));
  }
  return (sign << 15) | (static_cast<uint64_t>(exponent + f.bias) << 10) |
         (static_cast<uint64_t>(std::ldexp(m * 2 - 1, 10)));
}

TEST(Adversarial, HugeAndTinyTogether) {
  std::mt19937_64 rng(31);
  for (const DType t : kFloatTypes) {
    const gmp::FloatFormat f = gmp::format_of(t);
    // Near the top of the type (for f64 near 2^500: squares beyond f64 are
    // +inf by rule, which would hide every other term).
    const uint64_t top_field = t == DType::f64 ? 1023 + 500 : static_cast<uint64_t>(f.max_field() - 1);
    const uint64_t largest = (top_field << (f.precision - 1)) | ((uint64_t{1} << (f.precision - 1)) - 1);
    std::vector<uint64_t> a, b;
    for (int i = 0; i < 8192; ++i) {
      switch (rng() % 6) {
        case 0: a.push_back(1 + rng() % 8); break;                                          // subnormals
        case 1: a.push_back(largest - rng() % 8); break;                                    // near the top
        case 2: a.push_back((uint64_t{1} << (f.precision - 1)) | (rng() % 16)); break;      // the smallest normals
        default: a.push_back(random_bits(t, rng, ValueMix{})); break;
      }
      b.push_back(rng() % 3 == 0 ? random_bits(t, rng, ValueMix{}) : 0);
    }
    check_against_oracle(t, a, b, "huge and tiny, " + std::string(sqdiff::dtype_name(t)));
    // Tiny only: subnormal differences whose squares lie far below the type.
    for (auto& x : a) x = 1 + rng() % 64;
    for (auto& x : b) x = rng() % 2 == 0 ? 0 : 1 + rng() % 64;
    check_against_oracle(t, a, b, "subnormals, " + std::string(sqdiff::dtype_name(t)));
  }
}

TEST(Adversarial, HalfSquaresBeyondHalf) {
  // (300 - -300)^2 = 360000 > 65504 in one of every 8 terms: the f16 sum is
  // inf, the f16 mean 45000 rounds to 44992, f32 and f64 are exact.
  std::vector<uint64_t> a(4096, bits_of(DType::f16, 0)), b(4096, bits_of(DType::f16, 0));
  for (std::size_t i = 0; i < a.size(); i += 8) {
    a[i] = bits_of(DType::f16, 300);
    b[i] = bits_of(DType::f16, -300);
  }
  const Array va = dense_from_bits(DType::f16, {4096}, a), vb = dense_from_bits(DType::f16, {4096}, b);
  Array out = sentinel_array(DType::f16, {}, dense_layout({}));
  reduce(va, vb, out, true, std::nullopt, 1);
  EXPECT_EQ(out.bits_at(0), bits_of(DType::f16, 44992));
  reduce(va, vb, out, false, std::nullopt, 1);
  EXPECT_EQ(out.bits_at(0), 0x7C00u);
  check_against_oracle(DType::f16, a, b, "f16 squares beyond f16");
}

TEST(Adversarial, SpecialsAnywhere) {
  std::mt19937_64 rng(41);
  for (const DType t : kFloatTypes) {
    const uint64_t inf = gmp::infinity_bits(t, false), minus_inf = gmp::infinity_bits(t, true), nan = gmp::nan_bits(t);
    const uint64_t negative_zero = gmp::zero_bits(t, true);
    ValueMix ordinary;
    std::vector<uint64_t> a(4096), b(4096);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = random_bits(t, rng, ordinary);
      b[i] = random_bits(t, rng, ordinary);
    }
    const std::string name(sqdiff::dtype_name(t));
    const auto with = [&](std::size_t at, uint64_t x, uint64_t y, const std::string& what) {
      std::vector<uint64_t> ma = a, mb = b;
      ma[at] = x;
      mb[at] = y;
      check_against_oracle(t, ma, mb, what + " at " + std::to_string(at) + ", " + name);
    };
    with(rng() % 4096, nan, 0, "NaN");
    with(rng() % 4096, inf, inf, "inf - inf");
    with(rng() % 4096, inf, minus_inf, "inf - -inf");
    with(4095, minus_inf, 0, "-inf last");
    with(0, 0, inf, "inf first");
    // -0 against +0 everywhere: +0, never -0.
    check_against_oracle(t, std::vector<uint64_t>(4096, negative_zero), std::vector<uint64_t>(4096, 0), "-0 - +0, " + name);
  }
}

TEST(Adversarial, IntegerExtremes) {
  const uint64_t u64_max = std::numeric_limits<uint64_t>::max();
  const auto i64_bits = [](int64_t v) { return static_cast<uint64_t>(v); };
  // u64 max vs 0 and i64 min vs max: squares of 2^64 - 1, beyond u64/i64 but
  // fine in f64 ((2^64 - 1)^2 rounds to 2^128).
  check_against_oracle(DType::u64, {u64_max, 0, 0, 0, 0, 0, 0, 0}, std::vector<uint64_t>(8, 0), "u64 max - 0");
  check_against_oracle(DType::i64, std::vector<uint64_t>(8, i64_bits(std::numeric_limits<int64_t>::min())),
                       std::vector<uint64_t>(8, i64_bits(std::numeric_limits<int64_t>::max())), "i64 min - max");
  const Array a = dense_from_bits(DType::u64, {1}, {u64_max}), b = dense_from_bits(DType::u64, {1}, {0});
  Array out = sentinel_array(DType::f64, {}, dense_layout({}));
  reduce(a, b, out, false, std::nullopt, 1);
  EXPECT_EQ(out.bits_at(0), 0x47F0000000000000u);
  // Every narrow type at its extremes, long enough for the wide sums.
  std::mt19937_64 rng(43);
  for (const DType t : {DType::i8, DType::i16, DType::i32, DType::u8, DType::u16, DType::u32}) {
    ValueMix extremes;
    extremes.full_range_integers = true;
    std::vector<uint64_t> x(65536), y(65536);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = random_bits(t, rng, extremes);
      y[i] = random_bits(t, rng, extremes);
    }
    check_against_oracle(t, x, y, "extremes of " + std::string(sqdiff::dtype_name(t)));
  }
}

// Squares summing exactly to 2^63 - 1 (i64) or 2^64 - 1 (u64): they fit; one
// more 1^2 does not, and nothing is written, even to the outputs that fit.
TEST(Adversarial, IntegerSumsAtTheTopOfTheirType) {
  std::mt19937_64 rng(47);
  for (const DType t : {DType::i64, DType::u64}) {
    const mpz_class top = t == DType::i64 ? pow2(63) - 1 : pow2(64) - 1;
    Pairs p;
    ASSERT_TRUE(add_square_terms(t, top, rng, p, 4096));
    pad_and_shuffle(t, p, 4096, rng);
    const DType out_type = t == DType::i64 ? DType::i64 : DType::u64;
    Array out = sentinel_array(out_type, {}, dense_layout({}));
    reduce(dense_from_bits(t, {4096}, p.a), dense_from_bits(t, {4096}, p.b), out, false, std::nullopt, 2);
    EXPECT_EQ(out.bits_at(0), mpz_get_ui(top.get_mpz_t())) << sqdiff::dtype_name(t);
    // One more 1^2, in the last of 4 rows: an Error, and no row written.
    std::vector<uint64_t> a(4 * 4096), b(4 * 4096);
    for (std::size_t r = 0; r < 4; ++r) {
      for (std::size_t i = 0; i < 4096; ++i) {
        a[r * 4096 + i] = p.a[i];
        b[r * 4096 + i] = p.b[i];
      }
    }
    for (std::size_t i = 3 * 4096; i < a.size(); ++i) {
      if (a[i] == b[i]) {  // a zero term: make it 1^2
        a[i] = b[i] + 1;
        break;
      }
    }
    for (const int threads : {1, 2, 3}) {
      Array rows = sentinel_array(out_type, {4}, dense_layout({4}));
      EXPECT_THROW(reduce(dense_from_bits(t, {4, 4096}, a), dense_from_bits(t, {4, 4096}, b), rows, false, Shape{1}, threads),
                   sqdiff::Error);
      EXPECT_TRUE(untouched(rows)) << sqdiff::dtype_name(t) << ", " << threads << " threads";
    }
    check_against_oracle(t, a, b, "one past the top of " + std::string(sqdiff::dtype_name(out_type)));
  }
}

// An empty broadcast shape reduced to a non-empty output: sums of 0, means
// NaN, and nothing read (the inputs' data pointers are null).
TEST(Adversarial, EmptyReductionsReadNothing) {
  for (const DType t : kAllTypes) {
    for (const bool mean : {false, true}) {
      for (const DType o : output_types(t, mean)) {
        Array out = sentinel_array(o, {3}, dense_layout({3}));
        sqdiff::ReduceOptions options;
        options.axes = Shape{1, 2};
        const sqdiff::ConstTensorView a{nullptr, t, {3, 0, 4}, {5, 7, 1}}, b{nullptr, t, {3, 0, 4}};
        if (mean) sqdiff::mean_squared_difference(a, b, out.mutable_view(), options);
        else sqdiff::sum_squared_difference(a, b, out.mutable_view(), options);
        gmp::Expected e;
        e.nan = mean;
        e.bits = mean ? gmp::nan_bits(o) : 0;
        EXPECT_TRUE(output_matches(out, {e, e, e})) << sqdiff::dtype_name(t) << " -> " << sqdiff::dtype_name(o);
      }
    }
  }
}

}  // namespace
