// Single elements read and written by dtype, for the exact paths (the fast
// paths read whole vectors in the kernels).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "reduce/int128.hpp"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/float16.hpp"

namespace sqdiff::detail {

template <typename T>
T load_as(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// A float element, exactly (every f16, bf16 and f32 is a double).
inline double load_float(const std::byte* p, DType dtype) {
  switch (dtype) {
    case DType::f16: return static_cast<float>(float16::from_bits(load_as<uint16_t>(p)));
    case DType::bf16: return static_cast<float>(bfloat16::from_bits(load_as<uint16_t>(p)));
    case DType::f32: return load_as<float>(p);
    default: return load_as<double>(p);
  }
}

// An integer element, exactly.
inline int128_t load_integer(const std::byte* p, DType dtype) {
  switch (dtype) {
    case DType::i8: return load_as<int8_t>(p);
    case DType::i16: return load_as<int16_t>(p);
    case DType::i32: return load_as<int32_t>(p);
    case DType::i64: return load_as<int64_t>(p);
    case DType::u8: return load_as<uint8_t>(p);
    case DType::u16: return load_as<uint16_t>(p);
    case DType::u32: return load_as<uint32_t>(p);
    default: return load_as<uint64_t>(p);
  }
}

// The low dtype_size bytes of `bits` (an output element's bit pattern).
inline void store_bits(std::byte* p, DType dtype, uint64_t bits) {
  switch (dtype_size(dtype)) {
    case 2: {
      const auto v = static_cast<uint16_t>(bits);
      std::memcpy(p, &v, 2);
      break;
    }
    case 4: {
      const auto v = static_cast<uint32_t>(bits);
      std::memcpy(p, &v, 4);
      break;
    }
    default: std::memcpy(p, &bits, 8);
  }
}

inline bool is_float_type(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64; }

}  // namespace sqdiff::detail
