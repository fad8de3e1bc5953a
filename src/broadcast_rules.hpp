// The broadcast rule of SPEC section 3, with errors that name the operation.
#pragma once

#include <string_view>

#include "sqdiff/broadcast.hpp"

namespace sqdiff::detail {

// Like sqdiff::broadcast_shape, but error messages start with `who` ("subtract",
// "squared_difference" or "broadcast_shape").
Shape broadcast_shape_for(std::string_view who, const Shape& a, const Shape& b, Broadcast mode);

// Product of the (non-negative) dims, or -1 if it overflows int64.
int64_t element_count(const Shape& shape);

}  // namespace sqdiff::detail
