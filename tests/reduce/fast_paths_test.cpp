// The fast paths of the reductions and gradients against the library's own
// exact path (set_fast_square_reductions(false), and the gradients' exact
// executor): bit for bit on every layout the fast paths specialise (rows,
// columns, pairwise blocks, packed strided operands, pieces across threads),
// and the exact fallback rare on ordinary data. The independent GMP oracle is
// in the other tests of this folder; this one pins the two paths together.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "float_bytes.hpp"
#include "reduce/fast_squares.hpp"
#include "reduce/gradient_run.hpp"
#include "reduce/reduce_call.hpp"
#include "reduce/reduce_execute.hpp"
#include "sqdiff/sqdiff.hpp"

namespace {

using sqdiff::DType;
using sqdiff::Shape;

// Element values of a float type as raw bytes: mostly ordinary values of
// several magnitudes, some zeros and exact repeats.
std::vector<unsigned char> random_floats(std::mt19937_64& rng, DType type, int64_t n) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(n) * sqdiff::dtype_size(type) + 8);
  std::normal_distribution<double> normal;
  for (int64_t i = 0; i < n; ++i) {
    double v = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 8) - 4);
    if (rng() % 16 == 0) v = 0;
    sqdiff_test::store_float(bytes, type, i, v);
  }
  return bytes;
}

struct Case {
  std::string name;
  Shape a, b;
  Shape a_strides, b_strides;  // empty: dense
  std::optional<Shape> axes;
  int64_t a_extent = 0;  // elements to allocate when strided
  int64_t b_extent = 0;
};

std::vector<Case> cases() {
  return {
      {"all axes, long row", {100003}, {100003}, {}, {}, std::nullopt},
      {"last axis", {97, 301}, {97, 301}, {}, {}, Shape{-1}},
      {"first axis (columns)", {301, 1500}, {301, 1500}, {}, {}, Shape{0}},
      // More columns than a tile's running sums hold in half of a 2 MiB L2 (column_tile).
      {"first axis, several tiles of columns", {5, 50001}, {5, 50001}, {}, {}, Shape{0}},
      {"per channel", {5, 7, 9, 11}, {1, 7, 1, 1}, {}, {}, Shape{0, 2, 3}},
      {"pairwise", {37, 1, 67}, {1, 41, 67}, {}, {}, Shape{2}},
      {"pairwise, b first", {1, 41, 130}, {37, 1, 130}, {}, {}, Shape{2}},
      {"row minus scalar", {1000, 77}, {}, {}, {}, Shape{1}},
      {"reversed row", {5000}, {5000}, {-1}, {}, std::nullopt, 5000, 0},
      {"gapped columns", {40, 300}, {40, 300}, {900, 3}, {}, Shape{0}, 40 * 900, 0},
      {"transposed", {60, 70}, {60, 70}, {1, 60}, {}, Shape{1}, 4200, 0},
      {"no axes", {33, 17}, {17}, {}, {}, Shape{}},
      {"middle axis", {6, 1000, 5}, {6, 1000, 5}, {}, {}, Shape{1}},
  };
}

TEST(FastPaths, SquaresEqualTheExactPathOnEveryLayout) {
  std::mt19937_64 rng(13);
  const auto before = sqdiff::detail::fast_square_counts();
  for (const Case& c : cases()) {
    for (const DType type : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
      const int64_t na = c.a_extent > 0 ? c.a_extent : [&] { int64_t n = 1; for (auto d : c.a) n *= d; return n; }();
      const int64_t nb = c.b_extent > 0 ? c.b_extent : [&] { int64_t n = 1; for (auto d : c.b) n *= d; return n; }();
      const auto a = random_floats(rng, type, na);
      const auto b = random_floats(rng, type, nb);
      // Reversed strides start from the last element.
      const int64_t a_start = (c.a_strides.size() == 1 && c.a_strides[0] < 0) ? (na - 1) : 0;
      const sqdiff::ConstTensorView va{a.data() + a_start * static_cast<int64_t>(sqdiff::dtype_size(type)), type, c.a,
                                       c.a_strides};
      const sqdiff::ConstTensorView vb{b.data(), type, c.b, c.b_strides};
      const Shape shape = sqdiff::broadcast_shape(c.a, c.b);
      for (const bool mean : {false, true}) {
        for (const DType out_type : {type == DType::f64 ? DType::f32 : type, DType::f64}) {
          for (const int threads : {1, 2, 3}) {
            sqdiff::ReduceOptions options;
            options.axes = c.axes;
            options.threads = threads;
            const Shape out_shape = sqdiff::reduced_shape(shape, c.axes, false);
            int64_t outputs = 1;
            for (auto d : out_shape) outputs *= d;
            std::vector<unsigned char> fast(static_cast<std::size_t>(outputs) * 8), exact(fast.size());
            const auto run = [&](std::vector<unsigned char>& out) {
              const sqdiff::TensorView vo{out.data(), out_type, out_shape};
              if (mean) {
                sqdiff::mean_squared_difference(va, vb, vo, options);
              } else {
                sqdiff::sum_squared_difference(va, vb, vo, options);
              }
            };
            sqdiff::detail::set_fast_square_reductions(true);
            run(fast);
            sqdiff::detail::set_fast_square_reductions(false);
            run(exact);
            sqdiff::detail::set_fast_square_reductions(true);
            ASSERT_EQ(std::memcmp(fast.data(), exact.data(), static_cast<std::size_t>(outputs) * sqdiff::dtype_size(out_type)), 0)
                << c.name << ", " << sqdiff::dtype_name(type) << " -> " << sqdiff::dtype_name(out_type)
                << (mean ? " mean" : " sum") << ", " << threads << " threads";
          }
        }
      }
    }
  }
  // On data like this (sums of many terms of full-precision values) the
  // exact path is the rare exception the design promises, not the rule.
  const auto after = sqdiff::detail::fast_square_counts();
  const int64_t rounded = after.rounded - before.rounded;
  const int64_t exact = after.exact - before.exact;
  EXPECT_GT(rounded, 0);
  EXPECT_LT(static_cast<double>(exact), 0.05 * static_cast<double>(rounded + exact))
      << exact << " of " << rounded + exact << " outputs took the exact path";
}

// Pairwise f32 outputs written through strides (here transposed, so that no
// output row is dense) take the vector rounding's scatter: the same bits as a
// dense output, and as the exact path.
TEST(FastPaths, PairwiseIntoStridedOutputs) {
  std::mt19937_64 rng(17);
  const int64_t m = 37, n = 45, k = 64;
  const auto x = random_floats(rng, DType::f32, m * k);
  const auto y = random_floats(rng, DType::f32, n * k);
  const sqdiff::ConstTensorView vx{x.data(), DType::f32, {m, 1, k}}, vy{y.data(), DType::f32, {1, n, k}};
  for (int threads : {1, 2}) {
    sqdiff::ReduceOptions options;
    options.axes = Shape{2};
    options.threads = threads;
    std::vector<float> dense(static_cast<std::size_t>(m * n)), strided(dense.size()), exact(dense.size());
    sqdiff::sum_squared_difference(vx, vy, {dense.data(), DType::f32, {m, n}}, options);
    sqdiff::sum_squared_difference(vx, vy, {strided.data(), DType::f32, {m, n}, {1, m}}, options);
    sqdiff::detail::set_fast_square_reductions(false);
    sqdiff::sum_squared_difference(vx, vy, {exact.data(), DType::f32, {m, n}}, options);
    sqdiff::detail::set_fast_square_reductions(true);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float want = exact[static_cast<std::size_t>(i * n + j)];
        ASSERT_EQ(std::memcmp(&dense[static_cast<std::size_t>(i * n + j)], &want, 4), 0) << i << ", " << j;
        ASSERT_EQ(std::memcmp(&strided[static_cast<std::size_t>(j * m + i)], &want, 4), 0) << i << ", " << j;
      }
    }
  }
}

// A long f32 sum of full-precision values never needs the exact path: the
// bound is ~2^-47 relative, a rounding interval of f32 2^-24.
TEST(FastPaths, LongF32SumsRoundDirectly) {
  std::mt19937_64 rng(5);
  const int64_t n = 1 << 20;
  const auto a = random_floats(rng, DType::f32, n);
  const auto b = random_floats(rng, DType::f32, n);
  for (int threads : {1, 2}) {
    sqdiff::ReduceOptions options;
    options.threads = threads;
    float out = 0;
    const auto before = sqdiff::detail::fast_square_counts();
    sqdiff::mean_squared_difference({a.data(), DType::f32, {n}}, {b.data(), DType::f32, {n}}, {&out, DType::f32, {}},
                                    options);
    const auto after = sqdiff::detail::fast_square_counts();
    EXPECT_EQ(after.exact - before.exact, 0);
    EXPECT_EQ(after.rounded - before.rounded, 1);
  }
}

TEST(FastPaths, GradientsEqualTheExactPath) {
  std::mt19937_64 rng(17);
  struct GradientCase {
    Shape a, b;
  };
  const std::vector<GradientCase> grads = {
      {{4099}, {4099}}, {{64, 65}, {64, 65}}, {{64, 65}, {65}}, {{7, 1, 33}, {1, 9, 33}}, {{1}, {3000}}, {{300, 20}, {300, 1}}};
  for (const GradientCase& c : grads) {
    for (const DType type : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
      const Shape shape = sqdiff::broadcast_shape(c.a, c.b);
      int64_t na = 1, nb = 1, ng = 1;
      for (auto d : c.a) na *= d;
      for (auto d : c.b) nb *= d;
      for (auto d : shape) ng *= d;
      const auto a = random_floats(rng, type, na);
      const auto b = random_floats(rng, type, nb);
      const auto g = random_floats(rng, type, ng);
      for (const bool subtract : {false, true}) {
        std::vector<unsigned char> fa(static_cast<std::size_t>(na) * 8), fb(static_cast<std::size_t>(nb) * 8);
        std::vector<unsigned char> ea(fa.size()), eb(fb.size());
        sqdiff::TensorView vfa{fa.data(), type, c.a}, vfb{fb.data(), type, c.b}, vea{ea.data(), type, c.a},
            veb{eb.data(), type, c.b};
        const sqdiff::ConstTensorView va{a.data(), type, c.a}, vb{b.data(), type, c.b}, vg{g.data(), type, shape};
        sqdiff::Options options;
        options.threads = 2;
        if (subtract) {
          sqdiff::detail::run_gradients("t", sqdiff::detail::validate_subtract_backward(vg, &vfa, &vfb, options));
          for (const auto& call : sqdiff::detail::validate_subtract_backward(vg, &vea, &veb, options)) {
            sqdiff::detail::execute_reduction("t", call);
          }
        } else {
          sqdiff::detail::run_gradients("t",
                                        sqdiff::detail::validate_squared_difference_backward(va, vb, vg, &vfa, &vfb, options));
          for (const auto& call : sqdiff::detail::validate_squared_difference_backward(va, vb, vg, &vea, &veb, options)) {
            sqdiff::detail::execute_reduction("t", call);
          }
        }
        const std::size_t size = sqdiff::dtype_size(type);
        EXPECT_EQ(std::memcmp(fa.data(), ea.data(), static_cast<std::size_t>(na) * size), 0)
            << "grad_a " << sqdiff::dtype_name(type) << (subtract ? " subtract" : " squared_difference");
        EXPECT_EQ(std::memcmp(fb.data(), eb.data(), static_cast<std::size_t>(nb) * size), 0)
            << "grad_b " << sqdiff::dtype_name(type) << (subtract ? " subtract" : " squared_difference");
      }
    }
  }
}

}  // namespace
