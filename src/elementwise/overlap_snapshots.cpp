#include "elementwise/overlap_snapshots.hpp"

#include "elementwise/strided_copy.hpp"
#include "shape/dense_strides.hpp"

namespace sqdiff::detail {
namespace {

void snapshot(CheckedInput& input, std::size_t element_size, std::vector<std::byte>& storage) {
  storage = dense_copy(input, element_size);
  input.data = storage.data();
  input.strides = dense_strides(input.shape);
}

}  // namespace

bool snapshot_overlapping_inputs(CheckedCall& call, const Broadcast& mode, InputSnapshots& storage) {
  if (!call.a_needs_copy && !call.b_needs_copy) return false;
  if (call.a_needs_copy) snapshot(call.a, call.element_size, storage.a);
  if (call.b_needs_copy) snapshot(call.b, call.element_size, storage.b);
  call.aligned = align_operands(call, mode);
  return true;
}

}  // namespace sqdiff::detail
