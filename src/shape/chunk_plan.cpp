#include "sqdiff/chunk_plan.hpp"

#include <algorithm>
#include <string>

#include "shape/shape_format.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff {
namespace {

int64_t product(const Shape& shape, std::size_t from, std::size_t to) {
  int64_t n = 1;
  for (std::size_t i = from; i < to; ++i) n *= shape[i];
  return n;
}

// NumPy's rule: the product of the non-zero dims fits in int64 (also when a
// 0 dim makes the shape empty), so every product the plan takes fits too.
void check_element_count(const Shape& shape) {
  int64_t nonzero_product = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim > 0 && __builtin_mul_overflow(nonzero_product, dim, &nonzero_product))) {
      throw Error("ChunkPlan: shape " + detail::format_shape(shape) +
                  (dim < 0 ? " has a negative dim" : " has more elements than int64 holds"));
    }
  }
}

}  // namespace

ChunkPlan::ChunkPlan(const Shape& shape, int64_t max_elements) : shape_(shape) {
  check_element_count(shape);
  const std::size_t rank = shape.size();
  const int64_t total = product(shape, 0, rank);
  if (total == 0) return;  // no chunks
  if (rank == 0) {         // a scalar: one chunk of one element
    chunk_count_ = 1;
    return;
  }
  max_elements = std::max<int64_t>(1, max_elements);
  // The outermost dim whose slices (one index of it) fit in a chunk.
  std::size_t d = 0;
  while (d + 1 < rank && product(shape, d + 1, rank) > max_elements) ++d;
  split_dim_ = d;
  slice_ = product(shape, d + 1, rank);
  block_ = std::max<int64_t>(1, max_elements / slice_);
  blocks_ = (shape[d] + block_ - 1) / block_;
  chunk_count_ = product(shape, 0, d) * blocks_;
}

Chunk ChunkPlan::chunk(int64_t k) const {
  const std::size_t rank = shape_.size();
  Chunk chunk;
  chunk.start.assign(rank, 0);
  if (rank == 0) {
    chunk.elements = 1;
    return chunk;
  }
  int64_t prefix = k / blocks_;
  const int64_t row = (k % blocks_) * block_;
  for (std::size_t i = split_dim_; i-- > 0;) {  // the prefix's multi-index, last dim fastest
    chunk.start[i] = prefix % shape_[i];
    prefix /= shape_[i];
  }
  chunk.start[split_dim_] = row;
  chunk.shape.assign(shape_.begin() + static_cast<std::ptrdiff_t>(split_dim_), shape_.end());
  chunk.shape[0] = std::min(block_, shape_[split_dim_] - row);
  chunk.elements = chunk.shape[0] * slice_;
  int64_t stride = 1;
  for (std::size_t i = rank; i-- > 0;) {
    chunk.first += chunk.start[i] * stride;
    stride *= shape_[i];
  }
  return chunk;
}

}  // namespace sqdiff
