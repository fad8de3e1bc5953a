// QUANTIZE and DEQUANTIZE, bit for bit as LiteRT's reference kernels
// (BUILTIN_REF) of ai-edge-litert 2.3.0 compute them: the converter wraps a
// full-integer model with float inputs and outputs in them, requantizes uint8
// to int8 (and back) and int16, and dequantizes float16 constants.
//
// - QUANTIZE FLOAT32 -> INT8, UINT8, INT16 (reference_ops::AffineQuantize):
//   q = clamp(int32(roundf(x / scale)) + zero_point), the division in float32,
//   roundf's ties away from zero.
// - QUANTIZE INT8/UINT8 -> INT8, UINT8, INT16; INT16 -> INT8, INT16, INT32;
//   INT32 -> INT8, INT16 (reference_ops::Requantize): the multiplier of the
//   double quotient scale_in / scale_out (QuantizeMultiplier), then
//   q = clamp(MultiplyByQuantizedMultiplier(x - zp_in, m, shift) + zp_out)
//   in the default build's double rounding; a ratio of exactly 1 between
//   int8 and uint8 whose zero points differ by 128 flips the top bit.
// - DEQUANTIZE INT8, UINT8, INT16 -> FLOAT32 (reference_integer_ops and
//   reference_ops::Dequantize): float(double(scale) * (x - zero_point));
//   FLOAT16 -> FLOAT32: the exact widening, a signalling NaN kept as it is.
//
// Where LiteRT's C++ is undefined (a NaN or an out-of-range float converted to
// int32, int32 arithmetic that overflows, a shift by 32 or more), the result
// is what its x86-64 build computes, measured with LiteRT: the conversion
// gives INT32_MIN, int32 arithmetic wraps modulo 2^32, a shift count is taken
// modulo 32 (docs/SPEC_DECISIONS.md, "QUANTIZE and DEQUANTIZE").
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "tflite/ops/element_walk.hpp"
#include "tflite/ops/kinds.hpp"
#include "tflite/ops/litert_integer.hpp"

namespace sqdiff::tools::tflite::ops {
namespace {

using namespace tensor_type;

constexpr uint8_t kQuantizeOptions = 89, kDequantizeOptions = 38;

// ---- the kernels ----

template <typename Out>
void affine_quantize(const ir::Tensor& x, const sqdiff::QuantParams& q, Out* out) {
  const auto* in = static_cast<const float*>(x.data);
  const float scale = q.scale;
  const int32_t zero_point = q.zero_point;
  for_each_element(x, [&](int64_t k, int64_t i) {
    const int32_t rounded = x86_float_to_int32(std::round(in[i] / scale));
    out[k] = static_cast<Out>(clamp_to<Out>(wrapping_add(rounded, zero_point)));
  });
}

template <typename In, typename Out>
void requantize(const ir::Tensor& x, const sqdiff::QuantParams& qin, const sqdiff::QuantParams& qout, Out* out) {
  const auto* in = static_cast<const In*>(x.data);
  const Multiplier mul =
      quantize_multiplier(static_cast<double>(qin.scale) / static_cast<double>(qout.scale));
  // Requantize's fast path: the same scale and zero points 128 apart between
  // int8 and uint8 flip the top bit (what the general path gives there too,
  // unless x - zp_in overflows).
  const bool same_scale = mul.m == (int32_t{1} << 30) && mul.shift == 1;
  const int32_t zero_point_diff = wrapping_sub(qin.zero_point, qout.zero_point);
  constexpr bool i8_to_u8 = std::is_same_v<In, int8_t> && std::is_same_v<Out, uint8_t>;
  constexpr bool u8_to_i8 = std::is_same_v<In, uint8_t> && std::is_same_v<Out, int8_t>;
  if (same_scale && ((i8_to_u8 && zero_point_diff == -128) || (u8_to_i8 && zero_point_diff == 128))) {
    for_each_element(x, [&](int64_t k, int64_t i) { out[k] = static_cast<Out>(in[i] ^ 0x80); });
    return;
  }
  for_each_element(x, [&](int64_t k, int64_t i) {
    const int32_t centred = wrapping_sub(static_cast<int32_t>(in[i]), qin.zero_point);
    const int32_t scaled = wrapping_add(multiply_by_quantized_multiplier(centred, mul), qout.zero_point);
    out[k] = static_cast<Out>(clamp_to<Out>(scaled));
  });
}

template <typename In>
void dequantize(const ir::Tensor& x, const sqdiff::QuantParams& q, float* out) {
  const auto* in = static_cast<const In*>(x.data);
  const double scale = q.scale;
  for_each_element(x, [&](int64_t k, int64_t i) {
    out[k] = static_cast<float>(scale * static_cast<double>(wrapping_sub(static_cast<int32_t>(in[i]), q.zero_point)));
  });
}

// Eigen::half to float as LiteRT's build converts it (no F16C): exact, and a
// NaN's payload kept as it is, a signalling NaN too (sqdiff::float16 quiets
// one, as F16C does).
float widen_half(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  uint32_t f32_exponent = 113;  // a subnormal: its leading 1 moved to the implicit bit
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --f32_exponent;
  }
  return std::bit_cast<float>(sign | (f32_exponent << 23) | ((mantissa & 0x3FFu) << 13));
}

void dequantize_half(const ir::Tensor& x, float* out) {
  const auto* in = static_cast<const uint16_t*>(x.data);
  for_each_element(x, [&](int64_t k, int64_t i) { out[k] = widen_half(in[i]); });
}

// ---- the checks ----

// The type pairs LiteRT 2.3.0's quantize.cc Prepare and Eval take (INT4 and
// UINT4 outputs aside, which sqdiff does not read).
bool quantize_pair_runs(int32_t in, int32_t out) {
  switch (in) {
    case kFloat32:
    case kInt8:
    case kUint8: return out == kInt8 || out == kUint8 || out == kInt16;
    case kInt16: return out == kInt8 || out == kInt16 || out == kInt32;
    case kInt32: return out == kInt8 || out == kInt16;
    default: return false;
  }
}

constexpr const char* kQuantizePairs =
    "FLOAT32, INT8 or UINT8 to INT8, UINT8 or INT16; INT16 to INT8, INT16 or INT32; INT32 to INT8 or INT16";

void check_quantize(OperatorCheck& c) {
  if (!c.operands(1)) return;
  const TensorInfo& in = c.input(0);
  const TensorInfo& out = c.output();
  c.summary(tensor_summary(in) + " -> " + tensor_summary(out));
  c.options(kQuantizeOptions, "QuantizeOptions");
  if (!quantize_pair_runs(in.type, out.type)) {
    c.problem("it takes " + tensor_type_name(in.type) + " to " + tensor_type_name(out.type) +
              ", not a pair LiteRT's QUANTIZE runs (" + kQuantizePairs + ")");
    return;
  }
  c.shape_of_output(in, "the input");
  // LiteRT's Prepare: the output's quantization must be affine; a requantized
  // input's parameters are read too (sqdiff refuses them missing rather than
  // take LiteRT's scale 0, which maps every element to the output zero point).
  const bool requantize = in.type != kFloat32;
  const bool complete = requantize ? c.quantized({c.op().inputs[0], c.op().outputs[0]})
                                   : c.quantized({c.op().outputs[0]});
  if (!complete) return;
  if (in.type == kInt16 && out.type == kInt16 && (in.quant->zero_point != 0 || out.quant->zero_point != 0)) {
    c.problem("INT16 -> INT16 requantization takes zero points 0, as LiteRT's Prepare requires (input " +
              std::to_string(in.quant->zero_point) + ", output " + std::to_string(out.quant->zero_point) + ")");
  }
}

void check_dequantize(OperatorCheck& c) {
  if (!c.operands(1)) return;
  const TensorInfo& in = c.input(0);
  const TensorInfo& out = c.output();
  c.summary(tensor_summary(in) + " -> " + tensor_summary(out));
  c.options(kDequantizeOptions, "DequantizeOptions");
  const bool in_ok = c.type_in(in, {kInt8, kUint8, kInt16, kFloat16}, "the input");
  // LiteRT's Prepare sets the output's type to FLOAT32 whatever the model
  // says; sqdiff writes the type the model declares, so it must be that one.
  const bool out_ok = c.type_in(out, {kFloat32}, "the output");
  if (!in_ok || !out_ok) return;
  c.shape_of_output(in, "the input");
  if (in.type == kFloat16) {
    // Not read for FLOAT16, except that LiteRT takes several scales for
    // per-channel dequantization, which it refuses for FLOAT16 when it runs.
    if (in.per_axis) c.quantized({c.op().inputs[0]});
    return;
  }
  if (!c.quantized({c.op().inputs[0]})) return;
  if (in.type == kInt16 && in.quant->zero_point != 0) {
    c.problem("INT16 input with zero point " + std::to_string(in.quant->zero_point) +
              ": LiteRT's DEQUANTIZE takes INT16 with zero point 0 only");
  }
}

// ---- the runs ----

template <typename In>
void run_requantize(const OperatorCall& call, const OperatorOutput& result) {
  const ir::Tensor& x = *call.inputs[0];
  const sqdiff::QuantParams& qin = *call.input_info(0).quant;
  const sqdiff::QuantParams& qout = *call.output_info().quant;
  switch (result.value.dtype) {
    case sqdiff::DType::i8: requantize<In, int8_t>(x, qin, qout, static_cast<int8_t*>(result.data)); break;
    case sqdiff::DType::u8: requantize<In, uint8_t>(x, qin, qout, static_cast<uint8_t*>(result.data)); break;
    case sqdiff::DType::i16: requantize<In, int16_t>(x, qin, qout, static_cast<int16_t*>(result.data)); break;
    default: requantize<In, int32_t>(x, qin, qout, static_cast<int32_t*>(result.data)); break;
  }
}

ir::Tensor run_quantize(const OperatorCall& call) {
  const OperatorOutput result = call.allocate_output();
  const ir::Tensor& x = *call.inputs[0];
  switch (x.dtype) {
    case sqdiff::DType::f32: {
      const sqdiff::QuantParams& q = *call.output_info().quant;
      switch (result.value.dtype) {
        case sqdiff::DType::i8: affine_quantize(x, q, static_cast<int8_t*>(result.data)); break;
        case sqdiff::DType::u8: affine_quantize(x, q, static_cast<uint8_t*>(result.data)); break;
        default: affine_quantize(x, q, static_cast<int16_t*>(result.data)); break;
      }
      break;
    }
    case sqdiff::DType::i8: run_requantize<int8_t>(call, result); break;
    case sqdiff::DType::u8: run_requantize<uint8_t>(call, result); break;
    case sqdiff::DType::i16: run_requantize<int16_t>(call, result); break;
    default: run_requantize<int32_t>(call, result); break;
  }
  return result.value;
}

ir::Tensor run_dequantize(const OperatorCall& call) {
  const OperatorOutput result = call.allocate_output();
  const ir::Tensor& x = *call.inputs[0];
  auto* out = static_cast<float*>(result.data);
  switch (x.dtype) {
    case sqdiff::DType::f16: dequantize_half(x, out); break;
    case sqdiff::DType::i8: dequantize<int8_t>(x, *call.input_info(0).quant, out); break;
    case sqdiff::DType::u8: dequantize<uint8_t>(x, *call.input_info(0).quant, out); break;
    default: dequantize<int16_t>(x, *call.input_info(0).quant, out); break;
  }
  return result.value;
}

}  // namespace

const OperatorKind kQuantize{114, check_quantize, run_quantize};
const OperatorKind kDequantize{6, check_dequantize, run_dequantize};

}  // namespace sqdiff::tools::tflite::ops
