#include "shape/reduce_axes.hpp"

#include <string>

#include "shape/shape_format.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/reduce.hpp"

namespace sqdiff::detail {

DimVector reduced_axes(std::string_view who, std::span<const int64_t> shape, const std::optional<Shape>& axes) {
  const auto rank = static_cast<int64_t>(shape.size());
  DimVector reduced(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) reduced[i] = axes ? 0 : 1;
  if (!axes) return reduced;
  for (const int64_t axis : *axes) {
    if (axis < -rank || axis >= rank) {
      throw Error(std::string(who) + ": axis " + std::to_string(axis) + " is out of range for shape " +
                  format_shape(shape) + " of rank " + std::to_string(rank) + " (axes go from " +
                  std::to_string(-rank) + " to " + std::to_string(rank - 1) + ")");
    }
    const auto dim = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    if (reduced[dim] != 0) {
      throw Error(std::string(who) + ": axis " + std::to_string(axis) + " of shape " + format_shape(shape) +
                  " is listed twice (as axis " + std::to_string(dim) + ")");
    }
    reduced[dim] = 1;
  }
  return reduced;
}

DimVector reduced_dims(std::span<const int64_t> shape, std::span<const int64_t> reduced, bool keepdims) {
  Shape out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (reduced[i] == 0) {
      out.push_back(shape[i]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

}  // namespace sqdiff::detail

namespace sqdiff {

Shape reduced_shape(const Shape& shape, const std::optional<Shape>& axes, bool keepdims) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw Error("reduced_shape: dimension " + std::to_string(i) + " of shape " + detail::format_shape(shape) +
                  " is negative");
    }
  }
  const detail::DimVector reduced = detail::reduced_axes("reduced_shape", shape, axes);
  return detail::reduced_dims(shape, reduced, keepdims).to_vector();
}

}  // namespace sqdiff
