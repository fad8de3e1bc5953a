// squared_difference_backward and subtract_backward (SPEC section 8):
//  - against the GMP oracle bit for bit: random cases of every float type,
//    none/numpy/pdpd with broadcasts that need summation, ranks 0-4, inputs
//    and gradients in reversed/gapped/transposed layouts, either gradient
//    skipped (null), 1-7 threads; and large same-shape and summed cases that
//    take the SIMD paths;
//  - against central finite differences of the loss in f64;
//  - integer types are an Error, and nothing is written;
//  - gradients aliasing inputs (in place, swapped, shifted) give the
//    as-if-copied result, also with both gradients asked for;
//  - summed gradients of tiny terms (issue 21): f64 products that underflow
//    or straddle the subnormal range, and exact sums that are negative and
//    tiny (rounding to -0 or to the smallest subnormal), in every float type,
//    with the fast paths on and off.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "reduce/fast_squares.hpp"
#include "runtime/cache_info.hpp"
#include "reduce/gmp_oracle.hpp"
#include "reduce/reduce_test_support.hpp"
#include "test_support.hpp"

namespace {

namespace gmp = sqdiff_test::gmp;
using namespace sqdiff_test::reduce;

struct GradientCase {
  DType type = DType::f32;
  Broadcast mode;
  Shape a_shape, b_shape;
  bool want_a = true, want_b = true;
  int threads = 1;

  std::string describe() const {
    return std::string(sqdiff::dtype_name(type)) + " a " + text(a_shape) + " b " + text(b_shape) + " (" + text(mode) +
           ")" + (want_a ? "" : " no grad_a") + (want_b ? "" : " no grad_b") + ", " + std::to_string(threads) +
           " threads";
  }
};

GradientCase random_gradient_case(DType type, std::mt19937_64& rng) {
  GradientCase c;
  c.type = type;
  const RandomBroadcast shapes = random_broadcast({5, 40, 30, 1500, 3}, rng);
  c.mode = shapes.mode;
  c.a_shape = shapes.a_shape;
  c.b_shape = shapes.b_shape;
  const auto which = rng() % 4;
  c.want_a = which != 1;
  c.want_b = which != 2;
  const int threads[] = {1, 2, 3, 7};
  c.threads = threads[rng() % 4];
  return c;
}

// Runs one case of squared_difference_backward (subtract = false) or
// subtract_backward, with random layouts, against the oracle, on each of
// `targets` (0: the best one).
void check_gradient_case(const GradientCase& c, bool subtract, std::mt19937_64& rng, const ValueMix& mix,
                         const std::vector<int64_t>& targets = {0}) {
  const Shape shape = gmp::align(c.a_shape, c.b_shape, c.mode).shape;
  const Array a = random_array(c.type, c.a_shape, layout_of(kLayoutKinds[rng() % 6], c.a_shape, rng, true), rng, mix);
  const Array b = random_array(c.type, c.b_shape, layout_of(kLayoutKinds[rng() % 6], c.b_shape, rng, true), rng, mix);
  const Array g = random_array(c.type, shape, layout_of(kLayoutKinds[rng() % 6], shape, rng, true), rng, mix);
  const LayoutKind output_kinds[] = {LayoutKind::dense, LayoutKind::reversed, LayoutKind::gapped, LayoutKind::transposed};
  const Layout layout_a = layout_of(output_kinds[rng() % 4], c.a_shape, rng, false);
  const Layout layout_b = layout_of(output_kinds[rng() % 4], c.b_shape, rng, false);
  // subtract_backward: a skipped gradient's input has grad_out's shape.
  const Shape a_shape = subtract && !c.want_a ? shape : c.a_shape;
  const Shape b_shape = subtract && !c.want_b ? shape : c.b_shape;
  std::vector<gmp::Expected> expected[2];
  for (int which = 0; which < 2; ++which) {
    if (!(which == 0 ? c.want_a : c.want_b)) continue;
    expected[which] = subtract ? gmp::subtract_gradient(g.input(), a_shape, b_shape, c.mode, which)
                               : gmp::squared_difference_gradient(a.input(), b.input(), g.input(), c.mode, which);
  }
  for (const int64_t target : targets) {
    const TargetGuard guard(target);
    Array grad_a = sentinel_array(c.type, c.a_shape, layout_a);
    Array grad_b = sentinel_array(c.type, c.b_shape, layout_b);
    const sqdiff::TensorView va = grad_a.mutable_view(), vb = grad_b.mutable_view();
    sqdiff::Options options;
    options.broadcast = c.mode;
    options.threads = c.threads;
    const std::string what = c.describe() + (subtract ? ", subtract_backward" : ", squared_difference_backward") +
                             "; a " + text(a.layout) + ", b " + text(b.layout) + ", g " + text(g.layout) + ", grad_a " +
                             text(grad_a.layout) + ", grad_b " + text(grad_b.layout) + ", " + target_text(target);
    if (subtract) {
      sqdiff::subtract_backward(g.view(), c.want_a ? &va : nullptr, c.want_b ? &vb : nullptr, options);
    } else {
      sqdiff::squared_difference_backward(a.view(), b.view(), g.view(), c.want_a ? &va : nullptr,
                                          c.want_b ? &vb : nullptr, options);
    }
    for (int which = 0; which < 2; ++which) {
      const Array& grad = which == 0 ? grad_a : grad_b;
      if (!(which == 0 ? c.want_a : c.want_b)) {
        EXPECT_TRUE(untouched(grad)) << what;
        continue;
      }
      ASSERT_TRUE(output_matches(grad, expected[which])) << (which == 0 ? "grad_a: " : "grad_b: ") << what;
    }
  }
}

class RandomGradients : public ::testing::TestWithParam<DType> {};

TEST_P(RandomGradients, EqualTheExactValueRoundedOnce) {
  std::mt19937_64 rng(808 + static_cast<int>(GetParam()));
  for (int i = 0; i < 300; ++i) {
    GradientCase c = random_gradient_case(GetParam(), rng);
    // subtract_backward reads only grad_out: a skipped side must be one that
    // broadcasting does not need (its input is taken to have grad_out's shape).
    const bool subtract = i % 2 == 1;
    if (subtract && !(c.want_a && c.want_b)) {
      const Shape shape = gmp::align(c.a_shape, c.b_shape, c.mode).shape;
      if (!c.want_a) c.a_shape = shape;
      if (!c.want_b) c.b_shape = shape;
      try {
        gmp::align(c.a_shape, c.b_shape, c.mode);
      } catch (const std::logic_error&) {
        continue;  // pdpd: b now larger than a
      }
      if (gmp::align(c.a_shape, c.b_shape, c.mode).shape != shape) continue;
    }
    ValueMix mix;
    mix.specials = rng() % 5 == 0 ? 0.02 : 0;
    mix.extremes = rng() % 3 == 0 ? 0.1 : 0.01;
    SCOPED_TRACE("case " + std::to_string(i));
    check_gradient_case(c, subtract, rng, mix);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFloatType, RandomGradients, ::testing::ValuesIn(kFloatTypes), type_param_name);

// Sizes the SIMD gradient kernels take: same shapes (one term per element),
// a row vector and a column vector to sum over, a scalar; on every compiled
// target the CPU has.
TEST(Gradients, LargeCasesEqualTheOracle) {
  std::mt19937_64 rng(99);
  struct Large {
    Shape a, b;
  };
  const std::vector<Large> cases = {{{20011}, {20011}}, {{64, 301}, {301}}, {{300, 67}, {300, 1}}, {{1}, {9001}},
                                    {{13, 1, 71}, {1, 17, 71}}};
  for (const DType t : kFloatTypes) {
    for (const Large& l : cases) {
      for (const bool subtract : {false, true}) {
        GradientCase c;
        c.type = t;
        c.a_shape = l.a;
        c.b_shape = l.b;
        c.threads = 2;
        ValueMix mix;
        mix.specials = 0.0005;
        mix.extremes = 0.02;
        check_gradient_case(c, subtract, rng, mix, targets_to_run());
      }
    }
  }
}

// ---------------------------------------------------------------------------
// mean_squared_difference_backward: 2 (a - b) / n summed to each input's
// shape, the division included in the one rounding.

// The bits of 1 in float type t, for the oracle's grad_out of ones.
uint64_t one_bits(DType t) {
  switch (t) {
    case DType::f16: return 0x3C00;
    case DType::bf16: return 0x3F80;
    case DType::f32: return std::bit_cast<uint32_t>(1.0f);
    default: return std::bit_cast<uint64_t>(1.0);
  }
}

void check_mean_gradient_case(const GradientCase& c, std::mt19937_64& rng, const ValueMix& mix,
                              const std::vector<int64_t>& targets = {0}) {
  const Shape shape = gmp::align(c.a_shape, c.b_shape, c.mode).shape;
  const Array a = random_array(c.type, c.a_shape, layout_of(kLayoutKinds[rng() % 6], c.a_shape, rng, true), rng, mix);
  const Array b = random_array(c.type, c.b_shape, layout_of(kLayoutKinds[rng() % 6], c.b_shape, rng, true), rng, mix);
  unsigned char one[8];
  gmp::store_bits(one, gmp::size_of(c.type), one_bits(c.type));
  const gmp::Input ones{c.type, one, shape, Shape(shape.size(), 0)};
  const int64_t n = count_of(shape);
  std::vector<gmp::Expected> expected[2];
  for (int which = 0; which < 2; ++which) {
    if (which == 0 ? c.want_a : c.want_b) {
      expected[which] = gmp::squared_difference_gradient(a.input(), b.input(), ones, c.mode, which, n);
    }
  }
  for (const int64_t target : targets) {
    const TargetGuard guard(target);
    Array grad_a = sentinel_array(c.type, c.a_shape, layout_of(LayoutKind::dense, c.a_shape, rng, false));
    Array grad_b = sentinel_array(c.type, c.b_shape, layout_of(LayoutKind::reversed, c.b_shape, rng, false));
    const sqdiff::TensorView va = grad_a.mutable_view(), vb = grad_b.mutable_view();
    sqdiff::Options options;
    options.broadcast = c.mode;
    options.threads = c.threads;
    const std::string what = c.describe() + ", mean_squared_difference_backward; a " + text(a.layout) + ", b " +
                             text(b.layout) + ", " + target_text(target);
    sqdiff::mean_squared_difference_backward(a.view(), b.view(), c.want_a ? &va : nullptr, c.want_b ? &vb : nullptr,
                                             options);
    for (int which = 0; which < 2; ++which) {
      const Array& grad = which == 0 ? grad_a : grad_b;
      if (!(which == 0 ? c.want_a : c.want_b)) {
        EXPECT_TRUE(untouched(grad)) << what;
        continue;
      }
      ASSERT_TRUE(output_matches(grad, expected[which])) << (which == 0 ? "grad_a: " : "grad_b: ") << what;
    }
  }
}

class RandomMeanGradients : public ::testing::TestWithParam<DType> {};

TEST_P(RandomMeanGradients, EqualTheExactQuotientRoundedOnce) {
  std::mt19937_64 rng(4242 + static_cast<int>(GetParam()));
  for (int i = 0; i < 200; ++i) {
    const GradientCase c = random_gradient_case(GetParam(), rng);
    ValueMix mix;
    mix.specials = rng() % 5 == 0 ? 0.02 : 0;
    mix.extremes = rng() % 3 == 0 ? 0.1 : 0.01;
    SCOPED_TRACE("case " + std::to_string(i));
    check_mean_gradient_case(c, rng, mix);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFloatType, RandomMeanGradients, ::testing::ValuesIn(kFloatTypes), type_param_name);

// Divisors with odd factors (3, 7, 20011), a power of two, one beyond 2^53's
// double division is not needed for; same shapes and summed ones; every target.
TEST(MeanGradients, LargeCasesEqualTheOracle) {
  std::mt19937_64 rng(7);
  struct Large {
    Shape a, b;
  };
  const std::vector<Large> cases = {{{20011}, {20011}}, {{3}, {1}}, {{64, 7}, {7}}, {{300, 67}, {300, 1}},
                                    {{1}, {4096}}, {{13, 1, 71}, {1, 17, 71}}};
  for (const DType t : kFloatTypes) {
    for (const Large& l : cases) {
      GradientCase c;
      c.type = t;
      c.a_shape = l.a;
      c.b_shape = l.b;
      c.threads = 2;
      ValueMix mix;
      mix.specials = 0.0005;
      mix.extremes = 0.02;
      check_mean_gradient_case(c, rng, mix, targets_to_run());
      if (HasFatalFailure()) return;
    }
  }
}

// With the fast paths off every output is divided on the exact path: the same bits.
TEST(MeanGradients, ExactPathGivesTheSameBits) {
  std::mt19937_64 rng(11);
  sqdiff::detail::set_fast_square_reductions(false);
  for (const DType t : kFloatTypes) {
    for (int i = 0; i < 40 && !HasFatalFailure(); ++i) check_mean_gradient_case(random_gradient_case(t, rng), rng, ValueMix{});
  }
  sqdiff::detail::set_fast_square_reductions(true);
}

// No elements: the gradients are sums of no terms, +0, never 0/0.
TEST(MeanGradients, AnEmptyBroadcastShapeGivesZeros) {
  for (const DType t : kFloatTypes) {
    Array grad_a = sentinel_array(t, {3, 1}, dense_layout({3, 1}));
    const sqdiff::TensorView va = grad_a.mutable_view();
    sqdiff::mean_squared_difference_backward({nullptr, t, {3, 1}}, {nullptr, t, {0}}, &va, nullptr);
    EXPECT_TRUE(output_matches(grad_a, std::vector<gmp::Expected>(3))) << sqdiff::dtype_name(t);
  }
}

TEST(MeanGradients, IntegerAndMixedTypesAreErrors) {
  const int32_t ints[2] = {1, 2};
  int32_t out[2] = {7, 7};
  const sqdiff::TensorView grad{out, DType::i32, {2}};
  EXPECT_THROW(sqdiff::mean_squared_difference_backward({ints, DType::i32, {2}}, {ints, DType::i32, {2}}, &grad, nullptr),
               sqdiff::Error);
  EXPECT_EQ(out[0], 7);
  const float f[2] = {1, 2};
  const double d[2] = {1, 2};
  float fo[2] = {7, 7};
  const sqdiff::TensorView fgrad{fo, DType::f32, {2}};
  try {
    sqdiff::mean_squared_difference_backward({f, DType::f32, {2}}, {d, DType::f64, {2}}, &fgrad, nullptr);
    ADD_FAILURE() << "mixed types were accepted";
  } catch (const sqdiff::Error& e) {
    EXPECT_NE(std::string(e.what()).find("mean_squared_difference_backward: b is f64, not f32 like a"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fo[0], 7.0f);
}

// The loss L = sum over the broadcast shape of g (a - b)^2 (or g (a - b)
// for subtract), in long double, with `delta` added to element `index` of a
// (side 0) or b (side 1); with `magnitude`, the sum of |g| (|a| + |b| + |delta|)^2
// (or |g| (|a| + |b| + |delta|)) instead: what the rounding error of L scales with.
struct LossInputs {
  const std::vector<double>& a;
  const std::vector<double>& b;
  const std::vector<double>& g;
  const Shape& a_shape;
  const Shape& b_shape;
  Broadcast mode;
  bool subtract;
};

long double loss(const LossInputs& in, int side, int64_t index, long double delta, bool magnitude) {
  const gmp::Alignment al = gmp::align(in.a_shape, in.b_shape, in.mode);
  long double sum = 0;
  int64_t k = 0;
  gmp::for_each_broadcast_index(al.shape, [&](const std::vector<int64_t>& idx) {
    const int64_t ia = gmp::own_linear_index(in.a_shape, al.a_dim, idx);
    const int64_t ib = gmp::own_linear_index(in.b_shape, al.b_dim, idx);
    long double x = in.a[static_cast<std::size_t>(ia)], y = in.b[static_cast<std::size_t>(ib)];
    if (side == 0 && ia == index) x += delta;
    if (side == 1 && ib == index) y += delta;
    const long double w = in.g[static_cast<std::size_t>(k++)];
    if (magnitude) {
      const long double m = std::fabs(x) + std::fabs(y) + std::fabs(delta);
      sum += std::fabs(w) * (in.subtract ? m : m * m);
    } else {
      sum += in.subtract ? w * (x - y) : w * (x - y) * (x - y);
    }
  });
  return sum;
}

// Central differences of L agree with the gradients. L is quadratic in each
// element, so the central difference (L(x + h) - L(x - h)) / 2h has no
// truncation error, only the rounding of L's evaluation: the steps x +- h
// are exact in long double (h a power of two near 2^-10 |x|), each of L's
// terms and additions rounds by at most 2^-64 relative, so the difference is
// within n 2^-62 magnitude / h; the documented tolerance is 2^-50 magnitude / h
// (plus 1e-300 for zeros), far tighter than any f64 gradient error would pass.
TEST(Gradients, AgreeWithCentralFiniteDifferences) {
  std::mt19937_64 rng(5150);
  std::normal_distribution<double> normal;
  struct FdCase {
    Shape a, b;
    Broadcast mode;
  };
  const std::vector<FdCase> cases = {{{6}, {6}, {}},
                                     {{4, 5}, {5}, {}},
                                     {{3, 1, 4}, {2, 1}, {}},
                                     {{2, 3, 4}, {3}, {BroadcastKind::pdpd, 1}},
                                     {{}, {7}, {}}};
  int checked = 0;
  for (const FdCase& fc : cases) {
    const Shape shape = gmp::align(fc.a, fc.b, fc.mode).shape;
    std::vector<double> a(static_cast<std::size_t>(count_of(fc.a))), b(static_cast<std::size_t>(count_of(fc.b))),
        g(static_cast<std::size_t>(count_of(shape)));
    for (auto* v : {&a, &b, &g}) {
      for (double& x : *v) x = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 7) - 3);
    }
    for (const bool subtract : {false, true}) {
      std::vector<double> grad_a(a.size()), grad_b(b.size());
      sqdiff::TensorView va{grad_a.data(), DType::f64, fc.a}, vb{grad_b.data(), DType::f64, fc.b};
      sqdiff::Options options;
      options.broadcast = fc.mode;
      if (subtract) {
        sqdiff::subtract_backward({g.data(), DType::f64, shape}, &va, &vb, options);
      } else {
        sqdiff::squared_difference_backward({a.data(), DType::f64, fc.a}, {b.data(), DType::f64, fc.b},
                                            {g.data(), DType::f64, shape}, &va, &vb, options);
      }
      const LossInputs in{a, b, g, fc.a, fc.b, fc.mode, subtract};
      for (int side = 0; side < 2; ++side) {
        const std::vector<double>& x = side == 0 ? a : b;
        const std::vector<double>& grad = side == 0 ? grad_a : grad_b;
        for (std::size_t i = 0; i < x.size(); ++i) {
          int e = 0;
          std::frexp(std::max(1.0, std::fabs(x[i])), &e);
          const long double h = std::ldexp(1.0L, e - 10);
          const auto at = static_cast<int64_t>(i);
          const long double fd = (loss(in, side, at, h, false) - loss(in, side, at, -h, false)) / (2 * h);
          const long double tolerance = std::ldexp(loss(in, side, at, h, true), -50) / h + 1e-300L;
          EXPECT_LE(std::fabs(static_cast<long double>(grad[i]) - fd), tolerance)
              << (side == 0 ? "grad_a[" : "grad_b[") << i << "] = " << grad[i] << ", finite difference "
              << static_cast<double>(fd) << "; a " << text(fc.a) << " b " << text(fc.b)
              << (subtract ? " subtract" : " squared_difference");
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * (6 + 6 + 20 + 5 + 12 + 2 + 24 + 3 + 1 + 7));
}

TEST(Gradients, IntegerTypesAreAnErrorAndWriteNothing) {
  for (const DType t : {DType::i8, DType::i16, DType::i32, DType::i64, DType::u8, DType::u16, DType::u32, DType::u64}) {
    std::vector<unsigned char> a(64, 1), b(64, 2), g(64, 3);
    Array grad_a = sentinel_array(t, {4}, dense_layout({4})), grad_b = sentinel_array(t, {4}, dense_layout({4}));
    const sqdiff::TensorView va = grad_a.mutable_view(), vb = grad_b.mutable_view();
    const std::string m1 = sqdiff_test::error_message([&] {
      sqdiff::squared_difference_backward({a.data(), t, {4}}, {b.data(), t, {4}}, {g.data(), t, {4}}, &va, &vb);
    });
    EXPECT_NE(m1.find("float types only"), std::string::npos) << m1;
    const std::string m2 = sqdiff_test::error_message([&] { sqdiff::subtract_backward({g.data(), t, {4}}, &va, &vb); });
    EXPECT_NE(m2.find("float types only"), std::string::npos) << m2;
    EXPECT_TRUE(untouched(grad_a)) << sqdiff::dtype_name(t);
    EXPECT_TRUE(untouched(grad_b)) << sqdiff::dtype_name(t);
  }
}

// A gradient whose memory is an input's gives the result of reading every
// input first (SPEC 4 and 8): in place, swapped (grad_a on b and grad_b on a,
// both asked for), on grad_out, and shifted by one element.
TEST(Gradients, AliasingAnInputIsAsIfCopied) {
  std::mt19937_64 rng(1234);
  ValueMix mix;
  for (const DType t : kFloatTypes) {
    for (const int64_t n : {int64_t{37}, int64_t{5003}}) {
      const std::size_t size = gmp::size_of(t);
      const auto fresh = [&](int64_t count) {
        return random_array(t, {count}, dense_layout({count}), rng, mix);
      };
      const Array a0 = fresh(n + 1), b0 = fresh(n + 1), g0 = fresh(n + 1);
      // The oracle from untouched copies (the first n elements of each).
      const gmp::Input ia{t, a0.origin(), {n}}, ib{t, b0.origin(), {n}}, ig{t, g0.origin(), {n}};
      const auto expect_a = gmp::squared_difference_gradient(ia, ib, ig, {}, 0);
      const auto expect_b = gmp::squared_difference_gradient(ia, ib, ig, {}, 1);
      const auto sub_a = gmp::subtract_gradient(ig, {n}, {n}, {}, 0);
      const auto sub_b = gmp::subtract_gradient(ig, {n}, {n}, {}, 1);
      struct Arrangement {
        const char* name;
        int grad_a_on;  // 0: a, 1: b, 2: g, -1: its own buffer
        int grad_b_on;
        int64_t shift;  // elements the gradients start after their input
      };
      const Arrangement arrangements[] = {{"grad_a in place on a", 0, -1, 0}, {"grad_b in place on b", -1, 1, 0},
                                          {"both in place", 0, 1, 0},         {"swapped: grad_a on b, grad_b on a", 1, 0, 0},
                                          {"grad_a on g, grad_b on a", 2, 0, 0}, {"both shifted by one", 0, 1, 1},
                                          {"swapped and shifted", 1, 0, 1}};
      for (const Arrangement& arr : arrangements) {
        for (const bool subtract : {false, true}) {
          for (const int threads : {1, 2}) {
            Array a = a0, b = b0, g = g0;
            Array own_a = sentinel_array(t, {n}, dense_layout({n})), own_b = sentinel_array(t, {n}, dense_layout({n}));
            Array* buffers[3] = {&a, &b, &g};
            const auto place = [&](int on, Array& own) -> sqdiff::TensorView {
              if (on < 0) return own.mutable_view();
              return {buffers[on]->origin() + arr.shift * static_cast<int64_t>(size), t, {n}};
            };
            const sqdiff::TensorView va = place(arr.grad_a_on, own_a), vb = place(arr.grad_b_on, own_b);
            const sqdiff::ConstTensorView ca{a.origin(), t, {n}}, cb{b.origin(), t, {n}}, cg{g.origin(), t, {n}};
            sqdiff::Options options;
            options.threads = threads;
            if (subtract) sqdiff::subtract_backward(cg, &va, &vb, options);
            else sqdiff::squared_difference_backward(ca, cb, cg, &va, &vb, options);
            for (int side = 0; side < 2; ++side) {
              const sqdiff::TensorView& v = side == 0 ? va : vb;
              const auto& expected = subtract ? (side == 0 ? sub_a : sub_b) : (side == 0 ? expect_a : expect_b);
              int misses = 0;
              for (int64_t i = 0; i < n; ++i) {
                const uint64_t actual = gmp::output_bits(t, v.data, i);
                if (!gmp::matches(t, expected[static_cast<std::size_t>(i)], actual) && misses++ < 3) {
                  ADD_FAILURE() << arr.name << (subtract ? ", subtract" : ", squared_difference") << ", "
                                << sqdiff::dtype_name(t) << ", n " << n << ", " << threads << " threads: "
                                << (side == 0 ? "grad_a[" : "grad_b[") << i << "] expected "
                                << gmp::describe(t, expected[static_cast<std::size_t>(i)].bits) << ", got "
                                << gmp::describe(t, actual);
                }
              }
            }
          }
        }
      }
    }
  }
}

// A call that moves more than the last-level cache holds writes its outputs
// with non-temporal stores (gradient_run.cpp): the same bits as the same call
// made in pieces small enough to store plainly, on 1 and 2 threads, with
// elements the kernel leaves to the exact path among them (specials, extremes)
// and grad_b misaligned against grad_a by one element. The cache is taken as
// 8 MiB whatever the machine's, which keeps the arrays small.
TEST(Gradients, CallsBeyondTheLastLevelCacheWriteTheSameBits) {
  struct CacheOverride {
    CacheOverride() { sqdiff::detail::override_last_level_cache_bytes(std::size_t{8} << 20); }
    ~CacheOverride() { sqdiff::detail::override_last_level_cache_bytes(0); }
  } const cache_override;
  std::mt19937_64 rng(0x57EA);
  ValueMix mix;
  mix.specials = 0.01;
  // f32 only: the kernels' streaming of every type is gradient_kernels_test's.
  for (const DType t : {DType::f32}) {
    const std::size_t size = gmp::size_of(t);
    // Five arrays of n elements, a fifth more than the cache, and a partial vector at the end.
    const auto n = static_cast<int64_t>(sqdiff::detail::last_level_cache_bytes() / (5 * size) * 6 / 5 + 7);
    // 64K random elements repeated (at an odd period, so that the repeats
    // fall at every alignment): random values throughout cost minutes under ASan.
    const auto repeated = [&] {
      const int64_t period = 65537;
      const Array some = random_array(t, {period}, dense_layout({period}), rng, mix);
      Array all = sentinel_array(t, {n}, dense_layout({n}));
      for (int64_t at = 0; at < n; at += period) {
        std::memcpy(all.origin() + at * static_cast<int64_t>(size), some.origin(),
                    static_cast<std::size_t>(std::min(period, n - at)) * size);
      }
      return all;
    };
    const Array a = repeated(), b = repeated(), g = repeated();
    const sqdiff::ConstTensorView ca{a.origin(), t, {n}}, cb{b.origin(), t, {n}}, cg{g.origin(), t, {n}};
    // The expected bits: pieces that move at most a quarter of the cache each.
    const auto piece_elements = static_cast<int64_t>(sqdiff::detail::last_level_cache_bytes() / (5 * size) / 4);
    Array want_a = sentinel_array(t, {n}, dense_layout({n})), want_b = sentinel_array(t, {n}, dense_layout({n}));
    for (int64_t at = 0; at < n; at += piece_elements) {
      const int64_t count = std::min<int64_t>(piece_elements, n - at);
      const auto piece = [&](const Array& x) {
        return sqdiff::ConstTensorView{x.origin() + at * static_cast<int64_t>(size), t, {count}};
      };
      const sqdiff::TensorView pa{want_a.origin() + at * static_cast<int64_t>(size), t, {count}};
      const sqdiff::TensorView pb{want_b.origin() + at * static_cast<int64_t>(size), t, {count}};
      sqdiff::squared_difference_backward(piece(a), piece(b), piece(g), &pa, &pb);
    }
    for (const int threads : {1, 2}) {
      Array got_a = sentinel_array(t, {n}, dense_layout({n})), got_b = sentinel_array(t, {n + 1}, dense_layout({n + 1}));
      const sqdiff::TensorView va{got_a.origin(), t, {n}};
      const sqdiff::TensorView vb{got_b.origin() + static_cast<int64_t>(size), t, {n}};
      sqdiff::Options options;
      options.threads = threads;
      sqdiff::squared_difference_backward(ca, cb, cg, &va, &vb, options);
      EXPECT_EQ(std::memcmp(va.data, want_a.origin(), static_cast<std::size_t>(n) * size), 0)
          << sqdiff::dtype_name(t) << ", " << threads << " threads: grad_a differs from the call in pieces";
      EXPECT_EQ(std::memcmp(vb.data, want_b.origin(), static_cast<std::size_t>(n) * size), 0)
          << sqdiff::dtype_name(t) << ", " << threads << " threads: grad_b differs from the call in pieces";
    }
  }
}

// Gradients over an empty broadcast shape: every element of a non-empty
// gradient is +0 (a sum of no terms), and nothing is read.
TEST(Gradients, SumsOfNoTermsAreZero) {
  for (const DType t : kFloatTypes) {
    Array grad_a = sentinel_array(t, {3, 1}, dense_layout({3, 1}));
    const sqdiff::TensorView va = grad_a.mutable_view();
    sqdiff::squared_difference_backward({nullptr, t, {3, 1}}, {nullptr, t, {0}}, {nullptr, t, {3, 0}}, &va, nullptr);
    EXPECT_TRUE(output_matches(grad_a, std::vector<gmp::Expected>(3))) << sqdiff::dtype_name(t);
    Array sub_a = sentinel_array(t, {3, 1}, dense_layout({3, 1}));
    const sqdiff::TensorView vs = sub_a.mutable_view();
    sqdiff::TensorView empty_b{nullptr, t, {0}};
    sqdiff::subtract_backward({nullptr, t, {3, 0}}, &vs, &empty_b);
    EXPECT_TRUE(output_matches(sub_a, std::vector<gmp::Expected>(3))) << sqdiff::dtype_name(t);
  }
}

// ---------------------------------------------------------------------------
// Summed gradients of tiny terms (issue 21). A summed gradient's fast path
// adds double products; one that underflows (to 0 or to a subnormal that
// lost bits) is not the exact term, so its output must be summed exactly.

// `v` (exactly representable) as the bits of float type t.
uint64_t bits_of(DType t, double v) {
  switch (t) {
    case DType::f16: return sqdiff::float16(static_cast<float>(v)).bits();
    case DType::bf16: return sqdiff::bfloat16(static_cast<float>(v)).bits();
    case DType::f32: return std::bit_cast<uint32_t>(static_cast<float>(v));
    default: return std::bit_cast<uint64_t>(v);
  }
}

// The value of float type t's `bits`.
double value_of(DType t, uint64_t bits) {
  const auto half = static_cast<uint16_t>(bits);
  switch (t) {
    case DType::f16: return static_cast<float>(sqdiff::float16::from_bits(half));
    case DType::bf16: return static_cast<float>(sqdiff::bfloat16::from_bits(half));
    case DType::f32: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    default: return std::bit_cast<double>(bits);
  }
}

// A dense array of `shape` holding `values`, repeated to fill it.
Array array_of(DType t, const Shape& shape, const std::vector<double>& values) {
  Array a{t, shape, dense_layout(shape), {}};
  a.bytes.assign(static_cast<std::size_t>(a.layout.extent) * gmp::size_of(t), 0);
  for (int64_t i = 0; i < count_of(shape); ++i) {
    const double v = values[static_cast<std::size_t>(i) % values.size()];
    const uint64_t bits = bits_of(t, v);
    EXPECT_EQ(std::bit_cast<uint64_t>(value_of(t, bits)), std::bit_cast<uint64_t>(v))
        << v << " is not a value of " << sqdiff::dtype_name(t);
    a.set_bits_at(i, bits);
  }
  return a;
}

// The reductions' fast paths on or off (off: every output summed exactly)
// for the guard's lifetime; on again after.
class FastPaths {
 public:
  explicit FastPaths(bool enabled) { sqdiff::detail::set_fast_square_reductions(enabled); }
  ~FastPaths() { sqdiff::detail::set_fast_square_reductions(true); }
  FastPaths(const FastPaths&) = delete;
  FastPaths& operator=(const FastPaths&) = delete;
};

// grad_a and grad_b of one call.
struct Gradients {
  Array a, b;
};

// Both gradients of squared_difference_backward(a, b, g) (or of
// subtract_backward(g), for inputs of a's and b's shapes), numpy broadcast,
// with the fast paths on and off and on 1 and 2 threads, each equal to the
// GMP oracle. Returns the last run's gradients, for checks by hand.
Gradients check_tiny_case(const Array& a, const Array& b, const Array& g, bool subtract, const std::string& name) {
  const DType t = g.dtype;
  std::vector<gmp::Expected> expected[2];
  for (int which = 0; which < 2; ++which) {
    expected[which] = subtract ? gmp::subtract_gradient(g.input(), a.shape, b.shape, {}, which)
                               : gmp::squared_difference_gradient(a.input(), b.input(), g.input(), {}, which);
  }
  Gradients grads{sentinel_array(t, a.shape, dense_layout(a.shape)), sentinel_array(t, b.shape, dense_layout(b.shape))};
  for (const bool fast : {true, false}) {
    for (const int threads : {1, 2}) {
      const FastPaths paths(fast);
      grads = {sentinel_array(t, a.shape, dense_layout(a.shape)), sentinel_array(t, b.shape, dense_layout(b.shape))};
      const sqdiff::TensorView va = grads.a.mutable_view(), vb = grads.b.mutable_view();
      sqdiff::Options options;
      options.threads = threads;
      if (subtract) {
        sqdiff::subtract_backward(g.view(), &va, &vb, options);
      } else {
        sqdiff::squared_difference_backward(a.view(), b.view(), g.view(), &va, &vb, options);
      }
      const std::string what = name + ", " + std::string(sqdiff::dtype_name(t)) + " a " + text(a.shape) + " b " +
                               text(b.shape) + (subtract ? ", subtract_backward" : ", squared_difference_backward") +
                               (fast ? ", fast paths" : ", exact path only") + ", " + std::to_string(threads) +
                               " threads";
      EXPECT_TRUE(output_matches(grads.a, expected[0])) << "grad_a: " << what;
      EXPECT_TRUE(output_matches(grads.b, expected[1])) << "grad_b: " << what;
    }
  }
  return grads;
}

double f64_at(const Array& a, int64_t i) { return std::bit_cast<double>(a.bits_at(i)); }

// The example: a = full(n, 2^-538), b = 0, g = full(n, 2^-539). Each
// term 2 (a - b) g is 2^-1076, a quarter of the smallest subnormal, so grad_b
// (a sum over the broadcast b) is -n/4 2^-1074 rounded once: -0 for n = 1 and
// 2 (a tie, to even), -2^-1074 for n = 3 to 5, -250 2^-1074 for n = 1000;
// the same sum as sum_squared_difference's, negated. The mirrored cases
// sum grad_a instead, positive (b the broadcast zeros) and negative (a = 0).
TEST(Gradients, UnderflowingProductsAreSummedExactly) {
  const double x = std::ldexp(1.0, -538), w = std::ldexp(1.0, -539);
  for (const int64_t n : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{6}, int64_t{7},
                          int64_t{1000}, int64_t{4097}, int64_t{20000}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    // The correctly rounded n/4 smallest subnormals (nearbyint: ties to even).
    const double sum = std::ldexp(std::nearbyint(static_cast<double>(n) / 4), -1074);
    const Array g = array_of(DType::f64, {n}, {w});
    {
      const Gradients grads = check_tiny_case(array_of(DType::f64, {n}, {x}), array_of(DType::f64, {}, {0.0}), g, false,
                                              "a = full(n, 2^-538), b = 0");
      EXPECT_EQ(std::bit_cast<uint64_t>(f64_at(grads.b, 0)), std::bit_cast<uint64_t>(-sum)) << f64_at(grads.b, 0);
      EXPECT_EQ(std::bit_cast<uint64_t>(f64_at(grads.a, 0)), 0u);  // one term, 2^-1076: +0
      double squares = -1;
      const Array a = array_of(DType::f64, {n}, {x});
      const Array zero = array_of(DType::f64, {}, {0.0});
      sqdiff::sum_squared_difference(a.view(), zero.view(), {&squares, DType::f64, {}});
      EXPECT_EQ(std::bit_cast<uint64_t>(squares), std::bit_cast<uint64_t>(sum)) << squares;
    }
    {
      const Gradients grads = check_tiny_case(array_of(DType::f64, {}, {x}), array_of(DType::f64, {n}, {0.0}), g, false,
                                              "a = 2^-538, b = full(n, 0)");
      EXPECT_EQ(std::bit_cast<uint64_t>(f64_at(grads.a, 0)), std::bit_cast<uint64_t>(sum)) << f64_at(grads.a, 0);
      EXPECT_EQ(std::bit_cast<uint64_t>(f64_at(grads.b, 0)), std::bit_cast<uint64_t>(-0.0));  // -2^-1076: -0
    }
    {
      const Gradients grads = check_tiny_case(array_of(DType::f64, {}, {0.0}), array_of(DType::f64, {n}, {x}), g, false,
                                              "a = 0, b = full(n, 2^-538)");
      EXPECT_EQ(std::bit_cast<uint64_t>(f64_at(grads.a, 0)), std::bit_cast<uint64_t>(-sum)) << f64_at(grads.a, 0);
    }
    if (n == 1000) {
      const Gradients grads = check_tiny_case(array_of(DType::f64, {n}, {x}), array_of(DType::f64, {}, {0.0}), g, false,
                                              "the issue's numbers");
      EXPECT_EQ(f64_at(grads.b, 0), -250 * std::ldexp(1.0, -1074));
      EXPECT_EQ(f64_at(grads.b, 0), -1.235e-321);
    }
  }
}

// f64 products 2 (a - b) g from 2^-1140 to 2^-1000 (random exponents,
// mantissas and signs, some exact zeros of either sign), summed over a
// broadcast dim of 2 to 3000 terms: outputs where every product underflows,
// where some do, and where they sum into the normal range; also differences
// that are not exact in f64 (b = 2^-1074, far below a).
TEST(Gradients, ProductsStraddlingTheSubnormalRangeEqualTheOracle) {
  std::mt19937_64 rng(2101);
  const auto random_value = [&](int low, int high) {
    const double mantissa = 1 + static_cast<double>(rng() >> 11) * 0x1p-53;
    const int exponent = low + static_cast<int>(rng() % static_cast<uint64_t>(high - low + 1));
    const double v = std::ldexp(mantissa, exponent);
    return rng() % 2 == 0 ? v : -v;
  };
  struct Range {
    const char* name;
    int low, high;  // of each product's exponent
  };
  const Range ranges[] = {{"every product below 2^-1075", -1140, -1077},
                          {"products around 2^-1075", -1090, -1060},
                          {"products across the subnormals", -1140, -1000}};
  for (const Range& range : ranges) {
    for (const int64_t n : {int64_t{2}, int64_t{7}, int64_t{64}, int64_t{3000}}) {
      for (int trial = 0; trial < 3; ++trial) {
        // b a row of 3 broadcast along a's n rows: each of grad_b's 3 elements sums n terms.
        const Shape a_shape = {n, 3}, b_shape = {3};
        std::vector<double> av, gv;
        for (int64_t i = 0; i < 3 * n; ++i) {
          // The product's exponent split between a (the difference, with b
          // 0) and g: 2 a g = 2^product times a mantissa in [1, 4).
          const int product = range.low + static_cast<int>(rng() % static_cast<uint64_t>(range.high - range.low + 1));
          const int half = product / 2;
          const int rest = product - half - 1;
          // Some exact zero terms of either sign: a zero g (trial 1), a zero a (trial 2).
          av.push_back(trial == 2 && i % 5 == 0 ? 0.0 : random_value(half, half));
          gv.push_back(trial == 1 && i % 7 == 0 ? (rng() % 2 == 0 ? 0.0 : -0.0) : random_value(rest, rest));
        }
        // b's row is 0 or, for differences not exact in f64, holds a value far below a's.
        std::vector<double> b_row(3, 0.0);
        if (trial == 1) b_row[0] = std::ldexp(1.0, -1074);
        check_tiny_case(array_of(DType::f64, a_shape, av), array_of(DType::f64, b_shape, b_row),
                        array_of(DType::f64, a_shape, gv), false, range.name);
        // Summed over a's dim too: a broadcast along b's rows.
        check_tiny_case(array_of(DType::f64, b_shape, b_row), array_of(DType::f64, a_shape, av),
                        array_of(DType::f64, a_shape, gv), false, std::string(range.name) + ", b first");
        if (HasFailure()) return;
      }
    }
  }
}

// Element-wise gradients of f32, bf16 and f16 inputs whose exponents lie 0 to
// 60 apart, with random significands: a - b computed in f64 is inexact where
// the gap exceeds 53 minus the significand bits (f32: 29; bf16: 45; f16's
// range allows no such pair), and the kernel's two-operation exactness test
// for these types (s + b == a and a - s == b) must then send the element to
// the exact path, whichever of a and b holds the lost bits; checked against
// the GMP oracle on every SIMD target, 1 and 2 threads, both gradients.
TEST(Gradients, NarrowInputsWhoseDifferenceIsInexactInF64EqualTheOracle) {
  std::mt19937_64 rng(2302);
  struct Type {
    DType t;
    int bits;            // significand bits
    int low, high;       // exponents of normal values
  };
  const Type types[] = {{DType::f32, 24, -126, 127}, {DType::bf16, 8, -126, 127}, {DType::f16, 11, -14, 15}};
  for (const Type& type : types) {
    const auto random_value = [&](int exponent) {
      const uint64_t significand = (uint64_t{1} << (type.bits - 1)) | (rng() & ((uint64_t{1} << (type.bits - 1)) - 1));
      const double v = std::ldexp(static_cast<double>(significand), exponent - (type.bits - 1));
      return rng() % 2 == 0 ? v : -v;
    };
    const int64_t n = 1031;  // vectors and a tail
    std::vector<double> av, bv, gv;
    int inexact = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int span = type.high - type.low;
      const int gap = static_cast<int>(rng() % static_cast<uint64_t>(std::min(60, span) + 1));
      const int low = type.low + static_cast<int>(rng() % static_cast<uint64_t>(span - gap + 1));
      // Either input may be the larger one.
      const bool a_larger = rng() % 2 == 0;
      const double big = random_value(low + gap), small = random_value(low);
      av.push_back(a_larger ? big : small);
      bv.push_back(a_larger ? small : big);
      gv.push_back(random_value(type.low / 2 + static_cast<int>(rng() % 16)));
      const double s = av.back() - bv.back();
      inexact += (s + bv.back() != av.back()) || (av.back() - s != bv.back());
    }
    if (type.t != DType::f16) {
      EXPECT_GT(inexact, 0) << "the case must hold differences that are inexact in f64";
    }
    const Shape shape = {n};
    const Array a = array_of(type.t, shape, av), b = array_of(type.t, shape, bv), g = array_of(type.t, shape, gv);
    std::vector<gmp::Expected> expected[2];
    for (int which = 0; which < 2; ++which) {
      expected[which] = gmp::squared_difference_gradient(a.input(), b.input(), g.input(), {}, which);
    }
    for (const int64_t target : targets_to_run()) {
      const TargetGuard guard(target);
      for (const int threads : {1, 2}) {
        Gradients grads{sentinel_array(type.t, shape, dense_layout(shape)), sentinel_array(type.t, shape, dense_layout(shape))};
        const sqdiff::TensorView va = grads.a.mutable_view(), vb = grads.b.mutable_view();
        sqdiff::Options options;
        options.threads = threads;
        sqdiff::squared_difference_backward(a.view(), b.view(), g.view(), &va, &vb, options);
        const std::string what = std::string(sqdiff::dtype_name(type.t)) + ", " + std::to_string(inexact) +
                                 " differences inexact in f64, " + target_text(target) + ", " +
                                 std::to_string(threads) + " threads";
        EXPECT_TRUE(output_matches(grads.a, expected[0])) << "grad_a: " << what;
        EXPECT_TRUE(output_matches(grads.b, expected[1])) << "grad_b: " << what;
      }
    }
  }
}

// Exact sums that are negative and tiny, in every float type (smallest
// subnormal 2^u): a term of -2^(u-1) (half the smallest subnormal) with exact
// zero terms of either sign rounds to -0 (a negative value rounded to zero
// keeps its sign, whatever the zero terms); with a little more it rounds to
// -2^u; a positive term and a larger negative one summing to -2^(u-1) give
// -0 too; and a sum that is exactly zero from non-zero terms is +0. The
// products are exact in f64 for f16, bf16 and f32 inputs (their fast path
// cannot underflow); for f64 they underflow.
TEST(Gradients, TinyNegativeSumsKeepTheirSign) {
  for (const DType t : kFloatTypes) {
    const int u = gmp::format_of(t).smallest_step();
    // 2 (0 - 2^k1) 2^k2 = -2^(1 + k1 + k2), both factors representable.
    const auto split = [](int exponent) {
      const int k1 = (exponent - 1) / 2;
      return std::pair<double, double>{std::ldexp(1.0, k1), std::ldexp(1.0, exponent - 1 - k1)};
    };
    const auto [half_d, half_g] = split(u - 1);       // a term of -2^(u-1)
    const auto [tiny_d, tiny_g] = split(u - 9);       // a term of -2^(u-9)
    const auto [twice_d, twice_g] = split(u);         // a term of -2^u
    struct SignCase {
      const char* name;
      std::vector<double> b, g;  // a = 0; terms 2 (0 - b) g for grad_a, the negation for grad_b
      double grad_a;             // the expected grad_a; grad_b is its negation
    };
    const std::vector<SignCase> cases = {
        {"-2^(u-1) and +0 terms", {half_d, half_d, 0.0}, {half_g, 0.0, 1.0}, -0.0},
        {"-2^(u-1) and -0 terms", {half_d, half_d, 0.0}, {half_g, -0.0, -1.0}, -0.0},
        {"-2^(u-1) - 2^(u-9): the smallest subnormal", {half_d, tiny_d, 0.0}, {half_g, tiny_g, 0.0},
         -std::ldexp(1.0, u)},
        {"+2^(u-1) - 2^u = -2^(u-1)", {-half_d, twice_d, 0.0}, {half_g, twice_g, 1.0}, -0.0},
        {"+2^(u-1) - 2^(u-1) = 0 exactly", {-half_d, half_d, 0.0}, {half_g, half_g, -1.0}, 0.0},
    };
    for (const SignCase& c : cases) {
      const auto n = static_cast<int64_t>(c.b.size());
      const Array zero = array_of(t, {}, {0.0});
      const Array b = array_of(t, {n}, c.b);
      const Array g = array_of(t, {n}, c.g);
      // grad_a of the scalar a sums the terms; grad_b is per element.
      const Gradients grads = check_tiny_case(zero, b, g, false, c.name);
      EXPECT_EQ(grads.a.bits_at(0), bits_of(t, c.grad_a)) << c.name << ", " << sqdiff::dtype_name(t);
      // The mirror: a = b's values, b = 0 (the scalar), so grad_b sums the negated terms.
      const Gradients mirror = check_tiny_case(b, zero, g, false, std::string(c.name) + ", mirrored");
      EXPECT_EQ(mirror.b.bits_at(0), bits_of(t, c.grad_a)) << c.name << " mirrored, " << sqdiff::dtype_name(t);
    }
    // subtract_backward: sums of the values themselves (never rounded to zero,
    // but zero sums take the sign rule): -0 only when every term is -0.
    const double s = std::ldexp(1.0, u);
    const std::vector<std::vector<double>> values = {
        {-0.0, -0.0, -0.0}, {-0.0, 0.0, -0.0}, {s, -s, -0.0}, {-s, 0.0, -0.0}, {s, -s - s, s}, {-s, s, -s}};
    for (const std::vector<double>& v : values) {
      const Array g = array_of(t, {3}, v);
      check_tiny_case(array_of(t, {}, {0.0}), array_of(t, {3}, {0.0}), g, true, "subtract, a scalar");
      check_tiny_case(array_of(t, {3}, {0.0}), array_of(t, {}, {0.0}), g, true, "subtract, b scalar");
    }
  }
}

}  // namespace
