// Row-major strides, in elements, of a dense tensor.
#pragma once

#include "sqdiff/broadcast.hpp"

namespace sqdiff::detail {

inline Shape dense_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i] > 0 ? shape[i] : 1;  // no overflow: callers checked the element count
  }
  return strides;
}

}  // namespace sqdiff::detail
