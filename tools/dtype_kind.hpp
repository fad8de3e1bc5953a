// Whether an element type is one of the integers (the rest are the four
// float types), for the tools' choices: exact sums, PSNR's default peak,
// how a value is printed.
#pragma once

#include "sqdiff/dtype.hpp"

namespace sqdiff::tools {

inline bool is_integer(sqdiff::DType dtype) {
  using sqdiff::DType;
  return dtype != DType::f16 && dtype != DType::bf16 && dtype != DType::f32 && dtype != DType::f64;
}

}  // namespace sqdiff::tools
