#include "reduce/reduce_call.hpp"

#include <string>
#include <utility>
#include <vector>

#include "shape/broadcast_rules.hpp"
#include "shape/dense_strides.hpp"
#include "shape/memory_extent.hpp"
#include "shape/reduce_axes.hpp"
#include "shape/shape_format.hpp"
#include "shape/validate.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::detail {
namespace {

[[noreturn]] void fail(std::string_view op, const std::string& reason) { throw Error(std::string(op) + ": " + reason); }

bool is_float(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64; }
bool is_signed_integer(DType t) { return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64; }

// SPEC section 7's table: the output types a reduction of `input` may have.
std::vector<DType> allowed_outputs(DType input, bool mean) {
  switch (input) {
    case DType::f16:
    case DType::bf16: return {input, DType::f32, DType::f64};
    case DType::f32: return {DType::f32, DType::f64};
    case DType::f64: return {DType::f64, DType::f32};
    default:
      if (mean) return {DType::f64, DType::f32};
      return {is_signed_integer(input) ? DType::i64 : DType::u64, DType::f64};
  }
}

std::string names(const std::vector<DType>& types) {
  std::string text;
  for (std::size_t i = 0; i < types.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == types.size() ? " or " : ", ");
    text += dtype_name(types[i]);
  }
  return text;
}

int64_t product_where(std::span<const int64_t> shape, std::span<const int64_t> mask, bool value) {
  int64_t n = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if ((mask[i] != 0) == value) n *= shape[i];
  }
  return n;
}

// The byte range of a view that will be read or written; Error when its
// extent does not fit or wraps around.
ByteRange range_of(std::string_view op, std::string_view name, const void* data, std::span<const int64_t> shape,
                   std::span<const int64_t> strides, std::size_t element_size) {
  return byte_range(op, name, data, relative_extent(op, name, shape, strides, element_size));
}

void check_not_null(std::string_view op, const char* name, const void* data, const std::string& why) {
  if (data == nullptr) fail(op, std::string("the data pointer of ") + name + " is null, but " + why);
}

// One input view checked and aligned to the broadcast shape.
struct AlignedInput {
  const std::byte* data;
  DimVector strides;  // over the broadcast shape
  ByteRange range{0, 0};
};

AlignedInput align(std::string_view op, const char* name, const ConstTensorView& view, std::span<const int64_t> shape,
                   const Broadcast& mode, bool is_b, bool read) {
  const DimVector own = explicit_strides(op, name, view.shape, view.strides);
  AlignedInput input{static_cast<const std::byte*>(view.data), aligned_strides(shape, view.shape, own, mode, is_b)};
  if (read) {
    check_not_null(op, name, view.data, "the call reads it");
    input.range = range_of(op, name, view.data, view.shape, own, dtype_size(view.dtype));
  }
  return input;
}

// The output's checks: not null, its extent, no two indices reaching one
// element (only a view with explicit strides can), and its overlap with the
// inputs, which makes the call compute aside and copy at the end.
void check_output(std::string_view op, const char* name, ReduceCall& call, const TensorView& out,
                  std::span<const int64_t> own_strides, const std::vector<ByteRange>& inputs) {
  check_not_null(op, name, out.data, "it has " + std::to_string(call.outputs) + " elements");
  const ByteRange range = range_of(op, name, out.data, out.shape, own_strides, dtype_size(out.dtype));
  if (!out.strides.empty() && may_overlap_itself(out.shape, own_strides)) {
    fail(op, std::string("the output view ") + name + " with shape " + format_shape(out.shape) + " and strides " +
                 format_shape(own_strides) +
                 " may reach one element from two indices (its strides must nest: each larger than the reach "
                 "of the smaller ones)");
  }
  for (const ByteRange& input : inputs) call.out_aliases_input = call.out_aliases_input || input.overlaps(range);
}

}  // namespace

namespace {

}  // namespace

void check_reduction_output_type(std::string_view op, DType input, DType output, bool mean) {
  const std::vector<DType> allowed = allowed_outputs(input, mean);
  bool output_allowed = false;
  for (const DType t : allowed) output_allowed = output_allowed || t == output;
  if (!output_allowed) {
    fail(op, "output type " + std::string(dtype_name(output)) + " is not one for " + std::string(dtype_name(input)) +
                 " inputs (" + names(allowed) + ")");
  }
}

namespace {

// The inputs' side of a reduction: types, broadcast shape, axes, strides.
// `out_dims` is the output's (or partial state's) shape, checked against the
// reduced shape. The inputs' byte ranges come back for the aliasing checks.
ReduceCall reduction_inputs(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                            std::span<const int64_t> out_dims, const ReduceOptions& options, bool mean,
                            std::vector<ByteRange>& input_ranges) {
  for (const DType t : {a.dtype, b.dtype}) check_dtype_is_valid(op, t);
  if (a.dtype != b.dtype) {
    fail(op, "input types differ: a is " + std::string(dtype_name(a.dtype)) + ", b is " +
                 std::string(dtype_name(b.dtype)) + " (no implicit conversion)");
  }
  check_threads(op, options.threads);
  ReduceCall call;
  call.input = a.dtype;
  call.mean = mean;
  call.threads = options.threads;
  broadcast_dims(op, a.shape, b.shape, options.broadcast, call.shape);
  call.reduced = reduced_axes(op, call.shape, options.axes);
  const DimVector expected = reduced_dims(call.shape, call.reduced, options.keepdims);
  if (!(expected == out_dims)) {
    fail(op, "output shape " + format_shape(out_dims) + " differs from the reduced shape " + format_shape(expected) +
                 " (the broadcast shape " + format_shape(call.shape) + " of " + format_shape(a.shape) + " and " +
                 format_shape(b.shape) + " " + format_mode(options.broadcast) + (options.keepdims ? ", keepdims" : "") +
                 ")");
  }
  call.outputs = element_count(out_dims);
  call.count = product_where(call.shape, call.reduced, true);
  const bool reads = call.outputs > 0 && call.count > 0;
  const AlignedInput ia = align(op, "a", a, call.shape, options.broadcast, false, reads);
  const AlignedInput ib = align(op, "b", b, call.shape, options.broadcast, true, reads);
  call.data = {ia.data, ib.data, nullptr};
  call.strides = {ia.strides, ib.strides, DimVector()};
  if (reads) input_ranges = {ia.range, ib.range};
  return call;
}

// The output's strides over the broadcast shape: its own on kept dims, 0 on
// reduced ones (keepdims' 1s do not move either).
DimVector out_strides_over(const ReduceCall& call, std::span<const int64_t> own, bool keepdims) {
  DimVector strides(call.shape.size(), 0);
  for (std::size_t i = 0, j = 0; i < call.shape.size(); ++i) {
    if (call.reduced[i] == 0) {
      strides[i] = own[j++];
    } else if (keepdims) {
      ++j;
    }
  }
  return strides;
}

}  // namespace

ReduceCall validate_reduction(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                              const TensorView& out, const ReduceOptions& options, bool mean) {
  check_dtype_is_valid(op, out.dtype);
  if (is_valid_dtype(a.dtype)) check_reduction_output_type(op, a.dtype, out.dtype, mean);
  std::vector<ByteRange> input_ranges;
  ReduceCall call = reduction_inputs(op, a, b, out.shape, options, mean, input_ranges);
  call.output = out.dtype;
  const DimVector own_out = explicit_strides(op, "out", out.shape, out.strides);
  call.out_strides = out_strides_over(call, own_out, options.keepdims);
  call.out = static_cast<std::byte*>(out.data);
  if (call.outputs > 0) check_output(op, "out", call, out, own_out, input_ranges);
  return call;
}

ReduceCall validate_partial_reduction(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                                      uint64_t* partials, std::size_t words, const ReduceOptions& options) {
  if (!is_valid_dtype(a.dtype)) check_dtype_is_valid(op, a.dtype);
  // The state's shape is the reduced shape itself (whatever it is).
  DimVector shape;
  broadcast_dims(op, a.shape, b.shape, options.broadcast, shape);
  const DimVector dims = reduced_dims(shape, reduced_axes(op, shape, options.axes), options.keepdims);
  std::vector<ByteRange> input_ranges;
  ReduceCall call = reduction_inputs(op, a, b, dims, options, false, input_ranges);
  call.output = a.dtype;  // unused: the state is not rounded
  call.out = reinterpret_cast<std::byte*>(partials);
  call.out_strides = out_strides_over(call, dense_strides(dims), options.keepdims);
  if (call.outputs > 0) {
    check_not_null(op, "partials", partials, "it holds " + std::to_string(call.outputs) + " states");
    const ByteRange range = range_of(op, "partials", partials, dims, dense_strides(dims), words * sizeof(uint64_t));
    for (const ByteRange& input : input_ranges) {
      if (input.overlaps(range)) fail(op, "the partial state's memory overlaps an input");
    }
  }
  return call;
}

namespace {

// One gradient of a broadcast op: summed over the dims its input is
// broadcast on. `input_shape` is that input's shape, `is_b` its side of the
// broadcast rule.
ReduceCall gradient_call(std::string_view op, const char* name, const TensorView& grad, std::span<const int64_t> input_shape,
                         std::span<const int64_t> shape, const Broadcast& mode, bool is_b) {
  if (!(DimVector(input_shape) == std::span<const int64_t>(grad.shape))) {
    fail(op, std::string(name) + " has shape " + format_shape(grad.shape) + ", not the shape " +
                 format_shape(input_shape) + " of " + (is_b ? "b" : "a"));
  }
  ReduceCall call;
  call.shape = DimVector(shape);
  call.output = grad.dtype;
  call.negate = is_b;
  const DimVector own = explicit_strides(op, name, grad.shape, grad.strides);
  call.out_strides = aligned_strides(shape, grad.shape, own, mode, is_b);
  // Summed over the dims the input does not cover, and its 1s.
  const DimVector ones = aligned_strides(shape, input_shape, DimVector(input_shape.size(), 1), mode, is_b);
  call.reduced = DimVector(shape.size(), 0);
  for (std::size_t i = 0; i < shape.size(); ++i) call.reduced[i] = ones[i] == 0 ? 1 : 0;
  call.outputs = element_count(input_shape);
  call.count = product_where(shape, call.reduced, true);
  call.out = static_cast<std::byte*>(grad.data);
  return call;
}

// The views present (a skipped gradient is not), all of one float type.
void check_float_types(std::string_view op, const std::vector<std::pair<const char*, DType>>& views) {
  const DType first = views.front().second;
  for (const auto& [name, dtype] : views) {
    check_dtype_is_valid(op, dtype);
    if (!is_float(dtype)) {
      fail(op, std::string(name) + " is " + std::string(dtype_name(dtype)) +
                   ": gradients take float types only (f16, bf16, f32, f64)");
    }
    if (dtype != first) {
      fail(op, std::string(name) + " is " + std::string(dtype_name(dtype)) + ", not " +
                   std::string(dtype_name(first)) + " like " + views.front().first +
                   " (one type for every tensor, no implicit conversion)");
    }
  }
}

// Gradient outputs are written; two of them sharing bytes would leave one
// result overwritten by the other.
void check_gradients_apart(std::string_view op, const TensorView* grad_a, const TensorView* grad_b,
                           const std::array<ReduceCall, 2>& calls) {
  if (grad_a == nullptr || grad_b == nullptr || calls[0].outputs == 0 || calls[1].outputs == 0) return;
  const ByteRange ra = range_of(op, "grad_a", grad_a->data, grad_a->shape,
                                explicit_strides(op, "grad_a", grad_a->shape, grad_a->strides), dtype_size(grad_a->dtype));
  const ByteRange rb = range_of(op, "grad_b", grad_b->data, grad_b->shape,
                                explicit_strides(op, "grad_b", grad_b->shape, grad_b->strides), dtype_size(grad_b->dtype));
  if (ra.overlaps(rb)) fail(op, "grad_a and grad_b share memory; each needs its own");
}

}  // namespace

namespace {

// One, in each float type's bits: mean_squared_difference_backward's grad_out,
// read through strides of 0 (static, so that the calls may point at it).
alignas(8) constexpr uint16_t kOneF16 = 0x3C00;
alignas(8) constexpr uint16_t kOneBF16 = 0x3F80;
alignas(8) constexpr float kOneF32 = 1.0f;
alignas(8) constexpr double kOneF64 = 1.0;

const void* one_of(DType dtype) {
  switch (dtype) {
    case DType::f16: return &kOneF16;
    case DType::bf16: return &kOneBF16;
    case DType::f32: return &kOneF32;
    default: return &kOneF64;  // f64: the float check has refused every other type
  }
}

// squared_difference_backward's validation under the name `op`; a null
// grad_out stands for ones of the broadcast shape (mean_squared_difference_backward).
std::array<ReduceCall, 2> validate_difference_products(std::string_view op, const ConstTensorView& a,
                                                       const ConstTensorView& b, const ConstTensorView* given_grad_out,
                                                       const TensorView* grad_a, const TensorView* grad_b,
                                                       const Options& options) {
  std::vector<std::pair<const char*, DType>> types{{"a", a.dtype}, {"b", b.dtype}};
  if (given_grad_out != nullptr) types.emplace_back("grad_out", given_grad_out->dtype);
  if (grad_a != nullptr) types.emplace_back("grad_a", grad_a->dtype);
  if (grad_b != nullptr) types.emplace_back("grad_b", grad_b->dtype);
  check_float_types(op, types);
  check_threads(op, options.threads);
  DimVector shape;
  broadcast_dims(op, a.shape, b.shape, options.broadcast, shape);
  const int64_t terms = element_count(shape);
  const ConstTensorView ones{one_of(a.dtype), a.dtype, Shape(shape.begin(), shape.end()), Shape(shape.size(), 0)};
  const ConstTensorView& grad_out = given_grad_out != nullptr ? *given_grad_out : ones;
  if (!(shape == std::span<const int64_t>(grad_out.shape))) {
    fail(op, "grad_out has shape " + format_shape(grad_out.shape) + ", not the broadcast shape " + format_shape(shape) +
                 " of " + format_shape(a.shape) + " and " + format_shape(b.shape) + " " + format_mode(options.broadcast));
  }
  std::array<ReduceCall, 2> calls;
  const TensorView* grads[2] = {grad_a, grad_b};
  const ConstTensorView* inputs[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    if (grads[k] == nullptr) continue;
    calls[k] = gradient_call(op, k == 0 ? "grad_a" : "grad_b", *grads[k], inputs[k]->shape, shape, options.broadcast,
                             k == 1);
  }
  const bool reads = (calls[0].outputs > 0 || calls[1].outputs > 0) && terms > 0;
  const AlignedInput ia = align(op, "a", a, shape, options.broadcast, false, reads);
  const AlignedInput ib = align(op, "b", b, shape, options.broadcast, true, reads);
  const AlignedInput ig = align(op, "grad_out", grad_out, shape, Broadcast{BroadcastKind::none, -1}, false, reads);
  for (int k = 0; k < 2; ++k) {
    ReduceCall& call = calls[k];
    call.input = a.dtype;
    call.term = Term::difference_product;
    call.operands = 3;
    call.threads = options.threads;
    call.data = {ia.data, ib.data, ig.data};
    call.strides = {ia.strides, ib.strides, ig.strides};
    if (call.outputs == 0) continue;
    const TensorView& grad = *grads[k];
    check_output(op, k == 0 ? "grad_a" : "grad_b", call, grad, explicit_strides(op, "grad", grad.shape, grad.strides),
                 reads ? std::vector<ByteRange>{ia.range, ib.range, ig.range} : std::vector<ByteRange>{});
  }
  check_gradients_apart(op, grad_a, grad_b, calls);
  if (given_grad_out == nullptr) {
    // A mean over every element: each output's sum divided by their count (with
    // none, a sum of no terms, +0, left undivided).
    for (ReduceCall& call : calls) call.divisor = static_cast<uint64_t>(terms);
  }
  return calls;
}

}  // namespace

std::array<ReduceCall, 2> validate_squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b,
                                                               const ConstTensorView& grad_out,
                                                               const TensorView* grad_a, const TensorView* grad_b,
                                                               const Options& options) {
  return validate_difference_products("squared_difference_backward", a, b, &grad_out, grad_a, grad_b, options);
}

std::array<ReduceCall, 2> validate_mean_squared_difference_backward(const ConstTensorView& a, const ConstTensorView& b,
                                                                    const TensorView* grad_a, const TensorView* grad_b,
                                                                    const Options& options) {
  return validate_difference_products("mean_squared_difference_backward", a, b, nullptr, grad_a, grad_b, options);
}

std::array<ReduceCall, 2> validate_subtract_backward(const ConstTensorView& grad_out, const TensorView* grad_a,
                                                     const TensorView* grad_b, const Options& options) {
  constexpr std::string_view op = "subtract_backward";
  std::vector<std::pair<const char*, DType>> types{{"grad_out", grad_out.dtype}};
  if (grad_a != nullptr) types.emplace_back("grad_a", grad_a->dtype);
  if (grad_b != nullptr) types.emplace_back("grad_b", grad_b->dtype);
  check_float_types(op, types);
  check_threads(op, options.threads);
  // A skipped gradient's input is taken to have a shape that broadcasts to
  // grad_out's in every alignment: grad_out's own, except b in pdpd, whose
  // window at a non-default axis cannot have a's rank (a scalar fits any).
  const bool scalar_b = options.broadcast.kind == BroadcastKind::pdpd;
  const Shape shape_a = grad_a != nullptr ? grad_a->shape : grad_out.shape;
  const Shape shape_b = grad_b != nullptr ? grad_b->shape : (scalar_b ? Shape{} : grad_out.shape);
  DimVector shape;
  broadcast_dims(op, shape_a, shape_b, options.broadcast, shape);
  if (!(shape == std::span<const int64_t>(grad_out.shape))) {
    fail(op, "grad_out has shape " + format_shape(grad_out.shape) + ", not the broadcast shape " + format_shape(shape) +
                 " of grad_a's " + format_shape(shape_a) + " and grad_b's " + format_shape(shape_b) + " " +
                 format_mode(options.broadcast));
  }
  std::array<ReduceCall, 2> calls;
  const TensorView* grads[2] = {grad_a, grad_b};
  const Shape* shapes[2] = {&shape_a, &shape_b};
  for (int k = 0; k < 2; ++k) {
    if (grads[k] != nullptr) {
      calls[k] = gradient_call(op, k == 0 ? "grad_a" : "grad_b", *grads[k], *shapes[k], shape, options.broadcast, k == 1);
    }
  }
  const bool reads = (calls[0].outputs > 0 || calls[1].outputs > 0) && element_count(shape) > 0;
  const AlignedInput ig = align(op, "grad_out", grad_out, shape, Broadcast{BroadcastKind::none, -1}, false, reads);
  for (int k = 0; k < 2; ++k) {
    ReduceCall& call = calls[k];
    call.input = grad_out.dtype;
    call.term = Term::value;
    call.operands = 1;
    call.threads = options.threads;
    call.data = {ig.data, nullptr, nullptr};
    call.strides = {ig.strides, DimVector(), DimVector()};
    if (call.outputs == 0) continue;
    const TensorView& grad = *grads[k];
    check_output(op, k == 0 ? "grad_a" : "grad_b", call, grad, explicit_strides(op, "grad", grad.shape, grad.strides),
                 reads ? std::vector<ByteRange>{ig.range} : std::vector<ByteRange>{});
  }
  check_gradients_apart(op, grad_a, grad_b, calls);
  return calls;
}

}  // namespace sqdiff::detail
