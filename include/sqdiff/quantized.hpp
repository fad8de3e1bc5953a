// Quantized tensors (SPEC section 9): int8, uint8 and int16 tensors whose
// element q stands for the real value scale * (q - zero_point), computed bit
// for bit as LiteRT's reference kernels compute them (TFLite-Micro's for int16
// squared_difference), in integers only.
#pragma once

#include <cstdint>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff {

// A tensor's per-tensor quantization: r = scale * (q - zero_point). The scale
// must be a positive finite float32; the zero point must lie in the tensor's
// type (and be 0 for int16).
struct QuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// TFLite's fused activations (subtract only): the output is clamped to the
// quantized image of the activation's real range, within the type's.
enum class Activation : uint8_t { none, relu, relu6, relu_n1_to_1 };

// How the fixed-point multipliers round: double_rounding is LiteRT's default
// build (gemmlowp's rounding doubling high multiply, then a rounding shift);
// single_rounding is its TFLITE_SINGLE_ROUNDING=1 build (one rounding step).
enum class Requantize : uint8_t { double_rounding, single_rounding };

struct QuantizedOptions {
  Broadcast broadcast = {};
  Activation activation = Activation::none;  // subtract only; an error on squared_difference
  Requantize rounding = Requantize::double_rounding;
  // subtract on int16: scales that are all powers of two take LiteRT's Sub16
  // (its default); false takes the general path as pot_scale_int16=false does.
  bool pot_scale_int16 = true;
  int threads = 0;  // 0 = library default; negative is an error
};

// out = quantized (a - b)^2, a, b and out all i8, all u8 or all i16. Broadcasting,
// strides, in place and threads as for squared_difference. Throws Error and
// writes nothing for invalid parameters (SPEC section 9's list).
void quantized_squared_difference(const ConstTensorView& a, QuantParams qa, const ConstTensorView& b, QuantParams qb,
                                  const TensorView& out, QuantParams qout, const QuantizedOptions& options = {});

// out = quantized a - b, clamped to the activation's range.
void quantized_subtract(const ConstTensorView& a, QuantParams qa, const ConstTensorView& b, QuantParams qb,
                        const TensorView& out, QuantParams qout, const QuantizedOptions& options = {});

}  // namespace sqdiff
