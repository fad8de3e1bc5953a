// MEAN (tf.reduce_mean; `reduce_mean(squared_difference(a, b))`, the MSE
// loss, converts to SQUARED_DIFFERENCE + MEAN) as LiteRT's reference kernel
// computes it (tflite/kernels/reduce.cc, EvalMean<kReference>): not the
// exactly rounded mean of sqdiff::mean_squared_difference, but LiteRT's own
// arithmetic, order and rounding included.
// - Axes (reduce.cc ResolveAxisForShape, reference/reduce.h ResolveAxis): the
//   second input, an INT32 constant of any shape; negative axes count from
//   the end, a repeated axis counts once, an empty list reduces nothing. A
//   rank-0 input ignores the axes (any values) and gives a rank-0 output.
//   keep_dims (ReducerOptions; false without the table) keeps reduced dims
//   as 1 (GetOutputShape).
// - The sum (reference_ops::Mean / QuantizedMeanOrSum, both through
//   ReduceSumImpl): the input is walked once in row-major order and each
//   element added to its output's accumulator, which starts at 0; so each
//   output is the sequential sum of its elements in row-major order. The
//   accumulator is FLOAT32 for FLOAT32 (every addition rounded to float32),
//   int64 for INT32 and INT64, int32 for INT8, UINT8 and INT16; integer sums
//   wrap (WrappingAdd: modulo 2^64, 2^32), computed here unsigned.
// - FLOAT32: sum / float(n), n the number of reduced elements (converted to
//   float32, rounded when above 2^24). INT32, INT64: sum / n in int64,
//   truncated toward 0, then converted to the type (modulo 2^32 for INT32).
// - INT8, UINT8, INT16 (QuantizedMeanOrSum, compute_sum false): Prepare's
//   QuantizeMultiplier(double(scale_in) / double(scale_out)) = (m, e); then
//   s = min(floor(log2 n), 32, 31 + e), m' = (m * 2^s) / n (int64, floor),
//   e' = e - s; each output is clamp(MBQM(int32(sum - zp_in * n), m', e') +
//   zp_out) to the type, where MBQM is MultiplyByQuantizedMultiplier, double
//   rounding: RDBPOT(SRDHM(x * 2^max(e',0), m'), max(-e',0)). LiteRT's int32
//   arithmetic there (the difference, the left shift, the zero point's
//   addition) wraps modulo 2^32, and its `1 << shift` for a shift of 32 or
//   more shifts by the count modulo 32, as x86-64 and AArch64 do: sqdiff
//   computes exactly that (docs/SPEC_DECISIONS.md).
// - An empty input (some dim 0) gives NaN for FLOAT32 and 0 for the integer
//   types, whatever the zero point (InitializeMeanOutput's quiet_NaN<T>()).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "tflite/ops/element_walk.hpp"
#include "tflite/ops/kinds.hpp"
#include "tflite/ops/litert_integer.hpp"

namespace sqdiff::tools::tflite::ops {
namespace {

using namespace tensor_type;

constexpr uint8_t kReducerOptions = 27;
constexpr std::size_t kAxesShown = 16;  // axis values a summary lists before "..."

// The axis tensor's values, read in place (an INT32 constant; the check
// made sure): a hostile file's long list costs no copy.
class AxisValues {
 public:
  explicit AxisValues(const TensorInfo& axis) : bytes_(static_cast<const unsigned char*>(axis.constant.get())) {
    for (const int64_t d : axis.shape) count_ *= static_cast<std::size_t>(d);
  }
  std::size_t size() const { return count_; }
  int32_t operator[](std::size_t i) const {
    int32_t v = 0;
    std::memcpy(&v, bytes_ + i * sizeof v, sizeof v);
    return v;
  }

 private:
  const unsigned char* bytes_;
  std::size_t count_ = 1;
};

std::string axes_text(const AxisValues& values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size() && i < kAxesShown; ++i) s += (i ? "," : "") + std::to_string(values[i]);
  if (values.size() > kAxesShown) s += ",... (" + std::to_string(values.size()) + " values)";
  return s + "]";
}

// ResolveAxis: each axis once, negative ones from the end, in first-seen
// order. A rank-0 input has no axes, whatever the values. `bad` receives the
// first value outside [-rank, rank), if any (the axes returned are then
// meaningless).
std::vector<std::size_t> resolve_axes(const AxisValues& values, std::size_t rank, std::optional<int32_t>* bad) {
  std::vector<std::size_t> axes;
  if (rank == 0) return axes;
  const auto r = static_cast<int64_t>(rank);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int32_t v = values[i];
    const int64_t axis = v < 0 ? v + r : v;
    if (axis < 0 || axis >= r) {
      if (bad != nullptr) *bad = v;
      return {};
    }
    if (std::find(axes.begin(), axes.end(), static_cast<std::size_t>(axis)) == axes.end()) {
      axes.push_back(static_cast<std::size_t>(axis));
    }
  }
  return axes;
}

bool reduced(const std::vector<std::size_t>& axes, std::size_t d) {
  return std::find(axes.begin(), axes.end(), d) != axes.end();
}

// GetOutputShape.
sqdiff::Shape mean_shape(const sqdiff::Shape& in, const std::vector<std::size_t>& axes, bool keep_dims) {
  sqdiff::Shape out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (!reduced(axes, d)) {
      out.push_back(in[d]);
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  return out;
}

bool is_quantized(int32_t type) { return type == kInt8 || type == kUint8 || type == kInt16; }

void check_quantization(OperatorCheck& c, const TensorInfo& t, int32_t index, const char* what) {
  const sqdiff::QuantParams q = *t.quant;
  if (!(q.scale > 0.0f) || !std::isfinite(q.scale)) {
    c.problem(c.model().describe_tensor(index) + " has scale " + float_text(q.scale) +
              "; a scale must be a positive finite float32");
  }
  const int32_t lo = t.type == kUint8 ? 0 : t.type == kInt8 ? -128 : -32768;
  const int32_t hi = t.type == kUint8 ? 255 : t.type == kInt8 ? 127 : 32767;
  if (t.type == kInt16 && q.zero_point != 0) {
    c.problem(c.model().describe_tensor(index) + " (the " + what + ") has zero point " +
              std::to_string(q.zero_point) + ": int16 tensors are quantized symmetrically (zero point 0), as "
              "LiteRT's MEAN requires");
  } else if (q.zero_point < lo || q.zero_point > hi) {
    c.problem(c.model().describe_tensor(index) + " (the " + what + ") has zero point " +
              std::to_string(q.zero_point) + ", outside the range [" + std::to_string(lo) + ", " +
              std::to_string(hi) + "] of " + tensor_type_name(t.type));
  }
}

void check_mean(OperatorCheck& c) {
  if (!c.operands(2)) return;
  const TensorInfo& in = c.input(0);
  const TensorInfo& axis = c.input(1);
  const TensorInfo& out = c.output();
  const bool axes_known = axis.type == kInt32 && axis.constant != nullptr;
  c.summary(tensor_summary(in) + " over axes " + (axes_known ? axes_text(AxisValues(axis)) : tensor_summary(axis)) +
            " -> " +
            tensor_summary(out) + ", keep_dims " + (c.op().keep_dims ? "true" : "false"));
  c.options(kReducerOptions, "ReducerOptions");
  if (!c.type_in(in, {kFloat32, kInt32, kInt64, kInt8, kUint8, kInt16}, "the input")) return;
  if (out.type != in.type) {
    c.problem("the output has type " + tensor_type_name(out.type) + " and the input " + tensor_type_name(in.type) +
              ": LiteRT's MEAN writes the input's type");
    return;
  }
  if (!c.type_in(axis, {kInt32}, "the axis tensor")) return;
  if (axis.constant == nullptr) {
    c.problem("the axis tensor " + in_quotes(axis.name) +
              " is not a constant: sqdiff tflite needs the axes when it checks the model (LiteRT would size "
              "the output only at run time)");
    return;
  }
  const AxisValues values(axis);
  std::optional<int32_t> bad;
  const std::vector<std::size_t> axes = resolve_axes(values, in.shape.size(), &bad);
  if (bad) {
    const int64_t rank = static_cast<int64_t>(in.shape.size());
    c.problem("axis " + std::to_string(*bad) + " is outside [" + std::to_string(-rank) + ", " + std::to_string(rank) +
              ") for the input's rank " + std::to_string(rank) + " (LiteRT: \"Invalid axis index\")");
    return;
  }
  const sqdiff::Shape shape = mean_shape(in.shape, axes, c.op().keep_dims);
  if (shape != out.shape) {
    c.problem("the mean of " + shape_text(in.shape) + " over axes " + axes_text(values) + " with keep_dims " +
              (c.op().keep_dims ? "true" : "false") + " has shape " + shape_text(shape) + ", but the output tensor " +
              in_quotes(out.name) + " has shape " + shape_text(out.shape));
  }
  if (!is_quantized(in.type)) return;
  if (!c.quantized({c.op().inputs[0], c.op().outputs[0]})) return;
  check_quantization(c, in, c.op().inputs[0], "input");
  check_quantization(c, out, c.op().outputs[0], "output");
}

// The walk over the input in row-major order: f(o, i) for each element, o
// its output's offset (dense), i its own.
template <typename F>
void for_each_input(const ir::Tensor& x, const std::vector<std::size_t>& axes, F&& f) {
  const sqdiff::Shape& shape = x.shape;
  const std::size_t rank = shape.size();
  std::vector<int64_t> out_strides(rank, 0);
  int64_t dense = 1;
  for (std::size_t d = rank; d-- > 0;) {
    if (!reduced(axes, d)) {
      out_strides[d] = dense;
      dense *= shape[d];
    }
  }
  walk(shape, aligned_strides(x, shape), out_strides, [&](int64_t, int64_t i, int64_t o) { f(o, i); });
}

// One sum per output element, zeroed; they count as a tensor the run makes,
// under the same limit as the outputs.
template <typename T>
std::vector<T> accumulators(const OperatorCall& call, int64_t count) {
  if (count > call.limits.max_tensor_bytes / static_cast<int64_t>(sizeof(T))) {
    throw TfliteError(call.where() + "the " + std::to_string(count) + " sums of " + std::to_string(sizeof(T)) +
                      " bytes are larger than the limit of " + std::to_string(call.limits.max_tensor_bytes) + " bytes");
  }
  try {
    return std::vector<T>(static_cast<std::size_t>(count), T{0});
  } catch (const std::bad_alloc&) {
    throw TfliteError(call.where() + "out of memory for " + std::to_string(count) + " sums");
  }
}

// reference_ops::Mean<float, float>: the float32 sums in the output itself.
void mean_float(const ir::Tensor& x, const std::vector<std::size_t>& axes, uint64_t n, float* out, int64_t count) {
  std::fill(out, out + count, 0.0f);
  const auto* in = static_cast<const float*>(x.data);
  for_each_input(x, axes, [&](int64_t o, int64_t i) { out[o] = out[o] + in[i]; });
  const auto divisor = static_cast<float>(n);
  for (int64_t k = 0; k < count; ++k) out[k] = out[k] / divisor;
}

// reference_ops::Mean<int, int64_t> and <int64_t, int64_t>.
template <typename T>
void mean_integer(const OperatorCall& call, const ir::Tensor& x, const std::vector<std::size_t>& axes, uint64_t n,
                  T* out, int64_t count) {
  std::vector<uint64_t> sums = accumulators<uint64_t>(call, count);
  const auto* in = static_cast<const T*>(x.data);
  for_each_input(x, axes, [&](int64_t o, int64_t i) {
    sums[static_cast<std::size_t>(o)] += static_cast<uint64_t>(static_cast<int64_t>(in[i]));
  });
  const auto divisor = static_cast<int64_t>(n);
  for (int64_t k = 0; k < count; ++k) {
    const int64_t quotient = static_cast<int64_t>(sums[static_cast<std::size_t>(k)]) / divisor;
    out[k] = static_cast<T>(quotient);  // modulo 2^32 for int32 (C++20)
  }
}

// reference_ops::QuantizedMeanOrSum<T, int32_t>, compute_sum false.
template <typename T>
void mean_quantized(const OperatorCall& call, const ir::Tensor& x, const std::vector<std::size_t>& axes, uint64_t n,
                    T* out, int64_t count) {
  const sqdiff::QuantParams qin = *call.input_info(0).quant;
  const sqdiff::QuantParams qout = *call.output_info().quant;
  // PrepareMeanOrSum.
  Multiplier multiplier = quantize_multiplier(static_cast<double>(qin.scale) / static_cast<double>(qout.scale));
  // The 1/n folded into the multiplier.
  int fold = std::bit_width(n) - 1;
  fold = std::min(fold, 32);
  fold = std::min(fold, 31 + multiplier.shift);
  multiplier.m = static_cast<int32_t>((static_cast<int64_t>(multiplier.m) << fold) / static_cast<int64_t>(n));
  multiplier.shift -= fold;

  std::vector<uint32_t> sums = accumulators<uint32_t>(call, count);
  const auto* in = static_cast<const T*>(x.data);
  for_each_input(x, axes, [&](int64_t o, int64_t i) {
    sums[static_cast<std::size_t>(o)] += static_cast<uint32_t>(static_cast<int32_t>(in[i]));
  });
  const auto offset = static_cast<uint32_t>(static_cast<uint64_t>(static_cast<int64_t>(qin.zero_point) *
                                                                  static_cast<int64_t>(n)));
  for (int64_t k = 0; k < count; ++k) {
    const auto shifted_sum = static_cast<int32_t>(sums[static_cast<std::size_t>(k)] - offset);
    const int32_t scaled = multiply_by_quantized_multiplier(shifted_sum, multiplier);
    out[k] = static_cast<T>(clamp_to<T>(wrapping_add(scaled, qout.zero_point)));
  }
}

ir::Tensor run_mean(const OperatorCall& call) {
  const OperatorOutput result = call.allocate_output();
  const ir::Tensor& x = *call.inputs[0];
  const std::vector<std::size_t> axes = resolve_axes(AxisValues(call.input_info(1)), x.shape.size(), nullptr);
  const int64_t count = result.value.element_count();
  const sqdiff::DType dtype = result.value.dtype;
  if (x.element_count() == 0) {
    // InitializeMeanOutput: quiet_NaN<T>(), which is 0 for the integer types.
    if (dtype == sqdiff::DType::f32) {
      std::fill_n(static_cast<float*>(result.data), count, std::numeric_limits<float>::quiet_NaN());
    } else {
      std::memset(result.data, 0, static_cast<std::size_t>(count) * sqdiff::dtype_size(dtype));
    }
    return result.value;
  }
  uint64_t n = 1;  // CheckedReducedElementCount
  for (const std::size_t d : axes) n *= static_cast<uint64_t>(x.shape[d]);
  switch (dtype) {
    case sqdiff::DType::f32: mean_float(x, axes, n, static_cast<float*>(result.data), count); break;
    case sqdiff::DType::i32: mean_integer(call, x, axes, n, static_cast<int32_t*>(result.data), count); break;
    case sqdiff::DType::i64: mean_integer(call, x, axes, n, static_cast<int64_t*>(result.data), count); break;
    case sqdiff::DType::i8: mean_quantized(call, x, axes, n, static_cast<int8_t*>(result.data), count); break;
    case sqdiff::DType::u8: mean_quantized(call, x, axes, n, static_cast<uint8_t*>(result.data), count); break;
    default: mean_quantized(call, x, axes, n, static_cast<int16_t*>(result.data), count); break;
  }
  return result.value;
}

}  // namespace

const OperatorKind kMean{40, check_mean, run_mean};

}  // namespace sqdiff::tools::tflite::ops
