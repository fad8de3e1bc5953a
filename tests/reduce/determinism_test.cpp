// The reductions and gradients give the same bits for the same logical
// inputs whatever runs them (SPEC 7 and 8, "Determinism"): 1, 2, 3 and 7
// threads; every SIMD target compiled into the library that this CPU has
// (forced in turn with hwy::SetSupportedTargetsForTest); and copies of the
// inputs laid out reversed, gapped, transposed or all of these at once. The
// shapes are the fast paths' (all axes, rows, columns, per channel,
// pairwise) at sizes where the work is split across threads.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "reduce/gmp_oracle.hpp"
#include "reduce/reduce_test_support.hpp"

namespace {

namespace gmp = sqdiff_test::gmp;
using namespace sqdiff_test::reduce;

// A copy of a dense logical array in another layout.
Array relaid(const Array& dense, const Layout& layout) {
  Array copy{dense.dtype, dense.shape, layout, std::vector<unsigned char>(static_cast<std::size_t>(layout.extent) * gmp::size_of(dense.dtype), 0)};
  const std::vector<int64_t> from = offsets(dense.shape, dense.layout.strides), to = offsets(dense.shape, layout.strides);
  for (std::size_t i = 0; i < from.size(); ++i) copy.set_bits_at(to[i], dense.bits_at(from[i]));
  return copy;
}

struct Workload {
  const char* name;
  Shape a, b;
  std::optional<Shape> axes;
};

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> w = {
      // Each just above 2^16 terms, where the work is split across threads.
      {"all axes", {70001}, {70001}, std::nullopt},
      {"rows", {32, 2053}, {32, 2053}, Shape{-1}},
      {"columns", {2053, 32}, {32}, Shape{0}},
      {"per channel", {4, 16, 32, 33}, {1, 16, 1, 1}, Shape{0, 2, 3}},
      {"pairwise", {33, 1, 64}, {1, 33, 64}, Shape{2}},
  };
  return w;
}

// The output bytes of one reduction (dense output).
std::vector<unsigned char> reduce_bytes(const Array& a, const Array& b, const Workload& w, DType out, bool mean,
                                        int threads) {
  const Shape shape = gmp::align(a.shape, b.shape, {}).shape;
  const Shape out_shape = sqdiff::reduced_shape(shape, w.axes, false);
  Array o = sentinel_array(out, out_shape, dense_layout(out_shape));
  sqdiff::ReduceOptions options;
  options.axes = w.axes;
  options.threads = threads;
  if (mean) sqdiff::mean_squared_difference(a.view(), b.view(), o.mutable_view(), options);
  else sqdiff::sum_squared_difference(a.view(), b.view(), o.mutable_view(), options);
  return o.bytes;
}

// The same bytes; else the first differing element of type t, both ways.
::testing::AssertionResult same_bytes(DType t, const std::vector<unsigned char>& actual,
                                      const std::vector<unsigned char>& expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  if (actual.size() != expected.size()) return ::testing::AssertionFailure() << "sizes differ";
  const std::size_t size = gmp::size_of(t);
  int differ = 0;
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < actual.size() / size; ++i) {
    const uint64_t x = gmp::load_bits(&actual[i * size], size), y = gmp::load_bits(&expected[i * size], size);
    if (x != y && differ++ < 4) failure << "\n  element " << i << ": " << gmp::describe(t, x) << " vs " << gmp::describe(t, y);
  }
  return failure << "\n  " << differ << " elements differ";
}

class Determinism : public ::testing::TestWithParam<DType> {};

TEST_P(Determinism, ReductionsIgnoreThreadsTargetsAndLayout) {
  const DType t = GetParam();
  const std::vector<int64_t> targets = targets_to_run();
  ASSERT_FALSE(targets.empty());
  std::mt19937_64 rng(90210 + static_cast<int>(t));
  ValueMix mix;
  mix.extremes = 0.01;
  for (const Workload& w : workloads()) {
    const Array a = random_array(t, w.a, dense_layout(w.a), rng, mix);
    const Array b = random_array(t, w.b, dense_layout(w.b), rng, mix);
    std::vector<std::pair<Array, Array>> copies;
    for (const LayoutKind k : {LayoutKind::reversed, LayoutKind::gapped, LayoutKind::transposed, LayoutKind::mixed}) {
      copies.emplace_back(relaid(a, layout_of(k, w.a, rng, false)), relaid(b, layout_of(k, w.b, rng, false)));
    }
    // Sums into every output type (each has its own kernels and rounding);
    // means (the same sums, divided) into the first.
    for (const bool mean : {false, true}) {
      for (const DType o : output_types(t, mean)) {
        if (mean && o != output_types(t, mean).front()) continue;
        const std::string what = std::string(w.name) + ", " + std::string(sqdiff::dtype_name(t)) + " -> " +
                                 std::string(sqdiff::dtype_name(o)) + (mean ? " mean" : " sum");
        std::vector<unsigned char> reference;
        try {
          reference = reduce_bytes(a, b, w, o, mean, 1);
        } catch (const sqdiff::Error&) {
          continue;  // an integer sum beyond its output: the same Error everywhere (errors_test)
        }
        // Threads split the work the same way on every target, and the
        // targets' kernels do not depend on the split: 2, 3 and 7 threads on
        // the best target, every other target (float inputs: the integers'
        // sums are not SIMD) with one, each copy with one.
        for (const int threads : {2, 3, 7}) {
          EXPECT_TRUE(same_bytes(o, reduce_bytes(a, b, w, o, mean, threads), reference)) << what << ", " << threads << " threads";
        }
        for (std::size_t k = 1; gmp::is_float(t) && k < targets.size(); ++k) {
          const TargetGuard guard(targets[k]);
          EXPECT_TRUE(same_bytes(o, reduce_bytes(a, b, w, o, mean, 1), reference)) << what << ", " << hwy::TargetName(targets[k]);
        }
        for (const auto& [ca, cb] : copies) {
          EXPECT_TRUE(same_bytes(o, reduce_bytes(ca, cb, w, o, mean, 1), reference))
              << what << ", a " << text(ca.layout) << ", b " << text(cb.layout);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryInputType, Determinism,
                         ::testing::Values(DType::f16, DType::bf16, DType::f32, DType::f64, DType::i16, DType::u32),
                         type_param_name);

// Both gradients of squared_difference_backward (grad_a one term per element,
// grad_b summed over the rows) and of subtract_backward.
TEST(Determinism, GradientsIgnoreThreadsTargetsAndLayout) {
  const std::vector<int64_t> targets = targets_to_run();
  std::mt19937_64 rng(4711);
  ValueMix mix;
  mix.extremes = 0.01;
  const Shape a_shape{64, 1031}, b_shape{1031};
  for (const DType t : kFloatTypes) {
    const Array a = random_array(t, a_shape, dense_layout(a_shape), rng, mix);
    const Array b = random_array(t, b_shape, dense_layout(b_shape), rng, mix);
    const Array g = random_array(t, a_shape, dense_layout(a_shape), rng, mix);
    const auto run = [&](const Array& ca, const Array& cb, const Array& cg, int threads, bool subtract) {
      Array ga = sentinel_array(t, a_shape, dense_layout(a_shape)), gb = sentinel_array(t, b_shape, dense_layout(b_shape));
      const sqdiff::TensorView va = ga.mutable_view(), vb = gb.mutable_view();
      sqdiff::Options options;
      options.threads = threads;
      if (subtract) sqdiff::subtract_backward(cg.view(), &va, &vb, options);
      else sqdiff::squared_difference_backward(ca.view(), cb.view(), cg.view(), &va, &vb, options);
      std::vector<unsigned char> bytes = ga.bytes;
      bytes.insert(bytes.end(), gb.bytes.begin(), gb.bytes.end());
      return bytes;
    };
    for (const bool subtract : {false, true}) {
      const std::string what = std::string(sqdiff::dtype_name(t)) + (subtract ? " subtract_backward" : " squared_difference_backward");
      const std::vector<unsigned char> reference = run(a, b, g, 1, subtract);
      // As for the reductions: threads on the best target, every other
      // target and every copy with one.
      for (const int threads : {2, 3, 7}) {
        EXPECT_TRUE(same_bytes(t, run(a, b, g, threads, subtract), reference)) << what << ", " << threads << " threads";
      }
      for (std::size_t k = 1; k < targets.size(); ++k) {
        const TargetGuard guard(targets[k]);
        EXPECT_TRUE(same_bytes(t, run(a, b, g, 1, subtract), reference)) << what << ", " << hwy::TargetName(targets[k]);
      }
      for (const LayoutKind k : {LayoutKind::reversed, LayoutKind::gapped, LayoutKind::transposed, LayoutKind::mixed}) {
        const Array ca = relaid(a, layout_of(k, a_shape, rng, false)), cb = relaid(b, layout_of(k, b_shape, rng, false)),
                    cg = relaid(g, layout_of(k, a_shape, rng, false));
        EXPECT_TRUE(same_bytes(t, run(ca, cb, cg, 1, subtract), reference)) << what << ", " << text(ca.layout) << ", " << text(cg.layout);
      }
    }
  }
}

// Forcing a target does change the one the library runs with (else the
// loops above would test one target many times).
TEST(Determinism, TargetsAreReallyForced) {
  for (const int64_t target : targets_to_run()) {
    const TargetGuard guard(target);
    EXPECT_EQ(sqdiff::active_simd_target(), hwy::TargetName(target));
  }
  std::cout << "targets run:";
  for (const int64_t target : targets_to_run()) std::cout << " " << hwy::TargetName(target);
  std::cout << "\n";
}

}  // namespace
