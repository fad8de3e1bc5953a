// Broadcast modes and the shape rule of SPEC section 3.
#pragma once

#include <cstdint>
#include <vector>

namespace sqdiff {

enum class BroadcastKind : uint8_t { none, numpy, pdpd };

// `axis` matters only for pdpd; -1 aligns b with the trailing dims of a.
struct Broadcast {
  BroadcastKind kind = BroadcastKind::numpy;
  int64_t axis = -1;
};

// Shapes and strides, counted in elements.
using Shape = std::vector<int64_t>;

// The output shape of an element-wise op on inputs of shapes `a` and `b`.
// Throws sqdiff::Error when the shapes do not broadcast, a dim is negative, or
// the element count does not fit in int64.
Shape broadcast_shape(const Shape& a, const Shape& b, Broadcast mode = {});

}  // namespace sqdiff
