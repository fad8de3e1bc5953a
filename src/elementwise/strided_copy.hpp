// Element copies between strided and packed memory, by element size. Packing
// strided memory is the kernel table's gather kernels (GatherKernels); here
// the unpacking of a strided output, and the snapshot of an input that
// overlaps the output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shape/validate.hpp"

namespace sqdiff::detail {

// to[i * stride] = from[i] for i < n.
void scatter(const std::byte* from, std::byte* to, int64_t stride, std::size_t n, std::size_t element_size);

// A dense row-major copy of the input's elements (its own shape, not broadcast).
std::vector<std::byte> dense_copy(const CheckedInput& input, std::size_t element_size);

}  // namespace sqdiff::detail
