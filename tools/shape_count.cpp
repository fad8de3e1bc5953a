#include "shape_count.hpp"

namespace sqdiff::tools {

std::optional<int64_t> element_count(const sqdiff::Shape& shape) { return byte_count(shape, 1); }

std::optional<int64_t> byte_count(const sqdiff::Shape& shape, std::size_t item_size) {
  int64_t product = static_cast<int64_t>(item_size);
  bool empty = false;
  for (const int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(product, d, &product)) {
      return std::nullopt;
    }
  }
  return empty ? 0 : product;
}

sqdiff::Shape dense_strides(const sqdiff::Shape& shape) {
  sqdiff::Shape strides(shape.size());
  int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

}  // namespace sqdiff::tools
