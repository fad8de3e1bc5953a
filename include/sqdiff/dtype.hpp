// Element types: the twelve numeric types of SPEC section 2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sqdiff {

enum class DType : uint8_t { f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64 };

inline constexpr int kDTypeCount = 12;

// Short lower-case name ("f32", "bf16", ...); "dtype(N)" style names are not
// returned: an out-of-range value gives "invalid".
std::string_view dtype_name(DType dtype) noexcept;

// Bytes per element; 0 for an out-of-range value.
std::size_t dtype_size(DType dtype) noexcept;

// True for the twelve enumerators, false for any other value cast to DType.
constexpr bool is_valid_dtype(DType dtype) noexcept {
  return static_cast<uint8_t>(dtype) < kDTypeCount;
}

}  // namespace sqdiff
