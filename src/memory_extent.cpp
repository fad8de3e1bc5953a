#include "memory_extent.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "sqdiff/error.hpp"

namespace sqdiff::detail {

ByteRange byte_range(std::string_view who, std::string_view name, const void* data,
                     std::span<const int64_t> shape, std::span<const int64_t> strides,
                     std::size_t element_size) {
  // Lowest and highest element offsets reachable, relative to `data`.
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
  int64_t low_bytes = 0;
  int64_t span_bytes = 0;
  const auto size = static_cast<int64_t>(element_size);
  overflow = overflow || __builtin_mul_overflow(low, size, &low_bytes) ||
             __builtin_sub_overflow(high, low, &span_bytes) ||
             __builtin_add_overflow(span_bytes, 1, &span_bytes) ||
             __builtin_mul_overflow(span_bytes, size, &span_bytes);
  const auto address = reinterpret_cast<uintptr_t>(data);
  uintptr_t begin = 0;
  uintptr_t end = 0;
  overflow = overflow || __builtin_add_overflow(address, low_bytes, &begin) ||
             __builtin_add_overflow(begin, static_cast<uintptr_t>(span_bytes), &end);
  if (overflow) {
    throw Error(std::string(who) + ": the view of " + std::string(name) +
                " reaches beyond the address space (its strides times its shape overflow)");
  }
  return {begin, end};
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
