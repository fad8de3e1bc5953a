// The quantized row kernels called directly (kernels/quantized_table.hpp) on
// every SIMD target: random multipliers and shifts over their whole ranges
// (not only those real scales give), so that every rounding of SRDHM, RDBPOT
// and the single-rounding shift shows in the output; the plain and the
// streaming kernels, rows of 0..100 elements at misaligned outputs, in place,
// one-element operands (vs, sv) and periodic ones (vp, pv); guard elements
// around the output must stay untouched. The expected values come from
// quantized_oracle.hpp. A quarter of the general pipelines' cases run with the
// fast path the library would choose for their constants (decided lanes, or
// the dyadic pipeline where every multiplier is a power of two), and the
// dyadic pipelines get cases of their own.
#include <gtest/gtest.h>

#include <hwy/cache_control.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/quantized_table.hpp"
#include "quantized/decided_lanes.hpp"
#include "quantized/quant_params.hpp"
#include "quantized_oracle.hpp"
#include "simd_target_guard.hpp"

namespace {

namespace qo = sqdiff_test::quantized_oracle;
using sqdiff::DType;
using sqdiff::Requantize;
using sqdiff::detail::QuantizedKernelParams;
using sqdiff::detail::QuantizedPipeline;
using sqdiff::detail::QuantizedType;
using sqdiff::detail::Requantizer;
using sqdiff::detail::RowBatch;
using sqdiff::detail::RowKernel;

// SPEC 9's MBQM in the kernels' form: x 2^max(e,0), SRDHM, RDBPOT by
// max(-e,0); or (x m + 2^(30-e)) >> (31-e) in one step.
Requantizer requantizer(qo::Multiplier q, Requantize rounding) {
  Requantizer r;
  r.multiplier = static_cast<int32_t>(q.m);
  // The largest x whose product stays an int32, found by bisection on the
  // exact product (the library derives it in closed form).
  const auto fits = [&](int64_t x) {
    const qo::i128 product = rounding == Requantize::single_rounding
                                 ? qo::floor_div_pow2(static_cast<qo::i128>(x) * q.m + (qo::i128{1} << (30 - q.e)),
                                                      31 - q.e)
                                 : static_cast<qo::i128>(x) << (q.e > 0 ? q.e : 0);
    return product <= INT32_MAX;
  };
  int64_t fit = 0, beyond = int64_t{INT32_MAX} + 1;
  if (fits(INT32_MAX)) {
    fit = INT32_MAX;
  } else {
    while (beyond - fit > 1) (fits((fit + beyond) / 2) ? fit : beyond) = (fit + beyond) / 2;
  }
  r.overflow_above = static_cast<int32_t>(fit);
  if (rounding == Requantize::single_rounding) {
    r.total_shift = 31 - q.e;
    r.rounding = int64_t{1} << (30 - q.e);
  } else {
    r.left_shift = q.e > 0 ? q.e : 0;
    r.right_shift = q.e < 0 ? -q.e : 0;
  }
  return r;
}

qo::Multiplier random_multiplier(std::mt19937_64& rng, int min_e, int max_e) {
  if (rng() % 16 == 0) return {0, 0};
  const int64_t m = rng() % 8 == 0 ? int64_t{1} << 30 : (int64_t{1} << 30) + static_cast<int64_t>(rng() % (uint64_t{1} << 30));
  return {m, min_e + static_cast<int>(rng() % static_cast<uint64_t>(max_e - min_e + 1))};
}

template <class T>
struct Case {
  DType dtype;
  bool square;
  bool power_of_two;
  Requantize rounding;
  int left;
  qo::Multiplier ma, mb, mout;
  int32_t zp_a, zp_b, zp_out;
  int shift_a, shift_b;
  int32_t lo, hi;
  bool dyadic = false;

  QuantizedKernelParams params() const {
    QuantizedKernelParams p;
    p.a_zero_point = zp_a;
    p.b_zero_point = zp_b;
    p.out_zero_point = zp_out;
    p.input_left_shift = left;
    p.a = requantizer(ma, rounding);
    p.b = requantizer(mb, rounding);
    p.out = requantizer(mout, rounding);
    if (power_of_two) {
      p.a.right_shift = shift_a;
      p.b.right_shift = shift_b;
    }
    if (dyadic) {
      p.dyadic_a_shift = left - 1 + ma.e;
      p.dyadic_b_shift = left - 1 + mb.e;
    }
    p.out_min = lo;
    p.out_max = hi;
    return p;
  }

  int64_t expected(int64_t x, int64_t y) const {
    if (power_of_two) {
      const int64_t d = qo::rdbpot(x, shift_a) - qo::rdbpot(y, shift_b);
      return std::clamp<int64_t>(std::clamp<int64_t>(d, -32768, 32767), lo, hi);
    }
    const int64_t ca = qo::mbqm((x - zp_a) * (int64_t{1} << left), ma, rounding);
    const int64_t cb = qo::mbqm((y - zp_b) * (int64_t{1} << left), mb, rounding);
    const int64_t d = ca - cb;
    const int64_t out = qo::mbqm(square ? d * d : d, mout, rounding) + zp_out;
    return std::clamp<int64_t>(out, lo, hi);
  }
};

template <class T>
Case<T> random_case(std::mt19937_64& rng, DType dtype, QuantizedPipeline pipeline, sqdiff::detail::HalfInput half) {
  const qo::TypeLimits lim = qo::limits(dtype);
  Case<T> c{};
  c.dtype = dtype;
  c.power_of_two = pipeline == QuantizedPipeline::subtract_int16_power_of_two;
  c.square = pipeline == QuantizedPipeline::squared_difference_double_rounding ||
             pipeline == QuantizedPipeline::squared_difference_single_rounding;
  c.dyadic = pipeline == QuantizedPipeline::subtract_dyadic_double_rounding ||
             pipeline == QuantizedPipeline::subtract_dyadic_single_rounding;
  c.rounding = pipeline == QuantizedPipeline::subtract_single_rounding ||
                       pipeline == QuantizedPipeline::squared_difference_single_rounding ||
                       pipeline == QuantizedPipeline::subtract_dyadic_single_rounding
                   ? Requantize::single_rounding
                   : Requantize::double_rounding;
  const bool i16 = dtype == DType::i16;
  c.left = c.square ? (i16 ? 0 : 7) : (i16 ? 15 : 20);
  if (!i16) {
    c.zp_a = static_cast<int32_t>(lim.min + static_cast<int64_t>(rng() % 256));
    c.zp_b = static_cast<int32_t>(lim.min + static_cast<int64_t>(rng() % 256));
    c.zp_out = static_cast<int32_t>(lim.min + static_cast<int64_t>(rng() % 256));
  }
  // Input multipliers below 1/2 (as 2 max(s_a, s_b) makes them: the square
  // then fits int32); the output's over the whole range its op allows.
  c.ma = random_multiplier(rng, -31, -1);
  c.mb = random_multiplier(rng, -31, -1);
  // The input of the larger scale has the multiplier 1/2 exactly (the kernels' HalfInput).
  (half == sqdiff::detail::HalfInput::a ? c.ma : c.mb) = {int64_t{1} << 30, 0};
  // Subtract's output multiplier is below 1 (larger ones are refused); the
  // squared difference's reaches past 2^30 (a left shift, saturated at 30 by
  // the single-rounding build).
  const int max_out_e = !c.square ? 0 : c.rounding == Requantize::single_rounding ? 30 : 31;
  c.mout = random_multiplier(rng, -31, max_out_e);
  if (c.dyadic) {
    // Every multiplier 2^30: the inputs' shifts within the pipeline's exact
    // range (r <= left - 1), the output's r <= 29.
    const auto power = [&](int max_r) { return qo::Multiplier{int64_t{1} << 30, -static_cast<int>(rng() % (max_r + 1))}; };
    c.ma = power(c.left - 1);
    c.mb = power(c.left - 1);
    (half == sqdiff::detail::HalfInput::a ? c.ma : c.mb) = {int64_t{1} << 30, 0};
    c.mout = power(29);
  }
  c.shift_a = static_cast<int>(rng() % 32);
  c.shift_b = rng() % 2 == 0 ? 0 : static_cast<int>(rng() % 32);
  c.lo = static_cast<int32_t>(lim.min + (rng() % 4 == 0 ? static_cast<int64_t>(rng() % 64) : 0));
  c.hi = static_cast<int32_t>(lim.max - (rng() % 4 == 0 ? static_cast<int64_t>(rng() % 64) : 0));
  return c;
}

template <class T>
T random_value(std::mt19937_64& rng) {
  const int64_t range = int64_t{1} << (8 * sizeof(T));
  return static_cast<T>(static_cast<int64_t>(rng() % static_cast<uint64_t>(range)));
}

enum class Kind { vv, vs, sv, vp, pv };

// One kernel call of `rows` rows of n elements through kernels.*kind, the
// output at a misaligned place between guards, checked element by element.
template <class T>
void check_call(std::mt19937_64& rng, const sqdiff::detail::RowKinds& kernels, Kind kind, const Case<T>& c,
                const QuantizedKernelParams& params, const std::string& what) {
  const std::size_t n = rng() % 8 == 0 ? 1000 + rng() % 100 : rng() % 101;
  const std::size_t rows = 1 + rng() % 3;
  const std::size_t period = std::size_t{2} << (rng() % 4);
  const std::size_t phase = rng() % period;
  const auto row_length = [&](bool one, bool periodic) { return one ? 1 : periodic ? period : n; };
  const std::size_t a_row = row_length(kind == Kind::sv, kind == Kind::pv);
  const std::size_t b_row = row_length(kind == Kind::vs, kind == Kind::vp);
  const std::size_t out_stride = n + rng() % 5;
  std::vector<T> a(a_row * rows);  // exactly the rows: an over-read shows under ASan
  std::vector<T> b(b_row * rows);
  for (T& v : a) v = random_value<T>(rng);
  for (T& v : b) v = random_value<T>(rng);
  constexpr std::size_t kGuard = 80;
  const std::size_t misalign = rng() % 64;
  std::vector<T> storage(kGuard + misalign + out_stride * rows + kGuard);
  for (T& v : storage) v = random_value<T>(rng);
  T* out = storage.data() + kGuard + misalign;
  // In place on a (vv, vs, pv's running input... only where a runs along a whole row).
  const bool in_place = (kind == Kind::vv || kind == Kind::vs || kind == Kind::vp) && out_stride == n && rng() % 3 == 0;
  if (in_place && !a.empty()) std::memcpy(out, a.data(), a.size() * sizeof(T));
  const std::vector<T> before = storage;

  RowBatch batch;
  batch.rows = rows;
  batch.a_stride = static_cast<int64_t>(a_row);
  batch.b_stride = static_cast<int64_t>(b_row);
  batch.out_stride = static_cast<int64_t>(out_stride);
  batch.period = period;
  batch.phase = phase;
  batch.params = &params;
  RowKernel kernel = kind == Kind::vv   ? kernels.vv
                     : kind == Kind::vs ? kernels.vs
                     : kind == Kind::sv ? kernels.sv
                     : kind == Kind::vp ? kernels.vp
                                        : kernels.pv;
  kernel(in_place ? static_cast<const void*>(out) : a.data(), b.data(), out, n, batch);
  hwy::FlushStream();

  std::vector<T> expected = before;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t row_phase = r == 0 ? phase : 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t ia = kind == Kind::sv ? 0 : kind == Kind::pv ? (row_phase + i) % period : i;
      const std::size_t ib = kind == Kind::vs ? 0 : kind == Kind::vp ? (row_phase + i) % period : i;
      const T x = a[r * a_row + ia];
      const T y = b[r * b_row + ib];
      expected[kGuard + misalign + r * out_stride + i] = static_cast<T>(c.expected(x, y));
    }
  }
  if (storage != expected) {
    int shown = 0;
    for (std::size_t i = 0; i < storage.size() && shown < 3; ++i) {
      if (storage[i] != expected[i]) {
        ++shown;
        ADD_FAILURE() << what << " kind " << static_cast<int>(kind) << " n " << n << " rows " << rows << " in_place "
                      << in_place << ": storage[" << i << "] (output element "
                      << static_cast<int64_t>(i) - static_cast<int64_t>(kGuard + misalign) << ") is "
                      << int64_t{storage[i]} << ", expected " << int64_t{expected[i]};
      }
    }
  }
}

// How many cases ran with decided lanes (the test must reach them).
int g_decided_cases = 0;

template <class T>
void check_type(std::mt19937_64& rng, DType dtype, QuantizedType type, const std::string& target) {
  const auto& table = sqdiff::detail::quantized_kernel_table();
  for (int p = 0; p < sqdiff::detail::kQuantizedPipelineCount; ++p) {
    const auto pipeline = static_cast<QuantizedPipeline>(p);
    if (pipeline == QuantizedPipeline::subtract_int16_power_of_two && dtype != DType::i16) continue;
    for (int trial = 0; trial < 60; ++trial) {
      const auto half = static_cast<sqdiff::detail::HalfInput>(trial % sqdiff::detail::kHalfInputCount);
      const Case<T> c = random_case<T>(rng, dtype, pipeline, half);
      sqdiff::detail::QuantizedCall call{pipeline, half, type, c.params()};
      const bool general = !c.power_of_two && !c.dyadic;
      if (general && trial % 4 >= 2) sqdiff::detail::choose_fast_path(call);
      g_decided_cases += call.params.decided.enabled ? 1 : 0;
      const auto& kernels = table.at(call.pipeline, half, type);
      const std::string what = target + " pipeline " + std::to_string(p) + " (run as " +
                               std::to_string(static_cast<int>(call.pipeline)) + ", decided lanes " +
                               (call.params.decided.enabled ? "on" : "off") + ") half " + std::to_string(trial % 2) +
                               " " + std::string(sqdiff::dtype_name(dtype));
      for (const Kind kind : {Kind::vv, Kind::vs, Kind::sv, Kind::vp, Kind::pv}) {
        check_call<T>(rng, kernels.plain, kind, c, call.params, what + " plain");
        check_call<T>(rng, kernels.streaming, kind, c, call.params, what + " streaming");
        check_call<T>(rng, kernels.narrow_long_rows, kind, c, call.params, what + " narrow_long_rows");
      }
    }
  }
}

TEST(QuantizedKernels, EveryTargetMatchesTheOracle) {
  for (const auto [target, mask] : sqdiff_test::quantized_targets_to_run()) {
    const sqdiff_test::TargetGuard guard(mask);
    ASSERT_EQ(sqdiff::detail::quantized_kernel_table().target, target);
    const std::string name = hwy::TargetName(target);
    std::mt19937_64 rng(0x9e3779b9u);
    check_type<int8_t>(rng, DType::i8, QuantizedType::i8, name);
    check_type<uint8_t>(rng, DType::u8, QuantizedType::u8, name);
    check_type<int16_t>(rng, DType::i16, QuantizedType::i16, name);
  }
  // Random multipliers often leave too large a bound; enough do not.
  EXPECT_GT(g_decided_cases, 20 * static_cast<int>(sqdiff_test::quantized_targets_to_run().size()));
  std::printf("cases with decided lanes: %d\n", g_decided_cases);
}

}  // namespace
