// Validation of a call: every check that can fail runs here, before anything
// is written, and turns the caller's views into explicit, checked strides.
#pragma once

#include <cstddef>
#include <string_view>

#include "elementwise/plan.hpp"
#include "shape/dim_vector.hpp"
#include "shape/memory_extent.hpp"
#include "sqdiff/ops.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff::detail {

// A view with its strides made explicit (dense row-major filled in).
struct CheckedInput {
  const std::byte* data;
  DimVector shape;
  DimVector strides;
};

struct CheckedCall {
  DType dtype;
  std::size_t element_size;
  CheckedInput a;
  CheckedInput b;
  std::byte* out;
  DimVector out_shape;
  DimVector out_strides;
  int64_t element_count;  // of the output; 0 means there is nothing to do
  // An input that overlaps the output other than as exactly the same view must
  // be copied before anything is written (SPEC section 4).
  bool a_needs_copy = false;
  bool b_needs_copy = false;
  // The output shares memory with an input (in place, or a copied overlap).
  bool output_aliases_input = false;
  // Bytes the inputs' views span (a broadcast input spans only its own elements).
  std::size_t input_bytes = 0;
  // Where each view's bytes lie relative to its data pointer.
  RelativeExtent extent_a = {};
  RelativeExtent extent_b = {};
  RelativeExtent extent_out = {};
  // The input steps through memory as the output does over every dim that
  // moves: at the output's address it is the output's view (in place).
  bool a_walks_like_out = false;
  bool b_walks_like_out = false;
  // The inputs' strides over the output's dims; recomputed (align_operands)
  // only when an input is replaced by a snapshot.
  BroadcastOperands aligned = {};
};

// SPEC section 4: an input whose bytes overlap the output's must be copied
// before anything is written, unless it is the output's own view (in place:
// the same start, walking memory as the output does).
inline bool needs_snapshot(const ByteRange& input, const void* input_data, bool walks_like_out,
                           const ByteRange& out, const void* out_data) {
  return input.overlaps(out) && !(input_data == out_data && walks_like_out);
}

// The output shares memory with an input (in place, or a copied overlap): see
// choose_policy.
inline bool output_aliases_input(const ByteRange& a, const ByteRange& b, const ByteRange& out) {
  return a.overlaps(out) || b.overlaps(out);
}

// Checks every op shares (errors start with `op`).
void check_dtype_is_valid(std::string_view op, DType dtype);  // one of the twelve
void check_threads(std::string_view op, int threads);          // 0 or more

// A view's strides made explicit (dense row-major when empty; 0 on size-1
// dims); throws Error when their count is not the rank.
DimVector explicit_strides(std::string_view op, std::string_view name, std::span<const int64_t> shape,
                           std::span<const int64_t> strides);

// An input's strides over the broadcast shape's dims (0 where it is
// broadcast): numpy and none align right, pdpd aligns b at the mode's axis.
DimVector aligned_strides(std::span<const int64_t> out_shape, std::span<const int64_t> shape,
                          std::span<const int64_t> strides, const Broadcast& mode, bool is_b);

// Throws Error (messages start with `op`) for any invalid input; writes nothing.
CheckedCall validate_call(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                          const TensorView& out, const Options& options);

// The inputs' strides over the output's dims (0 where an input is broadcast).
BroadcastOperands align_operands(const CheckedCall& call, const Broadcast& mode);

}  // namespace sqdiff::detail
