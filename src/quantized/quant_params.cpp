#include "quantized/quant_params.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdio>
#include <string>

#include "quantized/decided_lanes.hpp"
#include "shape/validate.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::detail {
namespace {

[[noreturn]] void fail(std::string_view name, const std::string& reason) {
  throw Error(std::string(name) + ": " + reason);
}

// Scales print with all the digits a float32 has: a user comparing with the
// model's numbers needs them.
std::string format_scale(float scale) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(scale));
  return text;
}

bool is_quantized_type(DType dtype) { return dtype == DType::i8 || dtype == DType::u8 || dtype == DType::i16; }

QuantizedType quantized_type(DType dtype) {
  return dtype == DType::i8 ? QuantizedType::i8 : dtype == DType::u8 ? QuantizedType::u8 : QuantizedType::i16;
}

struct TypeRange {
  int32_t min;
  int32_t max;
};

TypeRange type_range(DType dtype) {
  switch (dtype) {
    case DType::i8: return {-128, 127};
    case DType::u8: return {0, 255};
    default: return {-32768, 32767};
  }
}

void check_types(std::string_view name, DType a, DType b, DType out) {
  const std::pair<const char*, DType> tensors[] = {{"a", a}, {"b", b}, {"out", out}};
  for (const auto& [tensor, dtype] : tensors) {
    check_dtype_is_valid(name, dtype);
    if (!is_quantized_type(dtype)) {
      fail(name, std::string(tensor) + " has type " + std::string(dtype_name(dtype)) +
                     "; quantized tensors are i8, u8 or i16");
    }
  }
  if (a != b) {
    fail(name, "input types differ: a is " + std::string(dtype_name(a)) + ", b is " + std::string(dtype_name(b)) +
                   " (no implicit conversion)");
  }
  if (out != a) {
    fail(name, "output type " + std::string(dtype_name(out)) + " differs from input type " +
                   std::string(dtype_name(a)));
  }
}

void check_quant_params(std::string_view name, const char* tensor, QuantParams params, DType dtype) {
  if (!(std::isfinite(params.scale) && params.scale > 0.0f)) {
    fail(name, std::string("the scale of ") + tensor + " is " + format_scale(params.scale) +
                   "; a scale must be a positive finite float32");
  }
  const TypeRange range = type_range(dtype);
  if (dtype == DType::i16 && params.zero_point != 0) {
    fail(name, std::string("the zero point of ") + tensor + " is " + std::to_string(params.zero_point) +
                   "; int16 tensors are quantized symmetrically (zero point 0), as LiteRT requires");
  }
  if (params.zero_point < range.min || params.zero_point > range.max) {
    fail(name, std::string("the zero point of ") + tensor + " is " + std::to_string(params.zero_point) +
                   ", outside the range [" + std::to_string(range.min) + ", " + std::to_string(range.max) + "] of " +
                   std::string(dtype_name(dtype)));
  }
}

void check_options(std::string_view name, QuantizedOp op, const QuantizedOptions& options) {
  const auto activation = static_cast<int>(options.activation);
  if (activation > static_cast<int>(Activation::relu_n1_to_1)) {
    fail(name, "unknown activation (enum value " + std::to_string(activation) +
                   "); use none, relu, relu6 or relu_n1_to_1");
  }
  const auto rounding = static_cast<int>(options.rounding);
  if (rounding > static_cast<int>(Requantize::single_rounding)) {
    fail(name, "unknown rounding (enum value " + std::to_string(rounding) +
                   "); use double_rounding or single_rounding");
  }
  if (op == QuantizedOp::squared_difference && options.activation != Activation::none) {
    fail(name, "squared_difference has no fused activation (TFLite's SQUARED_DIFFERENCE takes none)");
  }
}

// The power-of-two int16 path (LiteRT's PrepareInt16SubOpPOT): the inputs'
// rounding shifts from the rounded logs, or false when a scale is not a power
// of two (the general path then runs, as in LiteRT).
bool prepare_power_of_two(std::string_view name, QuantParams qa, QuantParams qb, QuantParams qout,
                          QuantizedKernelParams& params) {
  int log2_a = 0;
  int log2_b = 0;
  int log2_out = 0;
  // All three are tested: TFLite's && does not short-circuit them either, and
  // it makes no difference to the result.
  const bool a_is_pot = checked_log2(qa.scale, log2_a);
  const bool b_is_pot = checked_log2(qb.scale, log2_b);
  const bool out_is_pot = checked_log2(qout.scale, log2_out);
  if (!(a_is_pot && b_is_pot && out_is_pot)) return false;
  const int shift_a = log2_a - log2_out;
  const int shift_b = log2_b - log2_out;
  if ((shift_a != 0 && shift_b != 0) || shift_a > 0 || shift_b > 0) {
    fail(name, "int16 scales that are powers of two (a 2^" + std::to_string(log2_a) + ", b 2^" +
                   std::to_string(log2_b) + ", out 2^" + std::to_string(log2_out) +
                   ") take LiteRT's power-of-two path, which needs one input's scale equal to the output's and the "
                   "other's at most that; LiteRT refuses these (pot_scale_int16 = false takes the general path)");
  }
  // A shift of 17 or more rounds every int16 to 0, as 31 does: the kernels'
  // 32-bit shifts stay defined.
  params.a.right_shift = std::min(-shift_a, 31);
  params.b.right_shift = std::min(-shift_b, 31);
  return true;
}

}  // namespace

QuantizedMultiplier quantize_multiplier(double real_multiplier, Requantize rounding) {
  if (real_multiplier == 0.0) return {};
  int shift = 0;
  const double fraction = std::frexp(real_multiplier, &shift);  // in [0.5, 1)
  // std::round rounds half away from zero, as TfLiteRound does.
  auto multiplier = static_cast<int64_t>(std::round(fraction * 2147483648.0));
  if (multiplier == (int64_t{1} << 31)) {
    multiplier /= 2;
    ++shift;
  }
  if (shift < -31) return {};  // every product would shift out: TFLite flushes to 0
  if (rounding == Requantize::single_rounding && shift > 30) {
    // That build's one-step shift 31 - e must stay positive: it saturates.
    shift = 30;
    multiplier = (int64_t{1} << 31) - 1;
  }
  return {static_cast<int32_t>(multiplier), shift};
}

Requantizer make_requantizer(QuantizedMultiplier multiplier, Requantize rounding) {
  Requantizer r;
  r.multiplier = multiplier.multiplier;
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  if (rounding == Requantize::single_rounding) {
    r.total_shift = 31 - multiplier.shift;  // 1..62
    r.rounding = int64_t{1} << (r.total_shift - 1);
    if (r.total_shift < 31 && r.multiplier > 0) {
      // (x m + 2^(s-1)) >> s <= 2^31 - 1  <=>  x m <= 2^(31+s) - 2^(s-1) - 1 (s < 31: no overflow in 64 bits).
      const int64_t limit = ((int64_t{1} << (31 + r.total_shift)) - r.rounding - 1) / r.multiplier;
      r.overflow_above = static_cast<int32_t>(std::min(limit, kInt32Max));
    }
    return r;
  }
  r.left_shift = std::max(multiplier.shift, 0);
  r.right_shift = std::max(-multiplier.shift, 0);  // at most 31: quantize_multiplier flushed the rest
  if (r.left_shift >= 31) {
    // Every x >= 1 leaves int32 when shifted; x = 0 stays 0, SRDHM(0, m) = 0.
    r.left_shift = 0;
    r.overflow_above = 0;
  } else {
    r.overflow_above = static_cast<int32_t>(kInt32Max >> r.left_shift);
  }
  return r;
}

bool checked_log2(float x, int& log2_rounded) {
  // As TFLite computes it, in float32: log(x) * (1 / log(2)), not log2f.
  const float x_log2 = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(x_log2);
  const float fraction = x_log2 - rounded;
  log2_rounded = static_cast<int>(rounded);
  return std::abs(fraction) < 1e-3f;
}

ActivationRange activation_range(Activation activation, QuantParams out, int32_t type_min, int32_t type_max) {
  // zero_point + round(f / scale), the quotient in float32 as TFLite's
  // Quantize; a quotient beyond int32 (which LiteRT refuses) only clips.
  const auto quantize = [&](float f) {
    const float quotient = std::round(f / out.scale);
    const double bounded = std::clamp(static_cast<double>(quotient), -4294967296.0, 4294967296.0);
    const int64_t q = int64_t{out.zero_point} + static_cast<int64_t>(bounded);
    return static_cast<int32_t>(std::clamp<int64_t>(q, type_min, type_max));
  };
  switch (activation) {
    case Activation::relu: return {std::max(type_min, quantize(0.0f)), type_max};
    case Activation::relu6: return {std::max(type_min, quantize(0.0f)), std::min(type_max, quantize(6.0f))};
    case Activation::relu_n1_to_1:
      return {std::max(type_min, quantize(-1.0f)), std::min(type_max, quantize(1.0f))};
    case Activation::none: break;
  }
  return {type_min, type_max};
}

QuantizedCall prepare_quantized_call(std::string_view name, QuantizedOp op, DType a, QuantParams qa, DType b,
                                     QuantParams qb, DType out, QuantParams qout, const QuantizedOptions& options) {
  check_types(name, a, b, out);
  check_options(name, op, options);
  check_quant_params(name, "a", qa, a);
  check_quant_params(name, "b", qb, b);
  check_quant_params(name, "out", qout, out);

  const bool is_int16 = a == DType::i16;
  const bool is_subtract = op == QuantizedOp::subtract;
  const TypeRange range = type_range(out);
  QuantizedCall call{};
  call.type = quantized_type(a);
  call.half_input = HalfInput::a;
  QuantizedKernelParams& params = call.params;
  const ActivationRange bounds = activation_range(options.activation, qout, range.min, range.max);
  params.out_min = bounds.min;
  params.out_max = bounds.max;

  if (is_subtract && is_int16 && options.pot_scale_int16 && prepare_power_of_two(name, qa, qb, qout, params)) {
    call.pipeline = QuantizedPipeline::subtract_int16_power_of_two;
    return call;
  }

  const bool single = options.rounding == Requantize::single_rounding;
  call.pipeline = is_subtract ? (single ? QuantizedPipeline::subtract_single_rounding
                                        : QuantizedPipeline::subtract_double_rounding)
                              : (single ? QuantizedPipeline::squared_difference_single_rounding
                                        : QuantizedPipeline::squared_difference_double_rounding);
  params.a_zero_point = qa.zero_point;
  params.b_zero_point = qb.zero_point;
  params.out_zero_point = qout.zero_point;
  params.input_left_shift = is_subtract ? (is_int16 ? 15 : 20) : (is_int16 ? 0 : 7);

  // LiteRT's Prepare in double from the float32 scales: 2 max(s_a, s_b), its
  // square (48 significant bits: exact) and the powers of two are exact, so
  // each real multiplier is one correctly rounded division.
  const double twice_max_scale = 2.0 * std::max(static_cast<double>(qa.scale), static_cast<double>(qb.scale));
  const double output_factor = std::ldexp(static_cast<double>(qout.scale),
                                          is_subtract ? params.input_left_shift : 2 * params.input_left_shift);
  const double real_out = (is_subtract ? twice_max_scale : twice_max_scale * twice_max_scale) / output_factor;
  const QuantizedMultiplier out_multiplier = quantize_multiplier(real_out, options.rounding);
  if (is_subtract && out_multiplier.shift > 0) {
    // LiteRT's QuantizeMultiplierSmallerThanOneExp aborts here.
    fail(name, "the output multiplier 2 max(scale_a, scale_b) / (2^" + std::to_string(params.input_left_shift) +
                   " scale_out) is 1 or more (scales a " + format_scale(qa.scale) + ", b " + format_scale(qb.scale) +
                   ", out " + format_scale(qout.scale) + "): the output scale must exceed 2 max(scale_a, scale_b) / 2^" +
                   std::to_string(params.input_left_shift) + ", as LiteRT requires");
  }
  params.a = make_requantizer(quantize_multiplier(static_cast<double>(qa.scale) / twice_max_scale, options.rounding),
                              options.rounding);
  params.b = make_requantizer(quantize_multiplier(static_cast<double>(qb.scale) / twice_max_scale, options.rounding),
                              options.rounding);
  params.out = make_requantizer(out_multiplier, options.rounding);
  // The larger scale's multiplier is s / (2 s) = 1/2 exactly: (2^30, 0).
  const bool a_is_half = qa.scale >= qb.scale;
  call.half_input = a_is_half ? HalfInput::a : HalfInput::b;
  choose_fast_path(call);
  return call;
}

}  // namespace sqdiff::detail
