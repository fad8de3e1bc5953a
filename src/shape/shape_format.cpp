#include "shape/shape_format.hpp"

#include <cstdio>

namespace sqdiff::detail {

std::string format_shape(std::span<const int64_t> shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += ',';
    text += std::to_string(shape[i]);
  }
  text += ']';
  return text;
}

std::string format_mode(const Broadcast& mode) {
  switch (mode.kind) {
    case BroadcastKind::none:
      return "(none)";
    case BroadcastKind::numpy:
      return "(numpy)";
    case BroadcastKind::pdpd:
      return "(pdpd, axis " + std::to_string(mode.axis) + ")";
  }
  return "(invalid mode " + std::to_string(static_cast<int>(mode.kind)) + ")";
}

std::string hex_word(uint64_t word) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(word));
  return text;
}

}  // namespace sqdiff::detail
