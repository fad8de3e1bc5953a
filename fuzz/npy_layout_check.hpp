// The properties of an accepted .npy array's layout that the .npy and .npz
// fuzzers both check, computed here independently in 128-bit arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "npy.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff_fuzz {

inline std::string shape_text(const sqdiff::Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

inline std::string array_text(const sqdiff::tools::NpyArray& array) {
  return shape_text(array.shape()) + " " + std::string(sqdiff::dtype_name(array.dtype()));
}

// Checks no negative dim, the element count counted as NumPy counts it (the
// product of the non-zero dims times the item size must fit in int64), and the
// dense C or Fortran strides (dims of 0 count as 1, as in NumPy); returns the
// element count. `what` names the array in the messages.
inline int64_t check_npy_layout(const sqdiff::tools::NpyArray& array, const std::string& what) {
  const sqdiff::Shape& shape = array.shape();
  const sqdiff::Shape& strides = array.strides();
  check(strides.size() == shape.size(), what + ": strides of another rank");
  check(shape.size() <= sqdiff::tools::kMaxNpyRank, what + ": more dims than NumPy reads");
  const auto item = static_cast<__int128>(sqdiff::dtype_size(array.dtype()));
  __int128 nonzero_product = item;
  bool empty = false;
  for (const int64_t d : shape) {
    check(d >= 0, what + ": negative dim");
    if (d == 0) {
      empty = true;
    } else {
      nonzero_product *= d;
      check(nonzero_product <= INT64_MAX, what + ": its byte count overflows int64");
    }
  }
  const int64_t count = empty ? 0 : static_cast<int64_t>(nonzero_product / item);
  check(array.element_count() == count, what + ": element_count() is " + std::to_string(array.element_count()));
  __int128 step = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::size_t i = array.fortran_order() ? k : shape.size() - 1 - k;
    check(strides[i] == step, what + ": stride " + std::to_string(i) + " is " + std::to_string(strides[i]) +
                                  ", the dense stride is " + std::to_string(static_cast<int64_t>(step)));
    step *= shape[i] > 0 ? shape[i] : 1;
  }
  if (count > 0) check(array.data() != nullptr, what + ": null data");
  return count;
}

}  // namespace sqdiff_fuzz
