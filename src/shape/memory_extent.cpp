#include "shape/memory_extent.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "sqdiff/error.hpp"

namespace sqdiff::detail {

namespace {

[[noreturn]] void fail_extent(std::string_view who, std::string_view name) {
  throw Error(std::string(who) + ": the view of " + std::string(name) +
              " reaches beyond the address space (its strides times its shape overflow)");
}

}  // namespace

RelativeExtent relative_extent(std::string_view who, std::string_view name, std::span<const int64_t> shape,
                               std::span<const int64_t> strides, std::size_t element_size) {
  // Lowest and highest element offsets reachable, relative to the data pointer.
  int64_t low = 0;
  int64_t high = 0;
  bool overflow = false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    int64_t reach = 0;
    overflow = overflow || __builtin_mul_overflow(strides[i], shape[i] - 1, &reach);
    // Two named updates, not one through a reference: that kept low and high
    // in memory, and each dim waited on the store of the one before (perf).
    if (reach < 0) {
      overflow = overflow || __builtin_add_overflow(low, reach, &low);
    } else {
      overflow = overflow || __builtin_add_overflow(high, reach, &high);
    }
  }
  RelativeExtent extent{};
  const auto size = static_cast<int64_t>(element_size);
  overflow = overflow || __builtin_mul_overflow(low, size, &extent.low_bytes) ||
             __builtin_sub_overflow(high, low, &extent.span_bytes) ||
             __builtin_add_overflow(extent.span_bytes, 1, &extent.span_bytes) ||
             __builtin_mul_overflow(extent.span_bytes, size, &extent.span_bytes);
  if (overflow) fail_extent(who, name);
  return extent;
}

ByteRange byte_range(std::string_view who, std::string_view name, const void* data, const RelativeExtent& extent) {
  ByteRange range{};
  if (!extent.place(data, range)) fail_extent(who, name);
  return range;
}

bool may_overlap_itself(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  // (|stride|, size) of the dims of size > 1: at most 62 of them fit in int64.
  std::array<std::pair<uint64_t, int64_t>, 64> dims;
  std::size_t count = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] > 1) {
      const int64_t stride = strides[i];
      dims[count++] = {stride < 0 ? 0 - static_cast<uint64_t>(stride) : static_cast<uint64_t>(stride), shape[i]};
    }
  }
  std::sort(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(count));
  uint64_t reach = 0;  // furthest element offset the smaller-stride dims reach
  for (std::size_t i = 0; i < count; ++i) {
    const auto& [stride, size] = dims[i];
    if (stride <= reach) return true;
    // No overflow: byte_range has already bounded stride * (size - 1) sums.
    reach += stride * static_cast<uint64_t>(size - 1);
  }
  return false;
}

}  // namespace sqdiff::detail
