// <sqdiff/compare.hpp> from a C++ user's side: exact values on every dtype,
// NaN/inf counts and first positions, the tolerance rule against an
// independent oracle of NumPy's isclose, the streamed form in odd chunk sizes
// equal to one call, thread counts bit-identical, and the errors.
#include "sqdiff/compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "sqdiff/bfloat16.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/float16.hpp"
#include "test_support.hpp"

namespace {

using sqdiff::BroadcastKind;
using sqdiff::CompareOptions;
using sqdiff::CompareStats;
using sqdiff::Comparison;
using sqdiff::ConstTensorView;
using sqdiff::DType;
using sqdiff::Shape;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
ConstTensorView view(const std::vector<T>& data, DType dtype, Shape shape) {
  return {data.data(), dtype, std::move(shape)};
}

uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }

// Every field, doubles bit for bit (NaN included).
void expect_same(const CompareStats& x, const CompareStats& y) {
  EXPECT_EQ(x.dtype, y.dtype);
  EXPECT_EQ(x.shape, y.shape);
  EXPECT_EQ(x.elements, y.elements);
  EXPECT_EQ(x.nan_a, y.nan_a);
  EXPECT_EQ(x.nan_b, y.nan_b);
  EXPECT_EQ(x.inf_a, y.inf_a);
  EXPECT_EQ(x.inf_b, y.inf_b);
  EXPECT_EQ(x.first_nan_a, y.first_nan_a);
  EXPECT_EQ(x.first_nan_b, y.first_nan_b);
  EXPECT_EQ(x.first_inf_a, y.first_inf_a);
  EXPECT_EQ(x.first_inf_b, y.first_inf_b);
  EXPECT_EQ(x.differing, y.differing);
  EXPECT_EQ(bits(x.sum_squares), bits(y.sum_squares));
  EXPECT_EQ(bits(x.mse), bits(y.mse));
  EXPECT_EQ(bits(x.rmse), bits(y.rmse));
  EXPECT_EQ(bits(x.max_abs_diff), bits(y.max_abs_diff));
  for (auto [p, q] : {std::pair{&x.largest, &y.largest}, std::pair{&x.finite_largest, &y.finite_largest},
                      std::pair{&x.worst, &y.worst}}) {
    EXPECT_EQ(p->position, q->position);
    EXPECT_EQ(bits(p->value), bits(q->value));
    EXPECT_EQ(p->exact, q->exact);
  }
  EXPECT_EQ(x.finite_elements, y.finite_elements);
  EXPECT_EQ(bits(x.finite_sum_squares), bits(y.finite_sum_squares));
  EXPECT_EQ(bits(x.finite_mse), bits(y.finite_mse));
  EXPECT_EQ(x.out_of_tolerance, y.out_of_tolerance);
  EXPECT_EQ(bits(x.worst_rel_error), bits(y.worst_rel_error));
  EXPECT_EQ(x.psnr.has_value(), y.psnr.has_value());
  if (x.psnr && y.psnr) {
    EXPECT_EQ(bits(*x.psnr), bits(*y.psnr));
  }
  EXPECT_EQ(x.identical, y.identical);
  EXPECT_EQ(x.passed, y.passed);
}

// ---------------------------------------------------------------------------
// Every dtype: a = {1, 2, 3, 4, 5, 6}, b = {1, 4, 0, 4, 5, 1} as [2, 3]:
// differences 0, 2, 3, 0, 0, 5; sum of squares 38, MSE 38/6.

template <typename T>
std::vector<T> values(std::initializer_list<int> list) {
  std::vector<T> out;
  for (int v : list) {
    if constexpr (sqdiff_test::is_half_type<T>) {
      out.push_back(T(static_cast<float>(v)));
    } else {
      out.push_back(static_cast<T>(v));
    }
  }
  return out;
}

template <typename T>
class CompareEveryDType : public ::testing::Test {};
using AllTypes = ::testing::Types<sqdiff::float16, sqdiff::bfloat16, float, double, int8_t, int16_t, int32_t, int64_t,
                                  uint8_t, uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(CompareEveryDType, AllTypes);

TYPED_TEST(CompareEveryDType, ExactValuesPositionsAndGates) {
  using T = TypeParam;
  constexpr DType dtype = sqdiff_test::dtype_of<T>;
  const auto a = values<T>({1, 2, 3, 4, 5, 6});
  const auto b = values<T>({1, 4, 0, 4, 5, 1});
  CompareOptions options;
  options.atol = 2.5;
  options.rtol = 0;
  const CompareStats s = sqdiff::compare(view(a, dtype, {2, 3}), view(b, dtype, {2, 3}), options);
  const bool integer = dtype != DType::f16 && dtype != DType::bf16 && dtype != DType::f32 && dtype != DType::f64;
  EXPECT_EQ(s.dtype, dtype);
  EXPECT_EQ(s.shape, (Shape{2, 3}));
  EXPECT_EQ(s.elements, 6);
  EXPECT_EQ(s.differing, 3);
  EXPECT_EQ(s.sum_squares, 38.0);
  EXPECT_EQ(s.mse, 38.0 / 6.0);
  EXPECT_EQ(s.rmse, std::sqrt(38.0 / 6.0));
  EXPECT_EQ(s.max_abs_diff, 5.0);
  EXPECT_EQ(s.largest.position, 5);
  EXPECT_EQ(s.index_of(s.largest.position), (Shape{1, 2}));
  EXPECT_EQ(s.largest.exact, integer ? 5U : 0U);
  EXPECT_EQ(s.finite_elements, 6);
  EXPECT_EQ(s.finite_sum_squares, 38.0);
  EXPECT_EQ(s.finite_largest.position, 5);
  EXPECT_EQ(s.nan_a + s.nan_b + s.inf_a + s.inf_b, 0);
  EXPECT_EQ(s.first_nan_a, -1);
  // |a - b| <= 2.5: the 3 at position 2 and the 5 at position 5 are out.
  ASSERT_TRUE(s.tolerance.has_value());
  EXPECT_EQ(s.tolerance->atol, 2.5);
  EXPECT_EQ(s.out_of_tolerance, 2);
  EXPECT_EQ(s.worst.position, 5);
  EXPECT_EQ(s.worst_rel_error, 5.0 / 1.0);
  EXPECT_FALSE(s.passed);
  EXPECT_FALSE(s.identical);
  // PSNR: integers default to their type's range as the peak, floats have none.
  if (integer) {
    const double peak = std::ldexp(1.0, 8 * static_cast<int>(sqdiff::dtype_size(dtype))) - 1;
    ASSERT_TRUE(s.peak.has_value());
    EXPECT_EQ(*s.peak, peak);
    EXPECT_EQ(*s.psnr, 20 * std::log10(peak) - 10 * std::log10(38.0 / 6.0));
  } else {
    EXPECT_FALSE(s.psnr.has_value());
  }
}

TEST(Compare, IntegerDifferencesBeyondDoubleAreExact) {
  const std::vector<int64_t> a = {std::numeric_limits<int64_t>::max(), 7};
  const std::vector<int64_t> b = {std::numeric_limits<int64_t>::min(), 7};
  const CompareStats s = sqdiff::compare(view(a, DType::i64, {2}), view(b, DType::i64, {2}));
  EXPECT_EQ(s.largest.exact, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(s.max_abs_diff, 18446744073709551616.0);  // 2^64 - 1 rounded once
  // (2^64 - 1)^2 rounded once to f64 is 2^128; the mean over 2 pairs is 2^127.
  EXPECT_EQ(s.sum_squares, std::ldexp(1.0, 128));
  EXPECT_EQ(s.mse, std::ldexp(1.0, 127));
}

TEST(Compare, NanAndInfCountsAndFirstPositions) {
  // [2, 4] f64: a NaN at 1 and 6, an inf at 3; b a NaN at 6, an inf at 5 and 7.
  const std::vector<double> a = {0, kNaN, 2, kInf, 4, 5, kNaN, 7};
  const std::vector<double> b = {0, 1, 2.5, 3, 4, kInf, kNaN, -kInf};
  const CompareStats s = sqdiff::compare(view(a, DType::f64, {2, 4}), view(b, DType::f64, {2, 4}));
  EXPECT_EQ(s.nan_a, 2);
  EXPECT_EQ(s.nan_b, 1);
  EXPECT_EQ(s.inf_a, 1);
  EXPECT_EQ(s.inf_b, 2);
  EXPECT_EQ(s.first_nan_a, 1);
  EXPECT_EQ(s.first_nan_b, 6);
  EXPECT_EQ(s.first_inf_a, 3);
  EXPECT_EQ(s.first_inf_b, 5);
  EXPECT_EQ(s.index_of(s.first_inf_b), (Shape{1, 1}));
  // Two NaNs are equal; 1 vs NaN, 2 vs 2.5, inf vs 3, 5 vs inf and 7 vs -inf differ.
  EXPECT_EQ(s.differing, 5);
  EXPECT_TRUE(std::isnan(s.sum_squares));
  EXPECT_EQ(s.max_abs_diff, kInf);  // the first inf difference: inf - 3 at 3
  EXPECT_EQ(s.largest.position, 3);
  // Finite pairs: positions 0, 2, 4.
  EXPECT_EQ(s.finite_elements, 3);
  EXPECT_EQ(s.finite_sum_squares, 0.25);
  EXPECT_EQ(s.finite_largest.position, 2);
  EXPECT_EQ(s.finite_largest.value, 0.5);
  EXPECT_TRUE(s.passed);  // no gate asked for
  EXPECT_FALSE(s.tolerance.has_value());
  EXPECT_EQ(s.out_of_tolerance, 0);
}

// ---------------------------------------------------------------------------
// The tolerance rule against an oracle written from NumPy's documentation of
// isclose: absolute(a - b) <= (atol + rtol * absolute(b)), each operation
// rounded on its own; not finite: close when a == b (infinities of one sign),
// or both NaN with equal_nan.

struct ToleranceOracle {
  int64_t out = 0;
  int64_t worst_position = -1;
  double worst = -1;  // |a - b| at the worst pair; NaN ranks above every number
};

ToleranceOracle isclose_oracle(const std::vector<double>& a, const std::vector<double>& b, double atol, double rtol,
                               bool equal_nan) {
  ToleranceOracle o;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    bool close;
    if (std::isfinite(x) && std::isfinite(y)) {
      volatile double scaled = rtol * std::fabs(y);  // no fused multiply-add
      volatile double bound = atol + scaled;
      close = std::fabs(x - y) <= bound;
    } else {
      close = x == y || (equal_nan && std::isnan(x) && std::isnan(y));
    }
    if (close) continue;
    ++o.out;
    const double d = std::fabs(x - y);
    const bool beats = o.worst_position < 0 || (std::isnan(d) && !std::isnan(o.worst)) ||
                       (!std::isnan(d) && !std::isnan(o.worst) && d > o.worst);
    if (beats) {
      o.worst = d;
      o.worst_position = static_cast<int64_t>(i);
    }
  }
  return o;
}

TEST(CompareTolerance, MatchesAnIscloseOracle) {
  std::mt19937_64 rng(34);
  std::normal_distribution<double> normal(0, 1);
  int rounds_out = 0, rounds_nan_worst = 0, rounds_in = 0;  // the data reach every case
  for (int round = 0; round < 60; ++round) {
    const std::size_t n = 1 + rng() % 3000;
    std::vector<double> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
      b[i] = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 20) - 10);
      // Every sixth round all pairs near each other, under a loose tolerance: all close.
      const uint64_t kind = round % 6 == 5 ? rng() % 80 : rng() % 100;
      a[i] = kind < 60 ? b[i] + normal(rng) * 1e-4 * std::fabs(b[i]) : kind < 80 ? b[i] : normal(rng);
      if (round % 3 == 0 && kind == 97) a[i] = kNaN;
      if (round % 3 == 0 && kind == 98) b[i] = kNaN;
      if (round % 3 == 0 && kind == 99) a[i] = b[i] = (rng() % 2 ? kNaN : -kInf);
    }
    const bool loose = round % 6 == 5;
    const double atol = round % 4 == 0 ? 0 : std::ldexp(1.0, -static_cast<int>(rng() % 30));
    const double rtol = loose ? 1e-3 : round % 5 == 0 ? 0 : std::ldexp(1.0, -static_cast<int>(rng() % 20));
    const bool equal_nan = round % 2 == 1;
    CompareOptions options;
    options.atol = atol;
    options.rtol = rtol;
    options.equal_nan = equal_nan;
    options.chunk_elements = 1 + static_cast<int64_t>(rng() % 700);
    const Shape shape = {static_cast<int64_t>(n)};
    const CompareStats s = sqdiff::compare(view(a, DType::f64, shape), view(b, DType::f64, shape), options);
    const ToleranceOracle o = isclose_oracle(a, b, atol, rtol, equal_nan);
    rounds_out += o.out > 0;
    rounds_nan_worst += o.out > 0 && std::isnan(o.worst);
    rounds_in += o.out == 0;
    SCOPED_TRACE(::testing::Message() << "round " << round);
    EXPECT_EQ(s.out_of_tolerance, o.out);
    EXPECT_EQ(s.worst.position, o.worst_position);
    EXPECT_EQ(s.passed, o.out == 0);
    if (o.worst_position >= 0) {
      EXPECT_EQ(bits(s.worst.value), bits(o.worst));
      EXPECT_EQ(bits(s.worst_rel_error), bits(o.worst / std::fabs(b[static_cast<std::size_t>(o.worst_position)])));
    }
  }
  EXPECT_GT(rounds_out, 10);
  EXPECT_GT(rounds_nan_worst, 3);
  EXPECT_GT(rounds_in, 0);
}

TEST(CompareTolerance, OneOfAtolRtolTakesNumpysDefaultForTheOther) {
  const std::vector<float> a = {1.0f, 100.0f};
  const std::vector<float> b = {1.0f, 100.0009f};
  CompareOptions only_atol;
  only_atol.atol = 0;  // rtol 1e-5: 100 * 1e-5 = 1e-3 covers the 9e-4
  const CompareStats s = sqdiff::compare(view(a, DType::f32, {2}), view(b, DType::f32, {2}), only_atol);
  EXPECT_EQ(s.tolerance->rtol, sqdiff::kDefaultRtol);
  EXPECT_EQ(s.out_of_tolerance, 0);
  CompareOptions only_rtol;
  only_rtol.rtol = 0;  // atol 1e-8 does not
  const CompareStats t = sqdiff::compare(view(a, DType::f32, {2}), view(b, DType::f32, {2}), only_rtol);
  EXPECT_EQ(t.tolerance->atol, sqdiff::kDefaultAtol);
  EXPECT_EQ(t.out_of_tolerance, 1);
  EXPECT_EQ(t.worst.position, 1);
}

TEST(CompareGates, FailAboveGatesTheMse) {
  const std::vector<uint8_t> a = {0, 10};
  const std::vector<uint8_t> b = {0, 12};  // MSE 2
  CompareOptions options;
  options.fail_above = 2;
  EXPECT_TRUE(sqdiff::compare(view(a, DType::u8, {2}), view(b, DType::u8, {2}), options).passed);
  options.fail_above = 1.5;
  EXPECT_FALSE(sqdiff::compare(view(a, DType::u8, {2}), view(b, DType::u8, {2}), options).passed);
}

// ---------------------------------------------------------------------------
// Layouts, broadcasting, threads, streaming.

std::vector<float> random_floats(std::size_t n, uint64_t seed, bool specials) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> v(n);
  for (float& x : v) {
    x = normal(rng);
    if (specials && rng() % 500 == 0) x = rng() % 2 ? std::numeric_limits<float>::quiet_NaN() : -INFINITY;
  }
  return v;
}

TEST(Compare, StridedAndBroadcastViewsEqualDenseCopies) {
  // a: [3, 4] read through a transposed [4, 3] buffer; b: a row [4] broadcast.
  const std::vector<float> buffer = random_floats(12, 1, false);
  const std::vector<float> row = random_floats(4, 2, false);
  std::vector<float> dense_a(12), dense_b(12);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      dense_a[static_cast<std::size_t>(i * 4 + j)] = buffer[static_cast<std::size_t>(j * 3 + i)];
      dense_b[static_cast<std::size_t>(i * 4 + j)] = row[static_cast<std::size_t>(j)];
    }
  }
  CompareOptions numpy;
  numpy.broadcast = {BroadcastKind::numpy, -1};
  numpy.atol = 0.5;
  const CompareStats strided = sqdiff::compare({buffer.data(), DType::f32, {3, 4}, {1, 3}},
                                               view(row, DType::f32, {4}), numpy);
  CompareOptions strict = numpy;
  strict.broadcast = {BroadcastKind::none, -1};
  const CompareStats dense = sqdiff::compare(view(dense_a, DType::f32, {3, 4}), view(dense_b, DType::f32, {3, 4}), strict);
  expect_same(strided, dense);
  EXPECT_TRUE(strided.broadcasted);
  EXPECT_EQ(strided.b_shape, (Shape{4}));
  EXPECT_FALSE(dense.broadcasted);
}

TEST(Compare, ThreadsOneAndTwoAreBitIdentical) {
  for (bool specials : {false, true}) {
    const std::vector<float> a = random_floats(100003, 3, specials);
    const std::vector<float> b = random_floats(100003, 4, specials);
    CompareOptions options;
    options.atol = 0.1;
    options.rtol = 0.01;
    options.chunk_elements = 4099;  // many chunks, so that both workers take some
    options.threads = 1;
    const CompareStats one = sqdiff::compare(view(a, DType::f32, {100003}), view(b, DType::f32, {100003}), options);
    options.threads = 2;
    const CompareStats two = sqdiff::compare(view(a, DType::f32, {100003}), view(b, DType::f32, {100003}), options);
    expect_same(one, two);
    EXPECT_EQ(one.finite_elements < one.elements, specials);
  }
}

TEST(Comparison, OddChunksEqualOneCall) {
  for (DType dtype : {DType::f32, DType::i16}) {
    const Shape shape = {37, 41};
    std::vector<float> fa = random_floats(37 * 41, 5, dtype == DType::f32);
    std::vector<float> fb = random_floats(37 * 41, 6, dtype == DType::f32);
    std::vector<int16_t> ia(fa.size()), ib(fb.size());
    for (std::size_t i = 0; i < fa.size(); ++i) {
      ia[i] = static_cast<int16_t>(std::isfinite(fa[i]) ? fa[i] * 1000 : 0);
      ib[i] = static_cast<int16_t>(std::isfinite(fb[i]) ? fb[i] * 1000 : 0);
    }
    const std::size_t item = sqdiff::dtype_size(dtype);
    const void* a = dtype == DType::f32 ? static_cast<const void*>(fa.data()) : ia.data();
    const void* b = dtype == DType::f32 ? static_cast<const void*>(fb.data()) : ib.data();
    CompareOptions options;
    options.atol = 0.5;
    options.rtol = 1e-3;
    options.threads = 2;
    const CompareStats whole = sqdiff::compare({a, dtype, shape}, {b, dtype, shape}, options);
    for (int64_t step : {1, 7, 13, 100, 1517}) {
      SCOPED_TRACE(::testing::Message() << sqdiff::dtype_name(dtype) << " chunks of " << step);
      Comparison streamed(dtype, shape, options);
      for (int64_t at = 0; at < 37 * 41; at += step) {
        const int64_t n = std::min<int64_t>(step, 37 * 41 - at);
        const auto offset = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(at) * item);
        streamed.add({static_cast<const std::byte*>(a) + offset, dtype, {n}},
                     {static_cast<const std::byte*>(b) + offset, dtype, {n}});
      }
      expect_same(streamed.finish(), whole);
    }
  }
}

TEST(Comparison, ChunksMayHaveAnyShapeInRowMajorOrder) {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> b = {1, 2, 3, 4, 5, 6, 7, 0};
  Comparison streamed(DType::f64, {2, 4});
  streamed.add({a.data(), DType::f64, {2, 3}}, {b.data(), DType::f64, {2, 3}});  // positions 0..5
  streamed.add({a.data() + 6, DType::f64, {}}, {b.data() + 6, DType::f64, {}});  // a scalar: position 6
  streamed.add({a.data() + 7, DType::f64, {1, 1}}, {b.data() + 7, DType::f64, {1, 1}});
  const CompareStats s = streamed.finish();
  EXPECT_EQ(s.largest.position, 7);
  EXPECT_EQ(s.index_of(7), (Shape{1, 3}));
  EXPECT_EQ(s.sum_squares, 64.0);
}

// ---------------------------------------------------------------------------
// Errors: sqdiff::Error, and nothing half-done.

TEST(CompareErrors, BadViewsAndOptionsThrow) {
  const std::vector<float> f(6, 1.0f);
  const std::vector<double> d(6, 1.0);
  EXPECT_THROW(sqdiff::compare(view(f, DType::f32, {2, 3}), view(f, DType::f32, {3, 2})), sqdiff::Error);
  EXPECT_THROW(sqdiff::compare(view(f, DType::f32, {2, 3}), view(f, DType::f32, {3})), sqdiff::Error);  // none
  EXPECT_THROW(sqdiff::compare(view(f, DType::f32, {6}), view(d, DType::f64, {6})), sqdiff::Error);
  EXPECT_THROW(sqdiff::compare({nullptr, DType::f32, {6}}, view(f, DType::f32, {6})), sqdiff::Error);
  EXPECT_THROW(sqdiff::compare({f.data(), DType::f32, {6}, {1, 1}}, view(f, DType::f32, {6})), sqdiff::Error);
  EXPECT_THROW(sqdiff::compare({f.data(), static_cast<DType>(40), {6}}, view(f, DType::f32, {6})), sqdiff::Error);
  const auto with = [&](auto change) {
    CompareOptions options;
    change(options);
    return options;
  };
  for (const CompareOptions& bad : {with([](CompareOptions& o) { o.threads = -1; }),
                                    with([](CompareOptions& o) { o.atol = -1; }),
                                    with([](CompareOptions& o) { o.rtol = kNaN; }),
                                    with([](CompareOptions& o) { o.equal_nan = true; }),
                                    with([](CompareOptions& o) { o.peak = 0; }),
                                    with([](CompareOptions& o) { o.fail_above = kNaN; }),
                                    with([](CompareOptions& o) { o.chunk_elements = 0; })}) {
    EXPECT_THROW(sqdiff::compare(view(f, DType::f32, {6}), view(f, DType::f32, {6}), bad), sqdiff::Error);
    EXPECT_THROW(Comparison(DType::f32, {6}, bad), sqdiff::Error);
  }
  // A null pointer to nothing is fine: no element is read.
  EXPECT_EQ(sqdiff::compare({nullptr, DType::f32, {0, 3}}, {nullptr, DType::f32, {0, 3}}).elements, 0);
}

TEST(ComparisonErrors, BadChunksThrowAndAddNothing) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {1, 2, 3, 4, 5, 0};
  const std::vector<double> d(6, 1.0);
  EXPECT_THROW(Comparison(DType::f32, {2, -3}), sqdiff::Error);
  EXPECT_THROW(Comparison(static_cast<DType>(12), {2}), sqdiff::Error);
  CompareOptions numpy;
  numpy.broadcast = {BroadcastKind::numpy, -1};
  EXPECT_THROW(Comparison(DType::f32, {6}, numpy), sqdiff::Error);

  Comparison streamed(DType::f32, {2, 3});
  streamed.add({a.data(), DType::f32, {4}}, {b.data(), DType::f32, {4}});
  EXPECT_THROW(streamed.finish(), sqdiff::Error);  // 4 of 6 elements
  EXPECT_THROW(streamed.add({a.data() + 4, DType::f32, {3}}, {b.data() + 4, DType::f32, {3}}), sqdiff::Error);
  EXPECT_THROW(streamed.add({a.data() + 4, DType::f32, {2}}, {b.data() + 4, DType::f32, {1, 1}}), sqdiff::Error);
  EXPECT_THROW(streamed.add({d.data(), DType::f64, {2}}, {d.data(), DType::f64, {2}}), sqdiff::Error);
  EXPECT_THROW(streamed.add({nullptr, DType::f32, {2}}, {b.data() + 4, DType::f32, {2}}), sqdiff::Error);
  EXPECT_EQ(streamed.elements_added(), 4);  // the refused chunks added nothing
  streamed.add({a.data() + 4, DType::f32, {2}}, {b.data() + 4, DType::f32, {2}});
  const CompareStats s = streamed.finish();
  expect_same(s, sqdiff::compare(view(a, DType::f32, {2, 3}), view(b, DType::f32, {2, 3})));
  // After every element: another chunk overflows the shape.
  EXPECT_THROW(streamed.add({a.data(), DType::f32, {1}}, {b.data(), DType::f32, {1}}), sqdiff::Error);
  expect_same(streamed.finish(), s);
}

TEST(ComparisonErrors, AnErrorInTheProgressCallbackLeavesTheComparisonAsItWas) {
  const std::vector<float> a = {1, 2, 3, 4};
  const std::vector<float> b = {0, 2, 3, 4};
  CompareOptions options;
  bool fail = true;
  options.on_progress = [&fail](int64_t, int64_t) {
    if (fail) throw std::runtime_error("stop");
  };
  Comparison streamed(DType::f32, {4}, options);
  EXPECT_THROW(streamed.add({a.data(), DType::f32, {4}}, {b.data(), DType::f32, {4}}), std::runtime_error);
  EXPECT_EQ(streamed.elements_added(), 0);
  fail = false;
  streamed.add({a.data(), DType::f32, {4}}, {b.data(), DType::f32, {4}});
  EXPECT_EQ(streamed.finish().sum_squares, 1.0);
}

TEST(CompareProgress, EveryPositionIsReportedOnce) {
  const std::vector<int32_t> a(1000, 3), b(1000, 1);
  CompareOptions options;
  options.chunk_elements = 64;
  options.threads = 2;
  std::vector<std::atomic<int>> seen(1000);
  options.on_progress = [&seen](int64_t first, int64_t count) {
    for (int64_t p = first; p < first + count; ++p) seen[static_cast<std::size_t>(p)]++;
  };
  const CompareStats s = sqdiff::compare(view(a, DType::i32, {10, 100}), view(b, DType::i32, {10, 100}), options);
  EXPECT_EQ(s.sum_squares, 4000.0);
  for (const std::atomic<int>& n : seen) EXPECT_EQ(n.load(), 1);
}

}  // namespace
