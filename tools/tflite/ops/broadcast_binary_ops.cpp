// MUL, MAXIMUM and MINIMUM as LiteRT's reference kernels compute them
// (BroadcastMul6DSlow / Mul, MaximumMinimumBroadcastSlow): the converter
// lowers an int32 squared difference of rank 6 to SUB and MUL, and an int32
// relu to MAXIMUM with 0.
// - MUL on FLOAT32, INT32 and INT64: the product in the type (integers wrap
//   modulo 2^bits, computed unsigned: LiteRT's signed overflow does that in
//   practice), then the fused activation's clamp (NONE: a float's finite range).
// - MAXIMUM / MINIMUM on every type the kernel takes that sqdiff reads:
//   `a > b ? a : b` and `a < b ? a : b` on the stored values, quantization
//   ignored as the kernel ignores it; so a NaN in b wins, a NaN in a loses.
#include <cstring>
#include <type_traits>

#include "sqdiff/float16.hpp"
#include "tflite/ops/activation_clamp.hpp"
#include "tflite/ops/element_walk.hpp"
#include "tflite/ops/kinds.hpp"

namespace sqdiff::tools::tflite::ops {
namespace {

using namespace tensor_type;

constexpr uint8_t kMulOptions = 21, kMaximumMinimumOptions = 39;

template <typename T>
T wrapping_product(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) * static_cast<U>(y)));
  } else {
    return x * y;
  }
}

template <typename T>
void multiply(const OperatorCall& call, void* out) {
  const ir::Tensor& a = *call.inputs[0];
  const ir::Tensor& b = *call.inputs[1];
  const auto* x = static_cast<const T*>(a.data);
  const auto* y = static_cast<const T*>(b.data);
  auto* z = static_cast<T*>(out);
  const bool clamp = needs_clamp<T>(call.op.activation);
  const ActivationRange<T> range = activation_range<T>(call.op.activation);
  for_each_pair(call.output_info().shape, a, b, [&](int64_t k, int64_t i, int64_t j) {
    const T product = wrapping_product(x[i], y[j]);
    z[k] = clamp ? range(product) : product;
  });
}

// The value compared: itself, or a half's float (Eigen::half compares so).
template <typename T>
auto comparable(T v) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    return static_cast<float>(sqdiff::float16::from_bits(v));
  } else {
    return v;
  }
}

template <typename T, bool maximum>
void max_or_min(const OperatorCall& call, void* out) {
  const ir::Tensor& a = *call.inputs[0];
  const ir::Tensor& b = *call.inputs[1];
  const auto* x = static_cast<const T*>(a.data);
  const auto* y = static_cast<const T*>(b.data);
  auto* z = static_cast<T*>(out);
  for_each_pair(call.output_info().shape, a, b, [&](int64_t k, int64_t i, int64_t j) {
    const auto u = comparable(x[i]), v = comparable(y[j]);
    z[k] = (maximum ? u > v : u < v) ? x[i] : y[j];
  });
}

void check_mul(OperatorCheck& c) {
  if (!c.operands(2)) return;
  c.summary(tensor_summary(c.input(0)) + " * " + tensor_summary(c.input(1)) + " -> " + tensor_summary(c.output()) +
            ", activation " + activation_name(c.op().activation));
  if (!c.one_type({kFloat32, kInt32, kInt64})) return;
  c.broadcast_to_output();
  c.options(kMulOptions, "MulOptions");
  c.activation_runs();
}

ir::Tensor run_mul(const OperatorCall& call) {
  const OperatorOutput result = call.allocate_output();
  switch (result.value.dtype) {
    case sqdiff::DType::f32: multiply<float>(call, result.data); break;
    case sqdiff::DType::i32: multiply<int32_t>(call, result.data); break;
    default: multiply<int64_t>(call, result.data); break;
  }
  return result.value;
}

void check_max_or_min(OperatorCheck& c, const char* sign) {
  if (!c.operands(2)) return;
  c.summary(std::string(sign) + "(" + tensor_summary(c.input(0)) + ", " + tensor_summary(c.input(1)) + ") -> " +
            tensor_summary(c.output()));
  if (!c.one_type({kFloat32, kFloat16, kInt32, kInt64, kInt8, kUint8, kInt16})) return;
  c.broadcast_to_output();
  c.options(kMaximumMinimumOptions, "MaximumMinimumOptions");
}

template <bool maximum>
ir::Tensor run_max_or_min(const OperatorCall& call) {
  const OperatorOutput result = call.allocate_output();
  switch (result.value.dtype) {
    case sqdiff::DType::f32: max_or_min<float, maximum>(call, result.data); break;
    case sqdiff::DType::f16: max_or_min<uint16_t, maximum>(call, result.data); break;
    case sqdiff::DType::i32: max_or_min<int32_t, maximum>(call, result.data); break;
    case sqdiff::DType::i64: max_or_min<int64_t, maximum>(call, result.data); break;
    case sqdiff::DType::i8: max_or_min<int8_t, maximum>(call, result.data); break;
    case sqdiff::DType::u8: max_or_min<uint8_t, maximum>(call, result.data); break;
    default: max_or_min<int16_t, maximum>(call, result.data); break;
  }
  return result.value;
}

}  // namespace

const OperatorKind kMul{18, check_mul, run_mul};
const OperatorKind kMaximum{55, [](OperatorCheck& c) { check_max_or_min(c, "max"); }, run_max_or_min<true>};
const OperatorKind kMinimum{57, [](OperatorCheck& c) { check_max_or_min(c, "min"); }, run_max_or_min<false>};

}  // namespace sqdiff::tools::tflite::ops
