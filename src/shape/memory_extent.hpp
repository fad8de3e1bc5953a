// Where a strided view lives in memory: its byte range, and whether two
// different indices of an output view can reach the same element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "sqdiff/broadcast.hpp"

namespace sqdiff::detail {

// The bytes [begin, end) that a non-empty view can touch.
struct ByteRange {
  uintptr_t begin;
  uintptr_t end;

  bool overlaps(const ByteRange& other) const { return begin < other.end && other.begin < end; }
};

// Where a view's bytes lie relative to its data pointer: from low_bytes (<= 0)
// on, span_bytes of them. Independent of the pointer, so a repeated call can
// keep it (call_memo.hpp).
struct RelativeExtent {
  int64_t low_bytes;
  int64_t span_bytes;

  // The bytes at `data`; false if they would wrap around the address space.
  // Inline: a repeated call places three extents (call_memo.hpp).
  bool place(const void* data, ByteRange& range) const {
    const auto address = reinterpret_cast<uintptr_t>(data);
    return !__builtin_add_overflow(address, low_bytes, &range.begin) &&
           !__builtin_add_overflow(range.begin, static_cast<uintptr_t>(span_bytes), &range.end);
  }
};

// Throws Error naming `who` and `name` if the view's extent does not fit in
// int64 bytes.
RelativeExtent relative_extent(std::string_view who, std::string_view name, std::span<const int64_t> shape,
                               std::span<const int64_t> strides, std::size_t element_size);

// The extent placed at `data`; throws Error naming `who` and `name` if it
// wraps around the address space.
ByteRange byte_range(std::string_view who, std::string_view name, const void* data, const RelativeExtent& extent);

// Conservative: true unless the dims of size > 1, ordered by |stride|, nest
// (each stride exceeds the reach of all smaller ones). A view that fails this
// may still be collision-free (shape [3,3], strides [2,3]); SPEC allows that.
bool may_overlap_itself(std::span<const int64_t> shape, std::span<const int64_t> strides);

}  // namespace sqdiff::detail
