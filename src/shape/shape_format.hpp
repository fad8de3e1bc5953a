// Text forms used in error messages: shapes as "[3,5,6]", modes as "(numpy)".
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "sqdiff/broadcast.hpp"

namespace sqdiff::detail {

std::string format_shape(std::span<const int64_t> shape);

// "(none)", "(numpy)" or "(pdpd, axis 1)".
std::string format_mode(const Broadcast& mode);

}  // namespace sqdiff::detail
