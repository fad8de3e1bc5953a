#include "shape/validate.hpp"

#include <string>

#include "shape/broadcast_rules.hpp"
#include "shape/dense_strides.hpp"
#include "shape/memory_extent.hpp"
#include "shape/shape_format.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::detail {
namespace {

[[noreturn]] void fail(std::string_view op, const std::string& reason) {
  throw Error(std::string(op) + ": " + reason);
}

void check_dtypes(std::string_view op, DType a, DType b, DType out) {
  for (const DType dtype : {a, b, out}) check_dtype_is_valid(op, dtype);
  if (a != b) {
    fail(op, "input types differ: a is " + std::string(dtype_name(a)) + ", b is " +
                 std::string(dtype_name(b)) + " (no implicit conversion)");
  }
  if (out != a) {
    fail(op, "output type " + std::string(dtype_name(out)) + " differs from input type " +
                 std::string(dtype_name(a)));
  }
}

// True when an input with these strides (over the output's dims) addresses
// the output's elements in the output's order wherever it starts where the
// output does: the in-place case, which needs no copy.
bool walks_like(std::span<const int64_t> aligned_strides, std::span<const int64_t> out_shape,
                std::span<const int64_t> out_strides) {
  for (std::size_t i = 0; i < out_shape.size(); ++i) {
    if (out_shape[i] > 1 && aligned_strides[i] != out_strides[i]) return false;
  }
  return true;
}

}  // namespace

// The strides made explicit. A size-1 dim never moves, so its stride is set to
// 0: whatever the caller passed there (any int64 is legal) is never multiplied.
DimVector explicit_strides(std::string_view op, std::string_view name, std::span<const int64_t> shape,
                           std::span<const int64_t> strides) {
  if (strides.empty() && !shape.empty()) return dense_strides(shape);
  if (strides.size() != shape.size()) {
    fail(op, "the strides of " + std::string(name) + " have " + std::to_string(strides.size()) +
                 " entries for shape " + format_shape(shape) + " of rank " +
                 std::to_string(shape.size()));
  }
  DimVector checked(strides);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) checked[i] = 0;
  }
  return checked;
}

namespace {

// Inputs strides over the output's dims for one input (numpy and none align
// right; pdpd aligns b at `axis`).
DimVector align_input(std::span<const int64_t> out_shape, std::span<const int64_t> shape,
                      std::span<const int64_t> strides,
                  std::size_t first_dim) {
  DimVector aligned(out_shape.size(), 0);
  for (std::size_t j = 0; j < shape.size(); ++j) {
    if (shape[j] != 1) aligned[first_dim + j] = strides[j];
  }
  return aligned;
}

std::size_t alignment_offset(std::span<const int64_t> out_shape, std::span<const int64_t> input_shape,
                             const Broadcast& mode, bool is_b) {
  const std::size_t rank = out_shape.size();
  if (is_b && mode.kind == BroadcastKind::pdpd && mode.axis != -1) {
    return static_cast<std::size_t>(mode.axis);
  }
  return rank - input_shape.size();
}

}  // namespace

DimVector aligned_strides(std::span<const int64_t> out_shape, std::span<const int64_t> shape,
                          std::span<const int64_t> strides, const Broadcast& mode, bool is_b) {
  return align_input(out_shape, shape, strides, alignment_offset(out_shape, shape, mode, is_b));
}

void check_dtype_is_valid(std::string_view op, DType dtype) {
  if (!is_valid_dtype(dtype)) {
    fail(op, "unsupported dtype (enum value " + std::to_string(static_cast<int>(dtype)) +
                 "); supported: f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64");
  }
}

void check_threads(std::string_view op, int threads) {
  if (threads < 0) {
    fail(op, "threads is " + std::to_string(threads) + "; use 0 for the library default or a positive count");
  }
}

CheckedCall validate_call(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                          const TensorView& out, const Options& options) {
  check_dtypes(op, a.dtype, b.dtype, out.dtype);
  check_threads(op, options.threads);
  DimVector expected;
  broadcast_dims(op, a.shape, b.shape, options.broadcast, expected);
  if (!(expected == std::span<const int64_t>(out.shape))) {
    fail(op, "output shape " + format_shape(out.shape) + " differs from the broadcast shape " +
                 format_shape(expected) + " of " + format_shape(a.shape) + " and " +
                 format_shape(b.shape) + " " + format_mode(options.broadcast));
  }

  CheckedCall call{
      .dtype = a.dtype,
      .element_size = dtype_size(a.dtype),
      .a = {static_cast<const std::byte*>(a.data), a.shape, explicit_strides(op, "a", a.shape, a.strides)},
      .b = {static_cast<const std::byte*>(b.data), b.shape, explicit_strides(op, "b", b.shape, b.strides)},
      .out = static_cast<std::byte*>(out.data),
      .out_shape = out.shape,
      .out_strides = explicit_strides(op, "out", out.shape, out.strides),
      .element_count = element_count(out.shape),  // fits: broadcast_shape_for checked it
  };
  if (call.element_count == 0) return call;  // nothing is read or written

  if (call.a.data == nullptr || call.b.data == nullptr || call.out == nullptr) {
    const char* name = call.a.data == nullptr ? "a" : call.b.data == nullptr ? "b" : "out";
    fail(op, std::string("the data pointer of ") + name + " is null, but the output has " +
                 std::to_string(call.element_count) + " elements");
  }
  call.extent_a = relative_extent(op, "a", call.a.shape, call.a.strides, call.element_size);
  const ByteRange range_a = byte_range(op, "a", call.a.data, call.extent_a);
  call.extent_b = relative_extent(op, "b", call.b.shape, call.b.strides, call.element_size);
  const ByteRange range_b = byte_range(op, "b", call.b.data, call.extent_b);
  call.extent_out = relative_extent(op, "out", call.out_shape, call.out_strides, call.element_size);
  const ByteRange range_out = byte_range(op, "out", call.out, call.extent_out);
  // A dense output (strides left empty) cannot reach one element twice.
  if (!out.strides.empty() && may_overlap_itself(call.out_shape, call.out_strides)) {
    fail(op, "the output view with shape " + format_shape(call.out_shape) + " and strides " +
                 format_shape(call.out_strides) +
                 " may reach one element from two indices (its strides must nest: "
                 "each larger than the reach of the smaller ones)");
  }

  call.output_aliases_input = output_aliases_input(range_a, range_b, range_out);
  call.input_bytes = (range_a.end - range_a.begin) + (range_b.end - range_b.begin);
  call.aligned = align_operands(call, options.broadcast);
  call.a_walks_like_out = walks_like(call.aligned.a_strides, call.out_shape, call.out_strides);
  call.b_walks_like_out = walks_like(call.aligned.b_strides, call.out_shape, call.out_strides);
  call.a_needs_copy = needs_snapshot(range_a, call.a.data, call.a_walks_like_out, range_out, call.out);
  call.b_needs_copy = needs_snapshot(range_b, call.b.data, call.b_walks_like_out, range_out, call.out);
  return call;
}

BroadcastOperands align_operands(const CheckedCall& call, const Broadcast& mode) {
  return {
      .shape = call.out_shape,
      .out_strides = call.out_strides,
      .a_strides = aligned_strides(call.out_shape, call.a.shape, call.a.strides, mode, false),
      .b_strides = aligned_strides(call.out_shape, call.b.shape, call.b.strides, mode, true),
  };
}

}  // namespace sqdiff::detail
