// int16 subtract's float64 decided lanes (kernels/quantized_decided_wide-inl.h)
// against the oracle (quantized_oracle.hpp), bit for bit, on every SIMD
// target. The 2^32 input pairs of a configuration cannot all be run, so each
// of several hundred random configurations (fewer in unoptimised builds) gets
// a large random sample of pairs plus adversarial ones: every combination of
// the extremes and small values of both signs, and the pairs whose real
// result x alpha - y beta lies nearest a rounding boundary (found by scanning
// all 65,536 values of one input against fixed values of the other, with the
// call's own multipliers). The configurations mix log-uniform scales,
// calibrated ones (a range / 32767), equal scales, scales 2^n apart, simple
// ratios and decimal ones; both roundings, every activation, both int16
// paths (pot_scale_int16). int16 zero points are all 0: SPEC 9 refuses any
// other (QuantizedErrors tests that). A tenth of the configurations also run
// with one operand a single element (the vs / sv rows). A margin below the
// proved bound (the mutant) must be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "quantized/decided_lanes.hpp"
#include "quantized_oracle.hpp"
#include "simd_target_guard.hpp"
#include "sqdiff/sqdiff.hpp"

namespace {

namespace qo = sqdiff_test::quantized_oracle;
using sqdiff::Activation;
using sqdiff::DType;
using sqdiff::Requantize;

#ifdef NDEBUG
constexpr int kConfigs = 300;
constexpr int kRandomPairs = 32768;
constexpr int kScannedValues = 24;  // values of one input scanned against all of the other's
#else
constexpr int kConfigs = 25;  // the sanitizer build runs unoptimised
constexpr int kRandomPairs = 8192;
constexpr int kScannedValues = 4;
#endif
constexpr int kNearestPerScan = 256;  // pairs kept from each scan

float log_uniform(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  return static_cast<float>(std::exp(u(rng)));
}

// An int16 subtract configuration SPEC 9 accepts.
qo::Config random_config(std::mt19937_64& rng) {
  const float simple_ratios[] = {1.0f, 2.0f, 0.5f, 4.0f, 1.5f, 3.0f, 0.75f, 1.25f, 0.1f, 10.0f};
  const float decimals[] = {0.001f, 0.002f, 0.0015f, 0.0025f, 0.004f, 0.005f, 0.01f, 0.0001f, 0.0003f, 0.05f};
  for (;;) {
    qo::Config c;
    c.op = qo::Op::subtract;
    c.dtype = DType::i16;
    const float s = log_uniform(rng, 1e-6, 10.0);
    c.qa = {s, 0};
    c.qb = {log_uniform(rng, 1e-6, 10.0), 0};
    c.qout = {log_uniform(rng, 1e-6, 10.0), 0};
    switch (rng() % 7) {
      case 0: {  // calibrated: a range / 32767 each, the output's near what the inputs' need
        const float range_a = log_uniform(rng, 0.01, 100.0);
        const float range_b = range_a * log_uniform(rng, 0.1, 10.0);
        c.qa.scale = range_a / 32767.0f;
        c.qb.scale = range_b / 32767.0f;
        c.qout.scale = (range_a + range_b) * log_uniform(rng, 0.25, 2.0) / 32767.0f;
        break;
      }
      case 1:  // equal scales
        c.qb.scale = s;
        c.qout.scale = s * simple_ratios[rng() % 5];
        break;
      case 2:  // scales 2^n apart
        c.qb.scale = std::ldexp(s, static_cast<int>(rng() % 7) - 3);
        c.qout.scale = std::ldexp(s, static_cast<int>(rng() % 7) - 2);
        break;
      case 3:  // simple ratios
        c.qb.scale = s * simple_ratios[rng() % 10];
        c.qout.scale = s * simple_ratios[rng() % 10];
        break;
      case 4:  // decimal scales
        c.qa.scale = decimals[rng() % 10];
        c.qb.scale = decimals[rng() % 10];
        c.qout.scale = decimals[rng() % 10];
        break;
      case 5:  // a fine output scale: outputs far beyond int16, clamped
        c.qout.scale = std::max(c.qa.scale, c.qb.scale) * log_uniform(rng, 1.0 / 16000.0, 1.0 / 64.0);
        break;
      default: break;  // three unrelated scales
    }
    c.activation = static_cast<Activation>(rng() % 4);
    c.rounding = rng() % 3 == 0 ? Requantize::single_rounding : Requantize::double_rounding;
    c.pot_scale_int16 = rng() % 3 == 0;
    if (!qo::prepare(c).refused) return c;
  }
}

std::string describe(const qo::Config& c) {
  char text[256];
  std::snprintf(text, sizeof(text), "int16 subtract a %.9g b %.9g out %.9g activation %d rounding %d pot_scale_int16 %d",
                static_cast<double>(c.qa.scale), static_cast<double>(c.qb.scale), static_cast<double>(c.qout.scale),
                static_cast<int>(c.activation), static_cast<int>(c.rounding), c.pot_scale_int16 ? 1 : 0);
  return text;
}

double real_multiplier(qo::Multiplier m) { return std::ldexp(static_cast<double>(m.m), m.e - 31); }

struct Pairs {
  std::vector<int16_t> x;
  std::vector<int16_t> y;
  void add(int64_t a, int64_t b) {
    x.push_back(static_cast<int16_t>(a));
    y.push_back(static_cast<int16_t>(b));
  }
};

// The distance of v from the nearest rounding boundary (a half-integer).
double boundary_distance(double v) { return std::abs(v - std::floor(v) - 0.5); }

// Random pairs, the extremes' combinations, and the pairs nearest a rounding
// boundary of the real value with the call's multipliers.
Pairs make_pairs(std::mt19937_64& rng, const qo::Prepared& p) {
  Pairs pairs;
  std::uniform_int_distribution<int> value(-32768, 32767);
  for (int i = 0; i < kRandomPairs; ++i) pairs.add(value(rng), value(rng));
  const int64_t special[] = {-32768, -32767, -32766, -16384, -256, -2, -1, 0, 1, 2, 255, 16384, 32766, 32767};
  for (const int64_t a : special) {
    for (const int64_t b : special) pairs.add(a, b);
  }
  if (p.power_of_two) return pairs;
  // Z's real value, (x - 0) 2^15 mu_a mu_o - (y - 0) 2^15 mu_b mu_o.
  const double mu_o = real_multiplier(p.mout);
  const double alpha = std::ldexp(real_multiplier(p.ma), p.left) * mu_o;
  const double beta = std::ldexp(real_multiplier(p.mb), p.left) * mu_o;
  std::vector<std::pair<double, int>> nearest(65536);
  for (int scan = 0; scan < 2 * kScannedValues; ++scan) {
    const bool fix_x = scan % 2 == 0;
    const int fixed = scan < 4 ? static_cast<int>(special[rng() % 14]) : value(rng);
    for (int v = -32768; v <= 32767; ++v) {
      const double real = fix_x ? fixed * alpha - v * beta : v * alpha - fixed * beta;
      nearest[static_cast<std::size_t>(v + 32768)] = {boundary_distance(real), v};
    }
    std::partial_sort(nearest.begin(), nearest.begin() + kNearestPerScan, nearest.end());
    for (int i = 0; i < kNearestPerScan; ++i) {
      const int v = nearest[static_cast<std::size_t>(i)].second;
      if (fix_x) {
        pairs.add(fixed, v);
      } else {
        pairs.add(v, fixed);
      }
    }
  }
  return pairs;
}

sqdiff::QuantizedOptions options_of(const qo::Config& c) {
  sqdiff::QuantizedOptions options;
  options.activation = c.activation;
  options.rounding = c.rounding;
  options.pot_scale_int16 = c.pot_scale_int16;
  options.threads = 1;
  return options;
}

// The library's outputs for the pairs (as one row); how many differ from expected.
int64_t count_differences(const qo::Config& c, const Pairs& pairs, const std::vector<int16_t>& expected,
                          std::string* first) {
  const auto n = static_cast<int64_t>(pairs.x.size());
  std::vector<int16_t> out(pairs.x.size());
  sqdiff::quantized_subtract(sqdiff::ConstTensorView{pairs.x.data(), DType::i16, {n}}, c.qa,
                             sqdiff::ConstTensorView{pairs.y.data(), DType::i16, {n}}, c.qb,
                             sqdiff::TensorView{out.data(), DType::i16, {n}}, c.qout, options_of(c));
  int64_t differences = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != expected[i] && differences++ == 0 && first != nullptr) {
      *first = describe(c) + ": x " + std::to_string(pairs.x[i]) + " y " + std::to_string(pairs.y[i]) + " gives " +
               std::to_string(out[i]) + ", expected " + std::to_string(expected[i]);
    }
  }
  return differences;
}

// One operand a single element: the first 4,096 pairs' x against y0 (b one
// element) or x0 against their y (a one element).
int64_t count_one_element_differences(const qo::Config& c, const qo::Prepared& p, const Pairs& pairs, bool a_one,
                                      std::string* first) {
  const std::size_t n = std::min<std::size_t>(4096, pairs.x.size());
  const int16_t x0 = pairs.x[n / 2];
  const int16_t y0 = pairs.y[n / 2];
  const std::vector<int16_t>& running = a_one ? pairs.y : pairs.x;
  std::vector<int16_t> out(n);
  const int16_t one = a_one ? x0 : y0;
  const sqdiff::ConstTensorView run_view{running.data(), DType::i16, {static_cast<int64_t>(n)}};
  const sqdiff::ConstTensorView one_view{&one, DType::i16, {1}};
  sqdiff::quantized_subtract(a_one ? one_view : run_view, c.qa, a_one ? run_view : one_view, c.qb,
                             sqdiff::TensorView{out.data(), DType::i16, {static_cast<int64_t>(n)}}, c.qout,
                             options_of(c));
  int64_t differences = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t x = a_one ? x0 : pairs.x[i];
    const int64_t y = a_one ? pairs.y[i] : y0;
    const int64_t want = qo::element(c, p, x, y);
    if (out[i] != want && differences++ == 0 && first != nullptr) {
      *first = describe(c) + (a_one ? " (a one element)" : " (b one element)") + ": x " + std::to_string(x) + " y " +
               std::to_string(y) + " gives " + std::to_string(out[i]) + ", expected " + std::to_string(want);
    }
  }
  return differences;
}

std::vector<int16_t> expected_outputs(const qo::Config& c, const qo::Prepared& p, const Pairs& pairs) {
  std::vector<int16_t> expected(pairs.x.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    expected[i] = static_cast<int16_t>(qo::element(c, p, pairs.x[i], pairs.y[i]));
  }
  return expected;
}

TEST(QuantizedInt16Subtract, RandomAndAdversarialPairsOfManyConfigurationsOnEveryTarget) {
  const auto targets = sqdiff_test::quantized_targets_to_run();
  std::mt19937_64 rng(20261202);
  const sqdiff::detail::DecidedLaneCounts before = sqdiff::detail::decided_lane_counts();
  int64_t checked = 0;
  for (int config = 0; config < kConfigs; ++config) {
    const qo::Config c = random_config(rng);
    const qo::Prepared p = qo::prepare(c);
    const Pairs pairs = make_pairs(rng, p);
    const std::vector<int16_t> expected = expected_outputs(c, p, pairs);
    for (const auto [target, mask] : targets) {
      const sqdiff_test::TargetGuard guard(mask);
      std::string first;
      ASSERT_EQ(count_differences(c, pairs, expected, &first), 0) << hwy::TargetName(target) << ": " << first;
      checked += static_cast<int64_t>(pairs.x.size());
      if (config % 10 == 0) {
        for (const bool a_one : {false, true}) {
          ASSERT_EQ(count_one_element_differences(c, p, pairs, a_one, &first), 0)
              << hwy::TargetName(target) << ": " << first;
        }
      }
    }
  }
  const sqdiff::detail::DecidedLaneCounts after = sqdiff::detail::decided_lane_counts();
  const int64_t vectors = after.vectors - before.vectors;
  const int64_t exact = after.exact_vectors - before.exact_vectors;
  std::printf("int16 subtract: %lld outputs checked; %lld vectors with decided lanes, %lld of them (%.3f%%) recomputed "
              "exactly (the adversarial pairs are near boundaries by design)\n",
              static_cast<long long>(checked), static_cast<long long>(vectors), static_cast<long long>(exact),
              100.0 * static_cast<double>(exact) / static_cast<double>(std::max<int64_t>(1, vectors)));
  EXPECT_GT(vectors, 0);
}

// The margin is what makes the decided lanes exact: with a smaller one than
// proved (scaled by 0, then by 0.5), some output must come out wrong. (The
// proved margin passes the same kind of configurations in the test above.)
TEST(QuantizedInt16Subtract, AMarginBelowTheBoundIsCaught) {
  std::mt19937_64 rng(7);
  for (const double scale : {0.0, 0.5}) {
    sqdiff::detail::set_decided_margin_scale(scale);
    std::string first;
    int64_t differences = 0;
    int configs = 0;
    // Until the first wrong output (a few configurations), in every build.
    for (; configs < 400 && differences == 0; ++configs) {
      const qo::Config c = random_config(rng);
      const qo::Prepared p = qo::prepare(c);
      const Pairs pairs = make_pairs(rng, p);
      differences += count_differences(c, pairs, expected_outputs(c, p, pairs), &first);
    }
    std::printf("margin scale %.2f: %lld differing outputs after %d configurations (%s)\n", scale,
                static_cast<long long>(differences), configs, first.c_str());
    EXPECT_GT(differences, 0) << "margin scale " << scale;
  }
  sqdiff::detail::set_decided_margin_scale(1.0);
}

}  // namespace
