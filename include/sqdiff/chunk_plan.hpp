// Splitting a shape, walked in row-major order, into chunks of bounded size:
// what lets a comparison (compare.hpp) or a reduction into partial states
// (partial_sums.hpp, bounded_partial_sums.hpp) stream through inputs larger
// than memory, and `sqdiff compare` and `sqdiff run --reduce` do so.
// Each chunk is a box of consecutive row-major elements: one index of the
// dims before the split dim, a block of the split dim, and all of the dims
// after it, so a chunk's elements follow the previous chunk's.
#pragma once

#include <cstdint>

#include "sqdiff/broadcast.hpp"

namespace sqdiff {

struct Chunk {
  Shape start;  // the multi-index of the chunk's first element (full rank)
  Shape shape;  // the chunk's shape over dims split_dim.. (the dims before it are one index)
  int64_t first = 0;    // row-major position of the first element in the whole shape
  int64_t elements = 0;
};

class ChunkPlan {
 public:
  // Throws Error for a negative dim or an element count beyond int64. No
  // chunk holds more than max(1, max_elements) elements: when even one index
  // of the innermost dim's outer dims is too large, the innermost dim is split.
  ChunkPlan(const Shape& shape, int64_t max_elements);

  int64_t chunk_count() const { return chunk_count_; }
  std::size_t split_dim() const { return split_dim_; }  // chunks' shapes cover dims split_dim..rank-1
  Chunk chunk(int64_t k) const;                         // 0 <= k < chunk_count()

 private:
  Shape shape_;
  std::size_t split_dim_ = 0;
  int64_t slice_ = 1;   // elements of one index of the split dim
  int64_t block_ = 1;   // indices of the split dim per chunk
  int64_t blocks_ = 1;  // chunks per index of the dims before the split dim
  int64_t chunk_count_ = 0;
};

}  // namespace sqdiff
