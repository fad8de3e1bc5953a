// The broadcast rule of SPEC section 3, with errors that name the operation.
#pragma once

#include <span>
#include <string_view>

#include "shape/dim_vector.hpp"

#include "sqdiff/broadcast.hpp"

namespace sqdiff::detail {

// sqdiff::broadcast_shape into `out`, without heap use up to rank 8; error
// messages start with `who` ("subtract", "squared_difference" or "broadcast_shape").
void broadcast_dims(std::string_view who, std::span<const int64_t> a, std::span<const int64_t> b,
                    Broadcast mode, DimVector& out);

// Product of the (non-negative) dims, or -1 if the product of the non-zero
// dims overflows int64 (NumPy's rule: [0, 2^62, 4] is refused too).
int64_t element_count(std::span<const int64_t> shape);

}  // namespace sqdiff::detail
