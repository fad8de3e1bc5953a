// The pairwise kernels that put one output in each f64 lane (few terms per
// output, and the double-double sums of f64 outputs) against the library's
// exact path (set_fast_square_reductions(false), itself held to the GMP
// oracle by the other tests of this folder): bit for bit, on every SIMD
// target this CPU has, 1-3 threads, sums and means, every float input type
// into its own type and f64, K = 1 to a vector's lanes + 1 and beyond, M and N
// that are not multiples of a tile, and the layouts that select the kernels
// (x first or y first, gapped rows, strided outputs). Adversarial inputs:
// near duplicates, sums exactly at a rounding midpoint (the exact fallback
// must decide them), huge and tiny f64 values (outside the double-double
// terms' range: the kernels are skipped), NaN and inf.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "float_bytes.hpp"
#include "kernels/reduce_table.hpp"
#include "reduce/fast_squares.hpp"
#include "simd_target_guard.hpp"
#include "sqdiff/sqdiff.hpp"

namespace {

using sqdiff::DType;
using sqdiff::Shape;
using sqdiff_test::TargetGuard;
using sqdiff_test::targets_to_run;

enum class Values { ordinary, near_duplicates, specials, huge_and_tiny };

using sqdiff_test::store_float;

// x ([m rows of k], rows x_stride apart) and y ([n rows of k], y_stride apart).
struct Inputs {
  std::vector<unsigned char> x, y;
};

Inputs make_inputs(std::mt19937_64& rng, DType type, Values values, int64_t m, int64_t n, int64_t k,
                   int64_t x_stride, int64_t y_stride) {
  Inputs in{std::vector<unsigned char>(static_cast<std::size_t>(m * x_stride) * sqdiff::dtype_size(type) + 8, 0),
            std::vector<unsigned char>(static_cast<std::size_t>(n * y_stride) * sqdiff::dtype_size(type) + 8, 0)};
  std::normal_distribution<double> normal;
  std::vector<double> xs(static_cast<std::size_t>(m * k));
  for (double& v : xs) v = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 8) - 4);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < k; ++j) store_float(in.x, type, i * x_stride + j, xs[static_cast<std::size_t>(i * k + j)]);
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      double v = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 8) - 4);
      if (values == Values::near_duplicates || rng() % 8 == 0) {
        // A row of x plus noise of a few units of the type's last place.
        const double base = xs[static_cast<std::size_t>((i % m) * k + j)];
        const double unit = type == DType::f64 ? 0x1p-52 : type == DType::f32 ? 0x1p-23 : 0x1p-7;
        v = base * (1 + unit * static_cast<double>(static_cast<int>(rng() % 7) - 3));
      }
      if (values == Values::specials) {
        const double specials[] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                   std::nan(""), 0.0, -0.0, 65504.0, 3e38};
        if (rng() % 5 == 0) v = specials[rng() % 7];
      }
      if (values == Values::huge_and_tiny && rng() % 11 == 0) v = rng() % 2 == 0 ? 1e300 : 1e-300;
      store_float(in.y, type, i * y_stride + j, v);
    }
  }
  return in;
}

struct Layout {
  const char* name;
  bool y_first;        // y is the first operand ([1,N,K] with [M,1,K])
  int64_t row_gap;     // extra elements after each row of k
  bool strided_output; // the output written transposed
};

uint64_t fast_bits(const std::vector<unsigned char>& bytes, std::size_t at) {
  uint64_t bits;
  std::memcpy(&bits, &bytes[at], 8);
  return bits;
}

std::string hex_double(uint64_t bits) {
  std::ostringstream text;
  text << std::hexfloat << std::bit_cast<double>(bits);
  return text.str();
}

// One call on the fast path and on the exact path: the same output bytes.
void expect_as_exact(DType type, DType out_type, bool mean, int threads, const Layout& layout, const Inputs& in,
                     int64_t m, int64_t n, int64_t k, const std::string& what) {
  const int64_t stride = k + layout.row_gap;
  const sqdiff::ConstTensorView vx{in.x.data(), type, {m, 1, k}, {stride, stride, 1}};
  const sqdiff::ConstTensorView vy{in.y.data(), type, {1, n, k}, {n * stride, stride, 1}};
  const std::size_t size = sqdiff::dtype_size(out_type);
  const Shape out_strides = layout.strided_output ? Shape{1, m} : Shape{};
  sqdiff::ReduceOptions options;
  options.axes = Shape{2};
  options.threads = threads;
  const auto run = [&](std::vector<unsigned char>& out) {
    const sqdiff::TensorView vo{out.data(), out_type, {m, n}, out_strides};
    // y first: the output is [N, M], x moving along the output's second dim.
    const auto& a = layout.y_first ? vy : vx;
    const auto& b = layout.y_first ? vx : vy;
    if (mean) {
      sqdiff::mean_squared_difference(a, b, vo, options);
    } else {
      sqdiff::sum_squared_difference(a, b, vo, options);
    }
  };
  std::vector<unsigned char> fast(static_cast<std::size_t>(m * n) * size, 0xA5), exact(fast.size(), 0x5A);
  sqdiff::detail::set_fast_square_reductions(true);
  run(fast);
  sqdiff::detail::set_fast_square_reductions(false);
  run(exact);
  sqdiff::detail::set_fast_square_reductions(true);
  for (int64_t i = 0; i < m * n; ++i) {
    const auto at = static_cast<std::size_t>(i) * size;
    ASSERT_EQ(std::memcmp(&fast[at], &exact[at], size), 0)
        << what << ", output " << i << ": "
        << (out_type == DType::f64 ? hex_double(fast_bits(fast, at)) + " against " + hex_double(fast_bits(exact, at))
                                   : std::string());
  }
}

class PairwiseKernels : public ::testing::TestWithParam<int64_t> {};

TEST_P(PairwiseKernels, EqualTheExactPath) {
  TargetGuard guard(GetParam());
  const auto lanes = static_cast<int64_t>(sqdiff::detail::reduce_kernel_table().for_input(DType::f32).lanes);
  std::vector<int64_t> ks;
  for (int64_t k = 1; k <= lanes + 1; ++k) ks.push_back(k);
  for (const int64_t k : {16, 64, 65, 130}) ks.push_back(k);  // the lanes kernels' end, the blocked one's start
  const Layout layouts[] = {{"x first", false, 0, false}, {"y first, gapped rows", true, 3, false},
                            {"strided output", false, 1, true}};
  std::mt19937_64 rng(0x9A1 + static_cast<uint64_t>(GetParam() % 997));
  const int64_t m = 13, n = 4 * lanes * 2 + 5;  // neither a multiple of a tile
  for (const DType type : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    for (const int64_t k : ks) {
      for (const Values values : {Values::ordinary, Values::near_duplicates, Values::specials, Values::huge_and_tiny}) {
        const Layout& layout = layouts[rng() % 3];
        const Inputs in = make_inputs(rng, type, values, m, n, k, k + layout.row_gap, k + layout.row_gap);
        for (const DType out_type : {type, DType::f64}) {
          for (const bool mean : {false, true}) {
            const int threads = 1 + static_cast<int>(rng() % 3);
            expect_as_exact(type, out_type, mean, threads, layout, in, m, n, k,
                            std::string(hwy::TargetName(GetParam())) + ", " +
                                std::string(sqdiff::dtype_name(type)) + " -> " +
                                std::string(sqdiff::dtype_name(out_type)) + ", K " + std::to_string(k) + ", values " +
                                std::to_string(static_cast<int>(values)) + ", " + layout.name +
                                (mean ? ", mean" : ", sum") + ", " + std::to_string(threads) + " threads");
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// Sums exactly at the midpoint between two outputs (ties to even), and a hair
// above one: no bound can decide them, so the exact path must, and its result
// is known. f64: 1 + 2^-54 + 2^-54 = 1 + 2^-53 (rounds to 1); with a term
// 2^-106 more, up to 1 + 2^-52. f32: 1 + 2^-24 (rounds to 1).
TEST_P(PairwiseKernels, MidpointsGoToTheExactPath) {
  TargetGuard guard(GetParam());
  // Two equal rows of x: a dim of 1 would be dropped from the plan.
  const int64_t m = 2, n = 21, k = 4;
  struct Want {
    DType type;
    double terms[4];
    double result;
  };
  const Want wants[] = {{DType::f64, {1, 0x1p-27, 0x1p-27, 0}, 1.0},
                        {DType::f64, {1, 0x1p-27, 0x1p-27, 0x1p-53}, 1 + 0x1p-52},
                        {DType::f32, {1, 0x1p-12, 0, 0}, 1.0},
                        {DType::f32, {1, 0x1p-12, 0x1p-30, 0}, 1 + 0x1p-23}};
  for (const Want& want : wants) {
    for (int threads : {1, 2}) {
      std::vector<unsigned char> x(static_cast<std::size_t>(m * k) * 8, 0), y(static_cast<std::size_t>(n * k) * 8, 0);
      for (int64_t j = 0; j < m * k; ++j) store_float(x, want.type, j, want.terms[j % k]);  // y is all zeros
      sqdiff::ReduceOptions options;
      options.axes = Shape{2};
      options.threads = threads;
      std::vector<unsigned char> out(static_cast<std::size_t>(m * n) * 8);
      const auto before = sqdiff::detail::fast_square_counts();
      sqdiff::sum_squared_difference({x.data(), want.type, {m, 1, k}}, {y.data(), want.type, {1, n, k}},
                                     {out.data(), want.type, {m, n}}, options);
      const auto after = sqdiff::detail::fast_square_counts();
      EXPECT_EQ(after.exact - before.exact, m * n) << hwy::TargetName(GetParam());
      for (int64_t i = 0; i < m * n; ++i) {
        const double got = want.type == DType::f64 ? reinterpret_cast<const double*>(out.data())[i]
                                                   : static_cast<double>(reinterpret_cast<const float*>(out.data())[i]);
        ASSERT_EQ(got, want.result) << hwy::TargetName(GetParam()) << " " << sqdiff::dtype_name(want.type)
                                    << " output " << i;
      }
    }
  }
}

// On ordinary f64 data the double-double lanes decide nearly every output
// themselves: the bound (about 2^-90 of the sum at K = 64) is far inside an
// f64 rounding interval.
TEST_P(PairwiseKernels, OrdinaryF64RarelyNeedsTheExactPath) {
  TargetGuard guard(GetParam());
  std::mt19937_64 rng(0xF64);
  const int64_t m = 40, n = 50, k = 64;
  const Inputs in = make_inputs(rng, DType::f64, Values::ordinary, m, n, k, k, k);
  std::vector<double> out(static_cast<std::size_t>(m * n));
  sqdiff::ReduceOptions options;
  options.axes = Shape{2};
  const auto before = sqdiff::detail::fast_square_counts();
  sqdiff::sum_squared_difference({in.x.data(), DType::f64, {m, 1, k}}, {in.y.data(), DType::f64, {1, n, k}},
                                 {out.data(), DType::f64, {m, n}}, options);
  const auto after = sqdiff::detail::fast_square_counts();
  EXPECT_LE(after.exact - before.exact, 2) << hwy::TargetName(GetParam());
}

// ---- The f64 expansion kernel (|x|^2 + |y|^2 - 2 x.y, reduce-inl.h) --------
//
// f64 sums of f64 and f32 inputs written straight to the output go through
// the expansion; what its bound does not decide is summed again in
// double-double (fast_square_counts().redone). Its bound's
// derivation is only as good as these tests: scaled by 0, the near-duplicate
// and adversarial cases below fail.

// x and y ([m, k] and [n, k]) from values, in `type`.
Inputs inputs_of(DType type, const std::vector<double>& xs, const std::vector<double>& ys) {
  Inputs in{std::vector<unsigned char>(xs.size() * sqdiff::dtype_size(type) + 8, 0),
            std::vector<unsigned char>(ys.size() * sqdiff::dtype_size(type) + 8, 0)};
  for (std::size_t i = 0; i < xs.size(); ++i) store_float(in.x, type, static_cast<int64_t>(i), xs[i]);
  for (std::size_t i = 0; i < ys.size(); ++i) store_float(in.y, type, static_cast<int64_t>(i), ys[i]);
  return in;
}

std::string expansion_case(int64_t target, DType type, int64_t k, const char* what) {
  return std::string(hwy::TargetName(target)) + ", " + std::string(sqdiff::dtype_name(type)) + " -> f64, K " +
         std::to_string(k) + ", " + what;
}

// Random rows (normal, of magnitudes 2^-4 to 2^3), odd M and N that are not
// multiples of a tile or a panel, K from 4 (the expansion's fewest; 1 and 3
// take the double-double lanes) to past 256 (beta from 25 to 21): every
// output bit for bit as the exact path's.
TEST_P(PairwiseKernels, ExpansionEqualsTheExactPath) {
  TargetGuard guard(GetParam());
  const auto lanes = static_cast<int64_t>(sqdiff::detail::reduce_kernel_table().for_input(DType::f64).lanes);
  const Layout layouts[] = {{"x first", false, 0, false}, {"y first, gapped rows", true, 3, false},
                            {"strided output", false, 1, true}};
  std::mt19937_64 rng(0xE8A + static_cast<uint64_t>(GetParam() % 991));
  const int64_t m = 13, n = 2 * 4 * lanes + 7;
  for (const DType type : {DType::f64, DType::f32}) {
    for (const int64_t k : {1, 3, 4, 5, 16, 64, 256, 300}) {
      for (const Values values : {Values::ordinary, Values::near_duplicates}) {
        const Layout& layout = layouts[rng() % 3];
        const Inputs in = make_inputs(rng, type, values, m, n, k, k + layout.row_gap, k + layout.row_gap);
        const int threads = 1 + static_cast<int>(rng() % 3);
        const auto before = sqdiff::detail::fast_square_counts();
        expect_as_exact(type, DType::f64, false, threads, layout, in, m, n, k,
                        expansion_case(GetParam(), type, k, layout.name) + ", values " +
                            std::to_string(static_cast<int>(values)) + ", " + std::to_string(threads) + " threads");
        if (HasFatalFailure()) return;
        const auto after = sqdiff::detail::fast_square_counts();
        if (values == Values::near_duplicates && type == DType::f64 && k >= 4) {
          // Rows of y that copy a row of x up to a few units of their last
          // place: the expansion cancels, its bound cannot decide them.
          EXPECT_GT(after.redone - before.redone, 0) << expansion_case(GetParam(), type, k, "near duplicates");
        }
      }
    }
  }
}

// Near-duplicate rows: y equal to x (d = 0: the exact path decides its sign)
// and y = x plus one or a few units in the last place of some elements (d far
// below |x|^2 + |y|^2, where the expansion cancels): each left undecided by
// the expansion, recomputed, and correctly rounded.
TEST_P(PairwiseKernels, ExpansionLeavesNearDuplicatesToTheDirectSum) {
  TargetGuard guard(GetParam());
  std::mt19937_64 rng(0xD0B);
  std::normal_distribution<double> normal;
  for (const DType type : {DType::f64, DType::f32}) {
    for (const int64_t k : {4, 16, 64, 300}) {
      const int64_t m = 5, n = 10;
      const double unit = type == DType::f64 ? 0x1p-52 : 0x1p-23;
      std::vector<double> xs(static_cast<std::size_t>(m * k)), ys(static_cast<std::size_t>(n * k));
      for (double& v : xs) v = type == DType::f64 ? normal(rng) : static_cast<float>(normal(rng));
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < k; ++i) {
          const double base = xs[static_cast<std::size_t>((j % m) * k + i)];
          // Rows 0-4 of y: copies of x's rows; rows 5-9: a unit or two off in every third element.
          const double step = j < m || i % 3 != 0 ? 0.0 : static_cast<double>(1 + static_cast<int>(rng() % 2));
          ys[static_cast<std::size_t>(j * k + i)] = base * (1 + unit * step);
        }
      }
      const Inputs in = inputs_of(type, xs, ys);
      for (const int threads : {1, 2}) {
        const auto before = sqdiff::detail::fast_square_counts();
        expect_as_exact(type, DType::f64, false, threads, {"x first", false, 0, false}, in, m, n, k,
                        expansion_case(GetParam(), type, k, "near duplicates"));
        if (HasFatalFailure()) return;
        const auto after = sqdiff::detail::fast_square_counts();
        // Each row of x has two near duplicates in y: its copy (d = 0) and
        // the copy a few units off, d about 2^-104 of |x|^2 in f64 (2^-46 in
        // f32, which the bound, about 2^-60 of it, may decide), each
        // recomputed by the direct sum.
        EXPECT_GE(after.redone - before.redone, type == DType::f64 ? 2 * m : m)
            << expansion_case(GetParam(), type, k, "near duplicates");
      }
    }
  }
}

// y = x (1 + eps z), z normal, eps from 2^-4 to 2^-28: d from about
// 2^-8 of |x|^2 + |y|^2 down to 2^-56 of it, where the expansion's bound
// (about 2^-60 of it) must grow from far below a rounding interval of d to
// beyond it; the remainders' sum T, whose rounding the bound covers, is then
// as large as d or larger. These are the outputs a wrong bound rounds wrongly.
TEST_P(PairwiseKernels, ExpansionAtEveryDistance) {
  TargetGuard guard(GetParam());
  std::mt19937_64 rng(0x5CA1E);
  std::normal_distribution<double> normal;
  for (const DType type : {DType::f64, DType::f32}) {
    for (const int64_t k : {4, 16, 64, 256, 1024}) {
      const int64_t m = 16, n = 125;
      std::vector<double> xs(static_cast<std::size_t>(m * k)), ys(static_cast<std::size_t>(n * k));
      for (double& v : xs) v = normal(rng);
      for (int64_t j = 0; j < n; ++j) {
        const double eps = std::ldexp(1.0, -4 - static_cast<int>(j / 5 % 25));
        for (int64_t i = 0; i < k; ++i) {
          const double base = xs[static_cast<std::size_t>((j % m) * k + i)];
          ys[static_cast<std::size_t>(j * k + i)] = base * (1 + eps * normal(rng));
        }
      }
      const Inputs in = inputs_of(type, xs, ys);
      expect_as_exact(type, DType::f64, false, 1, {"x first", false, 0, false}, in, m, n, k,
                      expansion_case(GetParam(), type, k, "every distance"));
      if (HasFatalFailure()) return;
    }
  }
}

// Values the expansion's range and bound must survive, or leave to the
// double-double lanes: mixed magnitudes within a row (its split puts the
// small ones entirely in the remainder), zeros and zero rows, f64 values at
// the edges of the range [2^-428, 2^498) on both sides (outside: the whole
// call goes to the double-double lanes), subnormals, sums whose hi lands
// beyond 2^1000; f32 values that are not finite (their rows undecided), the
// largest and the smallest f32 values.
TEST_P(PairwiseKernels, ExpansionSurvivesAdversarialValues) {
  TargetGuard guard(GetParam());
  std::mt19937_64 rng(0xAD5);
  std::normal_distribution<double> normal;
  struct Palette {
    DType type;
    const char* name;
    std::vector<double> values;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Palette palettes[] = {
      {DType::f64, "mixed magnitudes", {0.0, -0.0, 1.0, -3e-5, 7e8, 1e-20, 1e20, -2.5e12, 0.1}},
      {DType::f64, "range edges inside", {0.0, 0x1p-428, -0x1.8p-427, 0x1.fp497, -0x1p497, 1.0, 0x1p-300, 0x1p300}},
      {DType::f64, "below the range", {0.0, 1.0, 0x1p-429, 0x1.fp-429, -2.0}},
      {DType::f64, "subnormal", {0.0, 1.0, 4e-310, -5e-324, 3.0}},
      {DType::f64, "above the range", {0.0, 1.0, 0x1p498, -1e300, 2.0}},
      {DType::f64, "big sums", {0x1.6p497, -0x1.7p497, 0x1p496, 0.0}},
      {DType::f32, "f32 specials", {0.0, 1.0, inf, -inf, std::nan(""), 3e38, -2.0}},
      {DType::f32, "f32 extremes", {0.0, 3.4028234663852886e38, -1.401298464324817e-45, 1.1754943508222875e-38, 1.0,
                                     -1e-30, 1e30}},
  };
  for (const Palette& palette : palettes) {
    for (const int64_t k : {4, 5, 64, 257}) {
      const int64_t m = 7, n = 11;
      std::vector<double> xs(static_cast<std::size_t>(m * k)), ys(static_cast<std::size_t>(n * k));
      // Mostly ordinary values of each row's own scale, a palette value in a
      // quarter of the places; x's row 6 and y's row 10 all zeros; a few of
      // y's rows near duplicates of x's.
      const auto fill = [&](std::vector<double>& v, int64_t rows, int64_t zero_row) {
        for (int64_t r = 0; r < rows; ++r) {
          const double scale = palette.values[rng() % palette.values.size()];
          for (int64_t i = 0; i < k; ++i) {
            double value = rng() % 4 == 0 ? palette.values[rng() % palette.values.size()] : scale * normal(rng);
            if (!std::isfinite(value) && palette.type == DType::f64) value = 0;
            v[static_cast<std::size_t>(r * k + i)] = r == zero_row ? 0.0 : value;
          }
        }
      };
      fill(xs, m, 6);
      fill(ys, n, 10);
      for (int64_t r = 0; r < 3; ++r) {
        for (int64_t i = 0; i < k; ++i) ys[static_cast<std::size_t>(r * k + i)] = xs[static_cast<std::size_t>(r * k + i)];
      }
      const Inputs in = inputs_of(palette.type, xs, ys);
      for (const int threads : {1, 2}) {
        expect_as_exact(palette.type, DType::f64, false, threads, {"x first", false, 0, false}, in, m, n, k,
                        expansion_case(GetParam(), palette.type, k, palette.name));
        if (HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, PairwiseKernels, ::testing::ValuesIn(targets_to_run()),
                         [](const ::testing::TestParamInfo<int64_t>& p) { return std::string(hwy::TargetName(p.param)); });

}  // namespace
