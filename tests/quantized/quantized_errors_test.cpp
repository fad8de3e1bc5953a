// Every error of SPEC section 9 (and the shape errors the quantized ops share
// with the float ops): an sqdiff::Error whose message names the op and what
// failed, and not one byte of the output written (it is pre-filled and
// compared after the call).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sqdiff/sqdiff.hpp"

namespace {

using sqdiff::Activation;
using sqdiff::ConstTensorView;
using sqdiff::DType;
using sqdiff::QuantizedOptions;
using sqdiff::QuantParams;
using sqdiff::Requantize;
using sqdiff::TensorView;

enum class Op { subtract, squared_difference };

struct Call {
  Op op = Op::subtract;
  DType a_type = DType::i8;
  DType b_type = DType::i8;
  DType out_type = DType::i8;
  QuantParams qa{0.5f, 0};
  QuantParams qb{0.25f, 0};
  QuantParams qout{1.0f, 0};
  QuantizedOptions options{};
  sqdiff::Shape a_shape{2, 3};
  sqdiff::Shape b_shape{2, 3};
  sqdiff::Shape out_shape{2, 3};
  sqdiff::Shape out_strides{};
  bool null_a = false;
};

// Runs the call on buffers large enough for any of these shapes; returns the
// error's message, and checks that the output's buffer is as it was.
std::string error_of(const Call& c) {
  std::vector<int16_t> a(64, 3);
  std::vector<int16_t> b(64, -2);
  std::vector<int16_t> out(64, 0x5A5A);
  const std::vector<int16_t> before = out;
  const ConstTensorView va{c.null_a ? nullptr : a.data(), c.a_type, c.a_shape, {}};
  const ConstTensorView vb{b.data(), c.b_type, c.b_shape, {}};
  const TensorView vo{out.data(), c.out_type, c.out_shape, c.out_strides};
  std::string message;
  try {
    if (c.op == Op::subtract) {
      sqdiff::quantized_subtract(va, c.qa, vb, c.qb, vo, c.qout, c.options);
    } else {
      sqdiff::quantized_squared_difference(va, c.qa, vb, c.qb, vo, c.qout, c.options);
    }
    ADD_FAILURE() << "no error";
  } catch (const sqdiff::Error& e) {
    message = e.what();
  } catch (...) {
    ADD_FAILURE() << "an exception that is not sqdiff::Error";
  }
  EXPECT_EQ(out, before) << "the failed call wrote to the output: " << message;
  return message;
}

#define EXPECT_ERROR_HAS(call, text)                                              \
  do {                                                                            \
    const std::string message_ = error_of(call);                                  \
    EXPECT_NE(message_.find(text), std::string::npos) << "message: " << message_; \
  } while (false)

TEST(QuantizedErrors, ScalesMustBePositiveFiniteFloats) {
  const float bad[] = {0.0f, -0.0f, -1.0f, std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  for (const Op op : {Op::subtract, Op::squared_difference}) {
    for (const float scale : bad) {
      Call c;
      c.op = op;
      c.qa.scale = scale;
      EXPECT_ERROR_HAS(c, "the scale of a is");
      c = Call{};
      c.op = op;
      c.qb.scale = scale;
      EXPECT_ERROR_HAS(c, "the scale of b is");
      c = Call{};
      c.op = op;
      c.qout.scale = scale;
      EXPECT_ERROR_HAS(c, "the scale of out is");
    }
  }
  Call c;
  c.qa.scale = -0.25f;
  EXPECT_EQ(error_of(c), "quantized_subtract: the scale of a is -0.25; a scale must be a positive finite float32");
  // The smallest subnormal and the largest float are valid scales: no error.
  for (const float scale : {std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()}) {
    std::vector<int8_t> a(4, 1), out(4, 0);
    const ConstTensorView v{a.data(), DType::i8, {4}};
    EXPECT_NO_THROW(sqdiff::quantized_squared_difference(v, {scale, 0}, v, {scale, 0},
                                                         TensorView{out.data(), DType::i8, {4}}, {scale, 0}));
  }
}

TEST(QuantizedErrors, ZeroPointsMustLieInTheTypeAndBeZeroForInt16) {
  struct Bad {
    DType type;
    int32_t zero_point;
    const char* text;
  };
  const Bad bad[] = {{DType::i8, -129, "outside the range [-128, 127] of i8"},
                     {DType::i8, 128, "outside the range [-128, 127] of i8"},
                     {DType::u8, -1, "outside the range [0, 255] of u8"},
                     {DType::u8, 256, "outside the range [0, 255] of u8"},
                     {DType::i8, std::numeric_limits<int32_t>::min(), "outside the range"},
                     {DType::i16, 1, "int16 tensors are quantized symmetrically"},
                     {DType::i16, -32768, "int16 tensors are quantized symmetrically"}};
  for (const Op op : {Op::subtract, Op::squared_difference}) {
    for (const Bad& b : bad) {
      for (int tensor = 0; tensor < 3; ++tensor) {
        Call c;
        c.op = op;
        c.a_type = c.b_type = c.out_type = b.type;
        QuantParams& q = tensor == 0 ? c.qa : tensor == 1 ? c.qb : c.qout;
        q.zero_point = b.zero_point;
        EXPECT_ERROR_HAS(c, std::string("the zero point of ") + (tensor == 0 ? "a" : tensor == 1 ? "b" : "out"));
        EXPECT_ERROR_HAS(c, b.text);
      }
    }
  }
  Call c;
  c.a_type = c.b_type = c.out_type = DType::u8;
  c.qout.zero_point = 300;
  EXPECT_EQ(error_of(c), "quantized_subtract: the zero point of out is 300, outside the range [0, 255] of u8");
}

TEST(QuantizedErrors, TypesMustBeOneQuantizedType) {
  for (const DType other : {DType::f32, DType::f16, DType::i32, DType::u16, DType::i64}) {
    Call c;
    c.a_type = c.b_type = c.out_type = other;
    EXPECT_ERROR_HAS(c, "quantized tensors are i8, u8 or i16");
    c = Call{};
    c.out_type = other;
    EXPECT_ERROR_HAS(c, "out has type " + std::string(sqdiff::dtype_name(other)));
  }
  Call c;
  c.b_type = DType::u8;
  EXPECT_EQ(error_of(c), "quantized_subtract: input types differ: a is i8, b is u8 (no implicit conversion)");
  c = Call{};
  c.op = Op::squared_difference;
  c.out_type = DType::i16;
  EXPECT_EQ(error_of(c), "quantized_squared_difference: output type i16 differs from input type i8");
  c = Call{};
  c.a_type = static_cast<DType>(200);
  EXPECT_ERROR_HAS(c, "unsupported dtype (enum value 200)");
}

TEST(QuantizedErrors, SquaredDifferenceHasNoActivation) {
  for (const Activation activation : {Activation::relu, Activation::relu6, Activation::relu_n1_to_1}) {
    Call c;
    c.op = Op::squared_difference;
    c.options.activation = activation;
    EXPECT_EQ(error_of(c),
              "quantized_squared_difference: squared_difference has no fused activation (TFLite's "
              "SQUARED_DIFFERENCE takes none)");
  }
}

TEST(QuantizedErrors, UnknownEnumValuesAreErrors) {
  Call c;
  c.options.activation = static_cast<Activation>(7);
  EXPECT_ERROR_HAS(c, "unknown activation (enum value 7)");
  c = Call{};
  c.options.rounding = static_cast<Requantize>(5);
  EXPECT_ERROR_HAS(c, "unknown rounding (enum value 5)");
}

// LiteRT's Sub aborts (QuantizeMultiplierSmallerThanOneExp) when the output
// multiplier 2 max(s_a, s_b) / (2^20 s_out) (2^15 for int16) is 1 or more.
TEST(QuantizedErrors, SubtractRefusesAnOutputMultiplierOfOneOrMore) {
  for (const Requantize rounding : {Requantize::double_rounding, Requantize::single_rounding}) {
    Call c;
    c.options.rounding = rounding;
    c.qa.scale = 0.5f;
    c.qb.scale = 0.25f;
    c.qout.scale = std::ldexp(1.0f, -20);  // 2 * 0.5 / 2^20: exactly 1
    EXPECT_ERROR_HAS(c, "the output multiplier 2 max(scale_a, scale_b) / (2^20 scale_out) is 1 or more");
    c.qout.scale = std::ldexp(1.0f, -25);
    EXPECT_ERROR_HAS(c, "is 1 or more");
    c.a_type = c.b_type = c.out_type = DType::i16;
    c.options.pot_scale_int16 = false;
    c.qout.scale = std::ldexp(1.0f, -15);
    EXPECT_ERROR_HAS(c, "(2^15 scale_out) is 1 or more");
  }
  // Just above the bound runs: the next float above 2^-20.
  std::vector<int8_t> a{1, -1}, out{0, 0};
  const ConstTensorView v{a.data(), DType::i8, {2}};
  EXPECT_NO_THROW(sqdiff::quantized_subtract(v, {0.5f, 0}, v, {0.25f, 0}, TensorView{out.data(), DType::i8, {2}},
                                             {std::nextafter(std::ldexp(1.0f, -20), 1.0f), 0}));
}

// LiteRT's PrepareInt16SubOpPOT: one input's shift 0, both <= 0.
TEST(QuantizedErrors, Int16PowerOfTwoScalesThatLiteRTRefuses) {
  Call c;
  c.a_type = c.b_type = c.out_type = DType::i16;
  c.qa.scale = std::ldexp(1.0f, -10);
  c.qb.scale = std::ldexp(1.0f, -8);  // above the output's: shift +2
  c.qout.scale = std::ldexp(1.0f, -10);
  EXPECT_ERROR_HAS(c, "int16 scales that are powers of two (a 2^-10, b 2^-8, out 2^-10)");
  c.qa.scale = std::ldexp(1.0f, -12);  // neither input's shift 0
  c.qb.scale = std::ldexp(1.0f, -11);
  EXPECT_ERROR_HAS(c, "LiteRT refuses these");
  // A hair from a power of two counts as one (CheckedLog2's 1e-3): still refused.
  c.qb.scale = std::ldexp(1.0003f, -11);
  EXPECT_ERROR_HAS(c, "LiteRT refuses these");
  // pot_scale_int16 = false: the general path takes them.
  std::vector<int16_t> a{100, -100}, out{0, 0};
  const ConstTensorView v{a.data(), DType::i16, {2}};
  QuantizedOptions general;
  general.pot_scale_int16 = false;
  EXPECT_NO_THROW(sqdiff::quantized_subtract(v, {std::ldexp(1.0f, -12), 0}, v, {std::ldexp(1.0f, -11), 0},
                                             TensorView{out.data(), DType::i16, {2}}, {std::ldexp(1.0f, -10), 0},
                                             general));
}

// The shape, stride, pointer and thread checks are the float ops' own, with
// the quantized op's name in front.
TEST(QuantizedErrors, ShapeAndViewErrorsAreTheFloatOpsOnes) {
  Call c;
  c.b_shape = {3, 2};
  EXPECT_ERROR_HAS(c, "quantized_subtract: cannot broadcast [2,3] with [3,2] (numpy)");
  c = Call{};
  c.op = Op::squared_difference;
  c.out_shape = {3, 2};
  EXPECT_ERROR_HAS(c, "quantized_squared_difference: output shape [3,2] differs from the broadcast shape [2,3]");
  c = Call{};
  c.options.threads = -1;
  EXPECT_ERROR_HAS(c, "threads is -1");
  c = Call{};
  c.out_strides = {1};
  EXPECT_ERROR_HAS(c, "the strides of out have 1 entries");
  c = Call{};
  c.out_strides = {1, 1};  // reaches elements twice
  EXPECT_ERROR_HAS(c, "may reach one element from two indices");
  c = Call{};
  c.null_a = true;
  EXPECT_ERROR_HAS(c, "the data pointer of a is null");
  c = Call{};
  c.options.broadcast = {sqdiff::BroadcastKind::none, -1};
  c.b_shape = {1, 3};
  EXPECT_ERROR_HAS(c, "(none)");
  // A quantization error comes first, whatever else is wrong.
  c.qout.scale = 0.0f;
  EXPECT_ERROR_HAS(c, "the scale of out is 0");
}

}  // namespace
