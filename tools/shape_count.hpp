// Element and byte counts of the tools' shapes, counted as NumPy counts them:
// the product of the non-zero dims must fit in int64 (also when a 0 dim makes
// the shape empty), so that every dense stride of an accepted shape fits too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "sqdiff/broadcast.hpp"

namespace sqdiff::tools {

// The element count (0 for an empty shape); nullopt for a negative dim or a
// product of the non-zero dims beyond int64.
std::optional<int64_t> element_count(const sqdiff::Shape& shape);

// The element count times `item_size`, under the same rule (NumPy refuses an
// array whose non-zero dims times its item size overflow, even if empty).
std::optional<int64_t> byte_count(const sqdiff::Shape& shape, std::size_t item_size);

// Row-major strides in elements; the shape must have passed element_count.
sqdiff::Shape dense_strides(const sqdiff::Shape& shape);

}  // namespace sqdiff::tools
