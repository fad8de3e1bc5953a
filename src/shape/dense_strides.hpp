// Row-major strides, in elements, of a dense tensor.
#pragma once

#include <span>

#include "shape/dim_vector.hpp"

namespace sqdiff::detail {

inline DimVector dense_strides(std::span<const int64_t> shape) {
  DimVector strides(shape.size());
  int64_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i] > 0 ? shape[i] : 1;  // no overflow: callers checked element_count
  }
  return strides;
}

}  // namespace sqdiff::detail
