#include "elementwise/dense_fast_path.hpp"

#include <cstdint>

#include "elementwise/execute.hpp"
#include "runtime/fp_environment.hpp"
#include "shape/dim_vector.hpp"
#include "shape/memory_extent.hpp"

namespace sqdiff::detail {
namespace {

// Same-shape operands broadcast to that shape in every mode, except pdpd with
// an axis past 0 (an error) or below -1 (an error).
bool shape_rule_is_identity(const Broadcast& mode) {
  return mode.kind == BroadcastKind::numpy || mode.kind == BroadcastKind::none ||
         (mode.kind == BroadcastKind::pdpd && (mode.axis == -1 || mode.axis == 0));
}

// Dense views of one shape either are the same view (in place) or must not
// share a byte; any partial overlap needs the general path's snapshot.
bool disjoint_or_same(const void* input, const void* out, std::size_t bytes) {
  const auto x = reinterpret_cast<uintptr_t>(input);
  const auto y = reinterpret_cast<uintptr_t>(out);
  return x == y || !ByteRange{x, x + bytes}.overlaps(ByteRange{y, y + bytes});
}

}  // namespace

bool try_dense_fast_path(Op op, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                         const Options& options) {
  if (!is_valid_dtype(a.dtype) || b.dtype != a.dtype || out.dtype != a.dtype) return false;
  if (!a.strides.empty() || !b.strides.empty() || !out.strides.empty()) return false;
  if (options.threads < 0 || !shape_rule_is_identity(options.broadcast)) return false;
  if (!same_dims(a.shape, out.shape) || !same_dims(b.shape, out.shape)) return false;
  const std::size_t element_size = dtype_size(a.dtype);
  // Bounded in bytes: kMinParallelOutputBytes / element_size, a bound in
  // elements, was a division, ~10% of a 16-element call (perf).
  std::size_t count = 1;
  for (const int64_t dim : out.shape) {
    // Negative dims go to the general path's error; the bounds keep the
    // products far from overflow.
    if (dim <= 0 || static_cast<std::size_t>(dim) > kMinParallelOutputBytes) return false;
    count *= static_cast<std::size_t>(dim);
    if (count * element_size > kMinParallelOutputBytes) return false;
  }
  if (a.data == nullptr || b.data == nullptr || out.data == nullptr) return false;
  const std::size_t bytes = count * element_size;
  if (!disjoint_or_same(a.data, out.data, bytes) || !disjoint_or_same(b.data, out.data, bytes)) return false;

  const ScopedIeeeDefaults ieee_defaults(a.dtype);
  static constexpr RowBatch kOneRow{};  // not built per call: that was a rep stos of 88 bytes
  const RowKernels& kernels = kernel_table().at(op, a.dtype);
  // Only for rows that long: sizing up the call first would cost the short ones.
  const bool narrow_long_rows =
      bytes >= kLongRowBytes && narrows_long_rows(3 * bytes, 1, a.data == out.data || b.data == out.data);
  (narrow_long_rows ? kernels.narrow_long_rows : kernels.plain).vv(a.data, b.data, out.data, count, kOneRow);
  return true;
}

}  // namespace sqdiff::detail
