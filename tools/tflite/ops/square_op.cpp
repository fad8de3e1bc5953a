// SQUARE (the converter's lowering of a squared difference of rank 5 or 6:
// SUB, then SQUARE; int8 models wrap it in DEQUANTIZE and QUANTIZE): FLOAT32
// only, x * x rounded once, as LiteRT's kernel computes it (no activation,
// so an overflow is inf).
#include "tflite/ops/element_walk.hpp"
#include "tflite/ops/kinds.hpp"

namespace sqdiff::tools::tflite::ops {
namespace {

using namespace tensor_type;

constexpr uint8_t kSquareOptions = 66;

void check_square(OperatorCheck& c) {
  if (!c.operands(1)) return;
  c.summary(tensor_summary(c.input(0)) + " -> " + tensor_summary(c.output()));
  if (!c.one_type({kFloat32})) return;
  c.shape_of_output(c.input(0), "the input");
  c.options(kSquareOptions, "SquareOptions");
}

ir::Tensor run_square(const OperatorCall& call) {
  const OperatorOutput result = call.allocate_output();
  const ir::Tensor& x = *call.inputs[0];
  const auto* in = static_cast<const float*>(x.data);
  auto* out = static_cast<float*>(result.data);
  for_each_element(x, [&](int64_t k, int64_t i) { out[k] = in[i] * in[i]; });
  return result.value;
}

}  // namespace

const OperatorKind kSquare{92, check_square, run_square};

}  // namespace sqdiff::tools::tflite::ops
