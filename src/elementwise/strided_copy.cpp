#include "elementwise/strided_copy.hpp"

#include <cstring>

#include "kernels/kernel_table.hpp"

namespace sqdiff::detail {
namespace {

template <std::size_t kSize>
void scatter_sized(const std::byte* from, std::byte* to, int64_t stride, std::size_t n) {
  const auto step = stride * static_cast<int64_t>(kSize);
  for (std::size_t i = 0; i < n; ++i) std::memcpy(to + static_cast<int64_t>(i) * step, from + i * kSize, kSize);
}

}  // namespace

void scatter(const std::byte* from, std::byte* to, int64_t stride, std::size_t n, std::size_t element_size) {
  switch (element_size) {
    case 1: return scatter_sized<1>(from, to, stride, n);
    case 2: return scatter_sized<2>(from, to, stride, n);
    case 4: return scatter_sized<4>(from, to, stride, n);
    default: return scatter_sized<8>(from, to, stride, n);
  }
}

std::vector<std::byte> dense_copy(const CheckedInput& input, std::size_t element_size) {
  int64_t count = 1;
  for (const int64_t dim : input.shape) count *= dim;
  std::vector<std::byte> copy(static_cast<std::size_t>(count) * element_size);
  if (count == 0) return copy;
  const std::size_t rank = input.shape.size();
  if (rank == 0) {
    std::memcpy(copy.data(), input.data, element_size);
    return copy;
  }
  // Walk the outer dims with an odometer; gather each innermost row.
  const GatherKernel gather_row = kernel_table().gather.for_size(element_size);
  std::vector<int64_t> index(rank, 0);
  const auto row = static_cast<std::size_t>(input.shape[rank - 1]);
  const auto row_stride = input.strides[rank - 1];
  std::byte* to = copy.data();
  for (int64_t done = 0; done < count; done += input.shape[rank - 1]) {
    int64_t offset = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) offset += index[d] * input.strides[d];
    gather_row(input.data + offset * static_cast<int64_t>(element_size), row_stride, to, row);
    to += row * element_size;
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < input.shape[d]) break;
      index[d] = 0;
    }
  }
  return copy;
}

}  // namespace sqdiff::detail
