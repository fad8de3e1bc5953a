// Names and sizes of the twelve types (sqdiff/dtype.hpp): beneath every floor,
// since validation, planning and error text all ask for them.
#include "sqdiff/dtype.hpp"

#include <array>

namespace sqdiff {
namespace {

struct DTypeInfo {
  std::string_view name;
  std::size_t size;
};

// Indexed by the enumerator's value, in declaration order.
constexpr std::array<DTypeInfo, kDTypeCount> kDTypeInfo = {{
    {"f16", 2}, {"bf16", 2}, {"f32", 4}, {"f64", 8}, {"i8", 1}, {"i16", 2},
    {"i32", 4}, {"i64", 8}, {"u8", 1}, {"u16", 2}, {"u32", 4}, {"u64", 8},
}};

}  // namespace

std::string_view dtype_name(DType dtype) noexcept {
  return is_valid_dtype(dtype) ? kDTypeInfo[static_cast<std::size_t>(dtype)].name : "invalid";
}

std::size_t dtype_size(DType dtype) noexcept {
  return is_valid_dtype(dtype) ? kDTypeInfo[static_cast<std::size_t>(dtype)].size : 0;
}

}  // namespace sqdiff
