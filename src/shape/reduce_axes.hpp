// The axes a reduction covers (SPEC section 7): checked and normalised, and
// the shape of its result.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "shape/dim_vector.hpp"
#include "sqdiff/broadcast.hpp"

namespace sqdiff::detail {

// For each dim of `shape`, whether it is reduced: every dim for nullopt,
// otherwise the listed axes (negative ones count from the end). Throws Error,
// its message starting with `who`, for an axis out of range or repeated.
DimVector reduced_axes(std::string_view who, std::span<const int64_t> shape, const std::optional<Shape>& axes);

// The shape left after reducing the dims marked in `reduced` (a 1 in their
// place with keepdims).
DimVector reduced_dims(std::span<const int64_t> shape, std::span<const int64_t> reduced, bool keepdims);

}  // namespace sqdiff::detail
