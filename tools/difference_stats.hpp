// What `sqdiff compare` reports besides the sums: the largest |a - b| and
// where it is, how many pairs differ, and the NaNs and infinities of each
// input, gathered chunk by chunk over the broadcast shape.
#pragma once

#include <cstdint>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::tools {

struct DifferenceStats {
  // Counted at the compared positions (each position of the broadcast shape),
  // so a broadcast input's element counts as often as it is compared.
  int64_t a_nan = 0;
  int64_t b_nan = 0;
  int64_t a_inf = 0;
  int64_t b_inf = 0;
  // Pairs that are not equal; two NaNs count as equal, +0 equals -0.
  int64_t differing = 0;
  // The largest |a - b| over the positions where it is not NaN (an equal pair
  // gives 0, so inf vs inf of one sign too), and the first row-major position
  // of the broadcast shape where it occurs; -1 when no position has one.
  // Floats: |a - b| computed in f64 (exact for f16, bf16 and f32 unless far
  // apart in magnitude; rounded once). Integers: exact, in max_integer.
  int64_t max_position = -1;
  double max_float = 0;
  uint64_t max_integer = 0;

  // Adds `other`, gathered over other positions. The result does not depend
  // on the order of merging: among equal maxima the first position wins.
  void merge(const DifferenceStats& other);
};

// The statistics of one chunk: `shape` (the chunk's shape) walked row-major
// from `a` and `b` with strides in elements (0 on broadcast dims); `first` is
// the row-major position of the chunk's first element in the broadcast shape.
DifferenceStats difference_stats(sqdiff::DType dtype, const void* a, const sqdiff::Shape& a_strides, const void* b,
                                 const sqdiff::Shape& b_strides, const sqdiff::Shape& shape, int64_t first);

}  // namespace sqdiff::tools
