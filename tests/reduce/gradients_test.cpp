// squared_difference_backward and subtract_backward (SPEC section 8):
//  - against the GMP oracle bit for bit: random cases of every float type,
//    none/numpy/pdpd with broadcasts that need summation, ranks 0-4, inputs
//    and gradients in reversed/gapped/transposed layouts, either gradient
//    skipped (null), 1-7 threads; and large same-shape and summed cases that
//    take the SIMD paths;
//  - against central finite differences of the loss in f64;
//  - integer types are an Error, and nothing is written;
//  - gradients aliasing inputs (in place, swapped, shifted) give the
//    as-if-copied result, also with both gradients asked for.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

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

}  // namespace
