// RELU, RELU_N1_TO_1, RELU6 and RELU_0_TO_1 as operators of their own, as
// LiteRT's activations.cc computes them: the converter writes
// tf.clip_by_value(x, 0, 6) of a squared difference as a RELU6 after it
// (quantized too), where it cannot fuse the clip.
// - FLOAT32: `x > hi ? hi : (x < lo ? lo : x)`; a NaN stays (its bits too) and
//   so does -0, as LiteRT 2.3.0 gives them (measured: RELU6(NaN) is NaN).
// - INT8, UINT8 (and INT16 for RELU and RELU6, with zero points 0):
//   QuantizedReluX: zp_out + MultiplyByQuantizedMultiplier(x - zp_in, M),
//   M = QuantizeMultiplier(s_in / s_out) with the quotient taken in float32
//   (two float scales divided, then widened), clamped to
//   [max(min, zp_out + int32(roundf(lo / s_out))), min(max, zp_out + int32(roundf(hi / s_out)))]
//   (RELU's upper bound the type's maximum), in LiteRT's build's int32
//   arithmetic (litert_integer.hpp).
#include <cmath>
#include <limits>

#include "tflite/ops/element_walk.hpp"
#include "tflite/ops/kinds.hpp"
#include "tflite/ops/litert_integer.hpp"

namespace sqdiff::tools::tflite::ops {
namespace {

using namespace tensor_type;

struct Bounds {
  float lo;
  float hi;  // +inf: no upper bound (RELU)
};

void check_relu(OperatorCheck& c, bool int16) {
  if (!c.operands(1)) return;
  const TensorInfo& x = c.input(0);
  c.summary(tensor_summary(x) + " -> " + tensor_summary(c.output()));
  const bool typed = int16 ? c.one_type({kFloat32, kInt8, kUint8, kInt16}) : c.one_type({kFloat32, kInt8, kUint8});
  if (!typed) return;
  c.shape_of_output(x, "the input");
  if (c.op().options_type != 0) c.problem("has builtin options, but this operator takes none");
  if (x.type == kFloat32) return;
  if (!c.quantized({c.op().inputs[0], c.op().outputs[0]})) return;
  if (x.type == kInt16 && (x.quant->zero_point != 0 || c.output().quant->zero_point != 0)) {
    c.problem("INT16 needs zero points 0 (LiteRT's ReluPrepare), not " + std::to_string(x.quant->zero_point) +
              " and " + std::to_string(c.output().quant->zero_point));
  }
}

template <typename T>
void relu_quantized(const OperatorCall& call, Bounds bounds, T* out) {
  const sqdiff::QuantParams qin = *call.input_info(0).quant;
  const sqdiff::QuantParams qout = *call.output_info().quant;
  // ReluPrepare: `input->params.scale / output->params.scale`, two floats.
  const Multiplier multiplier = quantize_multiplier(static_cast<double>(qin.scale / qout.scale));
  constexpr int32_t type_min = std::numeric_limits<T>::min(), type_max = std::numeric_limits<T>::max();
  const int32_t lo = std::max(type_min, wrapping_add(qout.zero_point, x86_float_to_int32(std::round(bounds.lo / qout.scale))));
  const int32_t hi = std::isinf(bounds.hi)
                         ? type_max
                         : std::min(type_max, wrapping_add(qout.zero_point, x86_float_to_int32(std::round(bounds.hi / qout.scale))));
  const ir::Tensor& x = *call.inputs[0];
  const auto* in = static_cast<const T*>(x.data);
  for_each_element(x, [&](int64_t k, int64_t i) {
    const int32_t centred = wrapping_sub(static_cast<int32_t>(in[i]), qin.zero_point);
    const int32_t value = wrapping_add(qout.zero_point, multiply_by_quantized_multiplier(centred, multiplier));
    out[k] = static_cast<T>(std::min(hi, std::max(lo, value)));
  });
}

ir::Tensor run_relu(const OperatorCall& call, Bounds bounds) {
  const OperatorOutput result = call.allocate_output();
  const ir::Tensor& x = *call.inputs[0];
  switch (result.value.dtype) {
    case sqdiff::DType::f32: {
      const auto* in = static_cast<const float*>(x.data);
      auto* out = static_cast<float*>(result.data);
      for_each_element(x, [&](int64_t k, int64_t i) {
        const float v = in[i];
        out[k] = v > bounds.hi ? bounds.hi : (v < bounds.lo ? bounds.lo : v);
      });
      break;
    }
    case sqdiff::DType::i8: relu_quantized(call, bounds, static_cast<int8_t*>(result.data)); break;
    case sqdiff::DType::u8: relu_quantized(call, bounds, static_cast<uint8_t*>(result.data)); break;
    default: relu_quantized(call, bounds, static_cast<int16_t*>(result.data)); break;
  }
  return result.value;
}

constexpr float kInfinity = std::numeric_limits<float>::infinity();

}  // namespace

const OperatorKind kRelu{19, [](OperatorCheck& c) { check_relu(c, true); },
                         [](const OperatorCall& call) { return run_relu(call, {0.0f, kInfinity}); }};
const OperatorKind kReluN1To1{20, [](OperatorCheck& c) { check_relu(c, false); },
                              [](const OperatorCall& call) { return run_relu(call, {-1.0f, 1.0f}); }};
const OperatorKind kRelu6{21, [](OperatorCheck& c) { check_relu(c, true); },
                          [](const OperatorCall& call) { return run_relu(call, {0.0f, 6.0f}); }};
const OperatorKind kRelu0To1{152, [](OperatorCheck& c) { check_relu(c, false); },
                             [](const OperatorCall& call) { return run_relu(call, {0.0f, 1.0f}); }};

}  // namespace sqdiff::tools::tflite::ops
