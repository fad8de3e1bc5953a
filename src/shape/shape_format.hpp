// Text forms used in error messages: shapes as "[3,5,6]", modes as "(numpy)",
// a partial state's words as "0x0000000000000000".
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "sqdiff/broadcast.hpp"

namespace sqdiff::detail {

std::string format_shape(std::span<const int64_t> shape);

// "(none)", "(numpy)" or "(pdpd, axis 1)".
std::string format_mode(const Broadcast& mode);

// "0x%016x", for messages naming a state's words.
std::string hex_word(uint64_t word);

}  // namespace sqdiff::detail
