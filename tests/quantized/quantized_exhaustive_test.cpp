// Every one of the 65,536 input pairs of the 8-bit quantized ops, for a
// thousand random configurations per op and type (fewer in unoptimised
// builds), on every SIMD target, against the oracle (quantized_oracle.hpp):
// the decided lanes and the dyadic pipeline must give LiteRT's integer results
// everywhere. The configurations mix log-uniform scales with the ones whose
// outputs land on rounding boundaries (equal scales, scales 2^n apart, simple
// ratios such as 3/2), extreme zero points, both roundings and every
// activation; a tenth of them also with one operand constant along each row
// (the 256-entry tables). A margin below the proved bound (the mutant) must be
// caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "quantized/decided_lanes.hpp"
#include "quantized_oracle.hpp"
#include "simd_target_guard.hpp"
#include "sqdiff/sqdiff.hpp"

namespace {

namespace qo = sqdiff_test::quantized_oracle;
using sqdiff::Activation;
using sqdiff::DType;
using sqdiff::QuantParams;
using sqdiff::Requantize;

#ifdef NDEBUG
constexpr int kConfigsPerOpAndType = 1000;
#else
constexpr int kConfigsPerOpAndType = 40;  // the sanitizer build runs unoptimised
#endif
constexpr int kPairs = 65536;

float log_uniform_scale(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  return static_cast<float>(std::exp(u(rng)));
}

int32_t zero_point(std::mt19937_64& rng, DType dtype) {
  const qo::TypeLimits lim = qo::limits(dtype);
  switch (rng() % 4) {
    case 0: return static_cast<int32_t>(lim.min);
    case 1: return static_cast<int32_t>(lim.max);
    default: return static_cast<int32_t>(lim.min + static_cast<int64_t>(rng() % 256));
  }
}

// A configuration SPEC 9 accepts.
qo::Config random_config(std::mt19937_64& rng, qo::Op op, DType dtype) {
  for (;;) {
    qo::Config c;
    c.op = op;
    c.dtype = dtype;
    const float s = log_uniform_scale(rng, 1e-4, 10.0);
    c.qa = {s, zero_point(rng, dtype)};
    c.qb = {log_uniform_scale(rng, 1e-4, 10.0), zero_point(rng, dtype)};
    c.qout = {log_uniform_scale(rng, 1e-4, 10.0), zero_point(rng, dtype)};
    const float simple_ratios[] = {1.0f, 2.0f, 0.5f, 4.0f, 1.5f, 3.0f, 0.75f, 1.25f};
    switch (rng() % 6) {
      case 0:  // equal scales
        c.qb.scale = s;
        c.qout.scale = s * simple_ratios[rng() % 3];
        break;
      case 1:  // scales 2^n apart
        c.qb.scale = std::ldexp(s, static_cast<int>(rng() % 7) - 3);
        c.qout.scale = std::ldexp(s, static_cast<int>(rng() % 7) - 2);
        break;
      case 2:  // simple ratios
        c.qb.scale = s * simple_ratios[rng() % 8];
        c.qout.scale = s * simple_ratios[rng() % 8] * (op == qo::Op::squared_difference ? s : 1.0f);
        break;
      case 3:  // the output scale near what the range needs (a typical model)
        c.qout.scale = 2.0f * std::max(c.qa.scale, c.qb.scale) * (op == qo::Op::squared_difference ? 64.0f * s : 1.0f);
        break;
      default: break;  // three unrelated scales
    }
    if (op == qo::Op::subtract) c.activation = static_cast<Activation>(rng() % 4);
    c.rounding = rng() % 3 == 0 ? Requantize::single_rounding : Requantize::double_rounding;
    if (!qo::prepare(c).refused) return c;
  }
}

std::string describe(const qo::Config& c) {
  char text[256];
  std::snprintf(text, sizeof(text), "%s %s a (%.9g, %d) b (%.9g, %d) out (%.9g, %d) activation %d rounding %d",
                c.op == qo::Op::subtract ? "subtract" : "squared_difference", std::string(sqdiff::dtype_name(c.dtype)).c_str(),
                static_cast<double>(c.qa.scale), c.qa.zero_point, static_cast<double>(c.qb.scale), c.qb.zero_point,
                static_cast<double>(c.qout.scale), c.qout.zero_point, static_cast<int>(c.activation),
                static_cast<int>(c.rounding));
  return text;
}

// All pairs: a[i] is the (i / 256)-th value of the type, b[i] the (i % 256)-th.
struct AllPairs {
  std::vector<uint8_t> a = std::vector<uint8_t>(kPairs);
  std::vector<uint8_t> b = std::vector<uint8_t>(kPairs);
  AllPairs() {
    for (int i = 0; i < kPairs; ++i) {
      a[i] = static_cast<uint8_t>(i >> 8);
      b[i] = static_cast<uint8_t>(i & 255);
    }
  }
};

int64_t stored_value(DType dtype, uint8_t byte) { return dtype == DType::i8 ? int64_t{static_cast<int8_t>(byte)} : byte; }

std::vector<int64_t> expected_outputs(const qo::Config& c, const AllPairs& pairs) {
  const qo::Prepared p = qo::prepare(c);
  std::vector<int64_t> expected(kPairs);
  for (int i = 0; i < kPairs; ++i) {
    expected[i] = qo::element(c, p, stored_value(c.dtype, pairs.a[i]), stored_value(c.dtype, pairs.b[i]));
  }
  return expected;
}

// The library's outputs for all pairs; the count of those that differ from expected.
int64_t count_differences(const qo::Config& c, const AllPairs& pairs, const std::vector<int64_t>& expected,
                          std::string* first_difference) {
  std::vector<uint8_t> out(kPairs);
  const sqdiff::ConstTensorView a{pairs.a.data(), c.dtype, {kPairs}};
  const sqdiff::ConstTensorView b{pairs.b.data(), c.dtype, {kPairs}};
  const sqdiff::TensorView o{out.data(), c.dtype, {kPairs}};
  sqdiff::QuantizedOptions options;
  options.activation = c.activation;
  options.rounding = c.rounding;
  options.threads = 1;
  if (c.op == qo::Op::subtract) {
    sqdiff::quantized_subtract(a, c.qa, b, c.qb, o, c.qout, options);
  } else {
    sqdiff::quantized_squared_difference(a, c.qa, b, c.qb, o, c.qout, options);
  }
  int64_t differences = 0;
  for (int i = 0; i < kPairs; ++i) {
    const int64_t got = stored_value(c.dtype, out[i]);
    if (got != expected[i]) {
      if (differences == 0 && first_difference != nullptr) {
        *first_difference = describe(c) + ": x " + std::to_string(stored_value(c.dtype, pairs.a[i])) + " y " +
                            std::to_string(stored_value(c.dtype, pairs.b[i])) + " gives " + std::to_string(got) +
                            ", expected " + std::to_string(expected[i]);
      }
      ++differences;
    }
  }
  return differences;
}

// The same pairs as rows with a constant operand (the 256-entry tables of
// quantized_lookup-inl.h): 256 rows of 1,024 elements, the running input
// cycling through its 256 values, the other one element per row (row r holds
// the value r); kAConstant puts the constant on a. Returns the differing count.
int64_t count_constant_row_differences(const qo::Config& c, const std::vector<int64_t>& expected, bool a_constant,
                                       std::string* first_difference) {
  constexpr int kRow = 1024;
  std::vector<uint8_t> running(256 * kRow);
  std::vector<uint8_t> constants(256);
  std::vector<uint8_t> out(256 * kRow);
  for (int i = 0; i < 256 * kRow; ++i) running[i] = static_cast<uint8_t>(i & 255);
  for (int r = 0; r < 256; ++r) constants[r] = static_cast<uint8_t>(r);
  const sqdiff::ConstTensorView run_view{running.data(), c.dtype, {256, kRow}};
  const sqdiff::ConstTensorView const_view{constants.data(), c.dtype, {256, 1}};
  const sqdiff::TensorView o{out.data(), c.dtype, {256, kRow}};
  sqdiff::QuantizedOptions options;
  options.activation = c.activation;
  options.rounding = c.rounding;
  options.threads = 1;
  const auto& a = a_constant ? const_view : run_view;
  const auto& b = a_constant ? run_view : const_view;
  if (c.op == qo::Op::subtract) {
    sqdiff::quantized_subtract(a, c.qa, b, c.qb, o, c.qout, options);
  } else {
    sqdiff::quantized_squared_difference(a, c.qa, b, c.qb, o, c.qout, options);
  }
  int64_t differences = 0;
  for (int r = 0; r < 256; ++r) {
    for (int i = 0; i < kRow; ++i) {
      const int x = a_constant ? r : (i & 255);
      const int y = a_constant ? (i & 255) : r;
      const int64_t want = expected[(x << 8) | y];
      const int64_t got = stored_value(c.dtype, out[r * kRow + i]);
      if (got != want && differences++ == 0 && first_difference != nullptr) {
        *first_difference = describe(c) + (a_constant ? " (a constant)" : " (b constant)") + ": x " +
                            std::to_string(stored_value(c.dtype, static_cast<uint8_t>(x))) + " y " +
                            std::to_string(stored_value(c.dtype, static_cast<uint8_t>(y))) + " gives " +
                            std::to_string(got) + ", expected " + std::to_string(want);
      }
    }
  }
  return differences;
}

struct OpAndType {
  qo::Op op;
  DType dtype;
};
constexpr OpAndType kOpsAndTypes[] = {{qo::Op::subtract, DType::i8},
                                      {qo::Op::subtract, DType::u8},
                                      {qo::Op::squared_difference, DType::i8},
                                      {qo::Op::squared_difference, DType::u8}};

TEST(QuantizedExhaustive, EveryPairOfEveryConfigurationOnEveryTarget) {
  const AllPairs pairs;
  const auto targets = sqdiff_test::quantized_targets_to_run();
  std::mt19937_64 rng(20261202);
  for (const OpAndType& op_and_type : kOpsAndTypes) {
    const sqdiff::detail::DecidedLaneCounts before = sqdiff::detail::decided_lane_counts();
    for (int config = 0; config < kConfigsPerOpAndType; ++config) {
      const qo::Config c = random_config(rng, op_and_type.op, op_and_type.dtype);
      const std::vector<int64_t> expected = expected_outputs(c, pairs);
      for (const auto [target, mask] : targets) {
        const sqdiff_test::TargetGuard guard(mask);
        std::string first;
        const int64_t differences = count_differences(c, pairs, expected, &first);
        ASSERT_EQ(differences, 0) << hwy::TargetName(target) << ": " << first;
        // A tenth of the configurations also as constant-operand rows (each a
        // quarter of a million outputs per layout).
        if (config % 10 == 0) {
          for (const bool a_constant : {false, true}) {
            ASSERT_EQ(count_constant_row_differences(c, expected, a_constant, &first), 0)
                << hwy::TargetName(target) << ": " << first;
          }
        }
      }
    }
    const sqdiff::detail::DecidedLaneCounts after = sqdiff::detail::decided_lane_counts();
    std::printf("%s %s: %lld vectors with decided lanes, %lld of them (%.3f%%) recomputed exactly\n",
                op_and_type.op == qo::Op::subtract ? "subtract" : "squared_difference",
                std::string(sqdiff::dtype_name(op_and_type.dtype)).c_str(),
                static_cast<long long>(after.vectors - before.vectors),
                static_cast<long long>(after.exact_vectors - before.exact_vectors),
                100.0 * static_cast<double>(after.exact_vectors - before.exact_vectors) /
                    static_cast<double>(std::max<int64_t>(1, after.vectors - before.vectors)));
    EXPECT_GT(after.vectors - before.vectors, 0);
  }
}

// The margin is what makes the decided lanes exact: with a smaller one than
// proved, some output of these configurations must come out wrong. (The
// proved margin passes the same configurations in the test above.)
TEST(QuantizedExhaustive, AMarginBelowTheBoundIsCaught) {
  const AllPairs pairs;
  std::mt19937_64 rng(7);
  int64_t differences = 0;
  for (const double scale : {0.0, 0.5}) {
    sqdiff::detail::set_decided_margin_scale(scale);
    std::string first;
    int64_t at_scale = 0;
    // Until the first wrong output: a few hundred configurations, in every build.
    for (int config = 0; config < 1000 && at_scale == 0; ++config) {
      const qo::Config c = random_config(rng, qo::Op::subtract, DType::i8);
      at_scale += count_differences(c, pairs, expected_outputs(c, pairs), first.empty() ? &first : nullptr);
    }
    std::printf("margin scale %.2f: %lld differing outputs (%s)\n", scale, static_cast<long long>(at_scale),
                first.c_str());
    differences += at_scale;
  }
  sqdiff::detail::set_decided_margin_scale(1.0);
  EXPECT_GT(differences, 0);
}

}  // namespace
