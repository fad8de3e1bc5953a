// sqdiff::Error: the one exception type the library throws for bad input.
#pragma once

#include <stdexcept>

namespace sqdiff {

// Thrown for every invalid call (types, shapes, broadcast, strides, aliasing).
// The message names the operation, the shapes, the mode and what failed.
// When it is thrown, nothing has been written to the output.
class Error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace sqdiff
