// 128-bit integers (a GCC and Clang extension): exact products of two 64-bit
// mantissas or integer differences, and the limbs' carries.
#pragma once

namespace sqdiff::detail {

__extension__ typedef __int128 int128_t;
__extension__ typedef unsigned __int128 uint128_t;

}  // namespace sqdiff::detail
