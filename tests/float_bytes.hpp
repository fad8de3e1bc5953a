// A value stored as an element of a float type in a raw byte buffer, rounded
// to that type as a conversion from float (f16, bf16, f32) or stored as is (f64).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff_test {

inline void store_float(std::vector<unsigned char>& bytes, sqdiff::DType type, int64_t i, double v) {
  const auto at = static_cast<std::size_t>(i) * sqdiff::dtype_size(type);
  switch (type) {
    case sqdiff::DType::f16: {
      const uint16_t bits = sqdiff::float16(static_cast<float>(v)).bits();
      std::memcpy(&bytes[at], &bits, 2);
      break;
    }
    case sqdiff::DType::bf16: {
      const uint16_t bits = sqdiff::bfloat16(static_cast<float>(v)).bits();
      std::memcpy(&bytes[at], &bits, 2);
      break;
    }
    case sqdiff::DType::f32: {
      const auto f = static_cast<float>(v);
      std::memcpy(&bytes[at], &f, 4);
      break;
    }
    default: std::memcpy(&bytes[at], &v, 8);
  }
}

}  // namespace sqdiff_test
