// SUB and SQUARED_DIFFERENCE: float32 and int32 through sqdiff::subtract and
// sqdiff::squared_difference (SUB's fused activation clamped after, as
// TFLite's kernels do), int8, uint8 and int16 through the quantized ops,
// bit for bit as LiteRT's reference kernels (SPEC 9).
#include <string>

#include "sqdiff/ops.hpp"
#include "sqdiff/quantized.hpp"
#include "tflite/ops/activation_clamp.hpp"
#include "tflite/ops/kinds.hpp"

namespace sqdiff::tools::tflite::ops {
namespace {

using namespace tensor_type;

constexpr uint8_t kSubOptions = 28, kSquaredDifferenceOptions = 76;

bool is_quantized(sqdiff::DType dtype) {
  return dtype == sqdiff::DType::i8 || dtype == sqdiff::DType::u8 || dtype == sqdiff::DType::i16;
}

sqdiff::Activation library_activation(FusedActivation a) {
  switch (a) {
    case FusedActivation::relu: return sqdiff::Activation::relu;
    case FusedActivation::relu6: return sqdiff::Activation::relu6;
    case FusedActivation::relu_n1_to_1: return sqdiff::Activation::relu_n1_to_1;
    default: return sqdiff::Activation::none;
  }
}

sqdiff::QuantizedOptions quantized_options(const OperatorInfo& op, int threads) {
  sqdiff::QuantizedOptions options;
  options.activation = library_activation(op.activation);
  options.pot_scale_int16 = op.pot_scale_int16;
  options.threads = threads;
  return options;
}

// The quantized op on views; `sub` picks quantized_subtract.
void quantized_op(bool sub, const sqdiff::ConstTensorView& a, const TensorInfo& qa, const sqdiff::ConstTensorView& b,
                  const TensorInfo& qb, const sqdiff::TensorView& out, const TensorInfo& qout,
                  const sqdiff::QuantizedOptions& options) {
  if (sub) {
    sqdiff::quantized_subtract(a, *qa.quant, b, *qb.quant, out, *qout.quant, options);
  } else {
    sqdiff::quantized_squared_difference(a, *qa.quant, b, *qb.quant, out, *qout.quant, options);
  }
}

void check(OperatorCheck& c, bool sub) {
  if (!c.operands(2)) return;
  const TensorInfo& a = c.input(0);
  const TensorInfo& b = c.input(1);
  const TensorInfo& out = c.output();
  c.summary(tensor_summary(a) + (sub ? " - " : " vs ") + tensor_summary(b) + " -> " + tensor_summary(out) +
            (sub ? ", activation " + activation_name(c.op().activation) : ""));
  if (!c.one_type({kFloat32, kInt32, kInt8, kUint8, kInt16})) return;
  c.broadcast_to_output();
  c.options(sub ? kSubOptions : kSquaredDifferenceOptions, sub ? "SubOptions" : "SquaredDifferenceOptions");
  if (sub) c.activation_runs();
  if (!is_quantized(*a.dtype)) return;
  if (!c.quantized({c.op().inputs[0], c.op().inputs[1], c.op().outputs[0]}) || c.failed()) return;
  // The library checks the parameters (scales, zero points, multipliers,
  // SPEC 9's list) before it computes anything: a one-element call finds
  // what the real run would refuse, with the library's message.
  const sqdiff::DType dtype = *a.dtype;
  alignas(8) unsigned char x[8] = {}, y[8] = {}, z[8] = {};
  const sqdiff::Shape one{1};
  try {
    quantized_op(sub, {x, dtype, one}, a, {y, dtype, one}, b, {z, dtype, one}, out, quantized_options(c.op(), 1));
  } catch (const sqdiff::Error& e) {
    c.problem(e.what());
  }
}

ir::Tensor run(const OperatorCall& call, bool sub) {
  const ir::Tensor& a = *call.inputs[0];
  const ir::Tensor& b = *call.inputs[1];
  const TensorInfo& out_info = call.output_info();
  const OperatorOutput result = call.allocate_output();
  const sqdiff::TensorView out = result.view();
  if (is_quantized(out.dtype)) {
    quantized_op(sub, a.view(), call.input_info(0), b.view(), call.input_info(1), out, out_info,
                 quantized_options(call.op, call.limits.threads));
    return result.value;
  }
  sqdiff::Options options;
  options.threads = call.limits.threads;
  if (!sub) {
    sqdiff::squared_difference(a.view(), b.view(), out, options);
    return result.value;
  }
  sqdiff::subtract(a.view(), b.view(), out, options);
  const int64_t count = result.value.element_count();
  if (out.dtype == sqdiff::DType::f32) clamp_activation<float>(out.data, count, call.op.activation);
  if (out.dtype == sqdiff::DType::i32) clamp_activation<int32_t>(out.data, count, call.op.activation);
  return result.value;
}

}  // namespace

const OperatorKind kSub{41, [](OperatorCheck& c) { check(c, true); },
                        [](const OperatorCall& call) { return run(call, true); }};
const OperatorKind kSquaredDifference{99, [](OperatorCheck& c) { check(c, false); },
                                      [](const OperatorCall& call) { return run(call, false); }};

}  // namespace sqdiff::tools::tflite::ops
