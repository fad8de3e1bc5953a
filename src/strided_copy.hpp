// Element copies between strided and packed memory, by element size. Used to
// pack strided rows a block at a time and to snapshot an input that overlaps
// the output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "validate.hpp"

namespace sqdiff::detail {

// to[i] = from[i * stride] for i < n (strides in elements; 0 repeats one element).
void gather(const std::byte* from, int64_t stride, std::byte* to, std::size_t n, std::size_t element_size);

// to[i * stride] = from[i] for i < n.
void scatter(const std::byte* from, std::byte* to, int64_t stride, std::size_t n, std::size_t element_size);

// A dense row-major copy of the input's elements (its own shape, not broadcast).
std::vector<std::byte> dense_copy(const CheckedInput& input, std::size_t element_size);

}  // namespace sqdiff::detail
