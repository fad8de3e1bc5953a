// sum_squared_difference and mean_squared_difference against the GMP oracle,
// bit for bit (SPEC section 7):
//  - random cases from a fixed seed: every input type with each of its output
//    types, sum and mean, the three broadcast modes (pdpd with explicit and -1
//    axes), axes all / none / a random subset with negative aliases in any
//    order, keepdims, ranks 0-5 with 1s and 0s, inputs reversed, gapped,
//    transposed or expanded (stride 0), strided outputs, 1-7 threads; an
//    integer sum that does not fit must throw and leave the output untouched;
//  - the shapes the fast paths specialise (long rows, the last axis, columns,
//    per channel, pairwise), at sizes that take them.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "reduce/fast_squares.hpp"
#include "reduce/gmp_oracle.hpp"
#include "reduce/reduce_test_support.hpp"

namespace {

namespace gmp = sqdiff_test::gmp;
using namespace sqdiff_test::reduce;

struct Case {
  DType input = DType::f32;
  Broadcast mode;
  Shape a_shape, b_shape;
  std::optional<Shape> axes;
  bool keepdims = false;
  int threads = 1;
  LayoutKind a_layout = LayoutKind::dense, b_layout = LayoutKind::dense, out_layout = LayoutKind::dense;
  ValueMix mix;

  std::string describe() const {
    return std::string(sqdiff::dtype_name(input)) + " a " + text(a_shape) + " b " + text(b_shape) + " (" + text(mode) +
           ") axes " + text(axes) + (keepdims ? " keepdims" : "") + ", " + std::to_string(threads) + " threads";
  }
};

// A broadcast shape of rank 0-5 with at most ~2000 elements, then a and b
// shapes that broadcast to it in `kind`.
Case random_case(DType input, std::mt19937_64& rng) {
  Case c;
  c.input = input;
  const RandomBroadcast shapes = random_broadcast({6, 50, 40, 2000, 4}, rng);
  c.mode = shapes.mode;
  c.a_shape = shapes.a_shape;
  c.b_shape = shapes.b_shape;
  const std::size_t r = gmp::align(c.a_shape, c.b_shape, c.mode).shape.size();
  const auto u = rng() % 10;
  if (u < 2) {
    c.axes = std::nullopt;
  } else if (u < 3) {
    c.axes = Shape{};
  } else {
    Shape axes;
    for (std::size_t d = 0; d < r; ++d) {
      if (rng() % 2 == 0) axes.push_back(rng() % 2 == 0 ? static_cast<int64_t>(d) : static_cast<int64_t>(d) - static_cast<int64_t>(r));
    }
    std::shuffle(axes.begin(), axes.end(), rng);
    c.axes = axes;
  }
  c.keepdims = rng() % 2 == 0;
  const int threads[] = {1, 2, 3, 7};
  c.threads = threads[rng() % 4];
  c.a_layout = kLayoutKinds[rng() % 6];
  c.b_layout = kLayoutKinds[rng() % 6];
  c.out_layout = kLayoutKinds[rng() % 6];
  c.mix.specials = rng() % 4 == 0 ? 0.01 : 0;
  c.mix.extremes = rng() % 3 == 0 ? 0.1 : 0.01;
  c.mix.full_range_integers = rng() % 4 == 0;
  return c;
}

// Runs every output type, sum and mean, of one case against the oracle.
void check_case(const Case& c, std::mt19937_64& rng) {
  const Array a = random_array(c.input, c.a_shape, layout_of(c.a_layout, c.a_shape, rng, true), rng, c.mix);
  const Array b = random_array(c.input, c.b_shape, layout_of(c.b_layout, c.b_shape, rng, true), rng, c.mix);
  const gmp::ExactReduction exact = gmp::exact_reduction(a.input(), b.input(), c.mode, c.axes, c.keepdims);
  ASSERT_EQ(exact.out_shape, sqdiff::reduced_shape(gmp::align(c.a_shape, c.b_shape, c.mode).shape, c.axes, c.keepdims))
      << c.describe();
  sqdiff::ReduceOptions options;
  options.broadcast = c.mode;
  options.axes = c.axes;
  options.keepdims = c.keepdims;
  options.threads = c.threads;
  for (const bool mean : {false, true}) {
    for (const DType out_type : output_types(c.input, mean)) {
      Array out = sentinel_array(out_type, exact.out_shape, layout_of(c.out_layout, exact.out_shape, rng, false));
      const std::vector<gmp::Expected> expected = gmp::round_reduction(exact, mean, out_type);
      const std::string what = c.describe() + " -> " + std::string(sqdiff::dtype_name(out_type)) + (mean ? " mean" : " sum") +
                               "; a " + text(a.layout) + ", b " + text(b.layout) + ", out " + text(out.layout);
      const auto run = [&] {
        if (mean) sqdiff::mean_squared_difference(a.view(), b.view(), out.mutable_view(), options);
        else sqdiff::sum_squared_difference(a.view(), b.view(), out.mutable_view(), options);
      };
      if (any_error(expected)) {
        EXPECT_THROW(run(), sqdiff::Error) << what;
        EXPECT_TRUE(untouched(out)) << what;
        continue;
      }
      ASSERT_NO_THROW(run()) << what;
      ASSERT_TRUE(output_matches(out, expected)) << what;
    }
  }
}

class RandomReductions : public ::testing::TestWithParam<DType> {};

TEST_P(RandomReductions, EqualTheExactValueRoundedOnce) {
  std::mt19937_64 rng(2026 + static_cast<int>(GetParam()));
  for (int i = 0; i < 400; ++i) {
    const Case c = random_case(GetParam(), rng);
    SCOPED_TRACE("case " + std::to_string(i));
    check_case(c, rng);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryInputType, RandomReductions, ::testing::ValuesIn(kAllTypes), type_param_name);

// Float cases again on every compiled SIMD target this CPU has (the test
// above runs the best one): each target has its own kernels.
TEST(RandomReductionsEveryTarget, EqualTheExactValueRoundedOnce) {
  for (const int64_t target : targets_to_run()) {
    const TargetGuard guard(target);
    for (const DType t : kFloatTypes) {
      std::mt19937_64 rng(7000 + static_cast<int>(t));
      for (int i = 0; i < 60; ++i) {
        SCOPED_TRACE(target_text(target) + ", case " + std::to_string(i));
        check_case(random_case(t, rng), rng);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// The layouts the fast paths specialise, big enough to take them, on every
// compiled target: the oracle's bits, and the fast path's own counter shows
// it rounded outputs.
struct FastShape {
  const char* name;
  Shape a, b;
  std::optional<Shape> axes;
};

class FastPathShapes : public ::testing::TestWithParam<DType> {};

TEST_P(FastPathShapes, EqualTheOracle) {
  const DType type = GetParam();
  const std::vector<FastShape> shapes = {
      {"all axes, long row", {40001}, {40001}, std::nullopt},
      {"last axis (per row)", {24, 1031}, {24, 1031}, Shape{-1}},
      {"first axis (per column)", {1031, 24}, {1031, 24}, Shape{0}},
      {"per channel", {3, 8, 17, 19}, {1, 8, 1, 1}, Shape{0, 2, 3}},
      {"pairwise", {21, 1, 131}, {1, 19, 131}, Shape{2}},
      {"pairwise, b first", {1, 19, 67}, {21, 1, 67}, Shape{-1}},
  };
  std::mt19937_64 rng(77 + static_cast<int>(type));
  ValueMix mix;
  mix.extremes = 0.001;
  const auto before = sqdiff::detail::fast_square_counts();
  for (const FastShape& s : shapes) {
    for (const LayoutKind layout : {LayoutKind::dense, LayoutKind::reversed}) {
      const Array a = random_array(type, s.a, layout_of(layout, s.a, rng, false), rng, mix);
      const Array b = random_array(type, s.b, dense_layout(s.b), rng, mix);
      const gmp::ExactReduction exact = gmp::exact_reduction(a.input(), b.input(), {}, s.axes, false);
      for (const bool mean : {false, true}) {
        for (const DType out_type : output_types(type, mean)) {
          for (const int64_t target : targets_to_run()) {
            const TargetGuard guard(target);
            const int threads = target == targets_to_run().front() ? 2 : 1;
            Array out = sentinel_array(out_type, exact.out_shape, dense_layout(exact.out_shape));
            sqdiff::ReduceOptions options;
            options.axes = s.axes;
            options.threads = threads;
            const auto run = [&] {
              if (mean) sqdiff::mean_squared_difference(a.view(), b.view(), out.mutable_view(), options);
              else sqdiff::sum_squared_difference(a.view(), b.view(), out.mutable_view(), options);
            };
            const std::string what = std::string(s.name) + " " + text(a.layout) + ", " +
                                     std::string(sqdiff::dtype_name(type)) + " -> " +
                                     std::string(sqdiff::dtype_name(out_type)) + (mean ? " mean" : " sum") + ", " +
                                     std::to_string(threads) + " threads, " + target_text(target);
            const std::vector<gmp::Expected> expected = gmp::round_reduction(exact, mean, out_type);
            if (any_error(expected)) {  // integer extremes: a sum beyond i64 / u64
              EXPECT_THROW(run(), sqdiff::Error) << what;
              EXPECT_TRUE(untouched(out)) << what;
              continue;
            }
            run();
            ASSERT_TRUE(output_matches(out, expected)) << what;
          }
        }
      }
    }
  }
  if (gmp::is_float(type)) {
    EXPECT_GT(sqdiff::detail::fast_square_counts().rounded, before.rounded) << "no output went through the fast paths";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryInputType, FastPathShapes, ::testing::ValuesIn(kAllTypes), type_param_name);

}  // namespace
