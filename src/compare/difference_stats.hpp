// What a comparison (sqdiff/compare.hpp) reports besides the sums, gathered in one pass over
// each chunk of the broadcast shape: NaN and inf counts and first positions in
// each input, how many pairs differ, the largest |a - b| over all pairs and
// over the pairs where both are finite, and the tolerance gate's count of
// pairs out of tolerance with its worst one.
//
// Speed: each row is taken in blocks of a few hundred pairs, widened to f64
// (floats) or 64-bit integers, and summarised by a loop without branches,
// written for the compiler's vectorizer (on x86-64 it is compiled for AVX2,
// SSE4.2 and the baseline, picked at run time). Positions are looked for only
// in a block whose summary says it holds a new maximum or a first NaN/inf.
#pragma once

#include <cstdint>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

struct SquareSums;

// NumPy's allclose rule per pair: |a - b| <= atol + rtol * |b|, where both are
// finite; where either is not, the pair is close when a == b (infinities of
// one sign), or when both are NaN and equal_nan is set. Evaluated in f64:
// |a - b| from the exact inputs (integers: the exact difference, rounded once
// to f64), then atol + rtol * |b| as NumPy computes it in f64, without a
// fused multiply-add.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  bool equal_nan = false;
};

// The largest of some per-pair quantity and the first row-major position of
// the broadcast shape where it occurs (-1: no pair had one). `key` orders the
// values: for floats the bits of the f64 |a - b| (a NaN above +inf), for
// integers the exact |a - b|.
struct Maximum {
  int64_t position = -1;
  uint64_t key = 0;
  double b_magnitude = 0;  // |b| at `position`, for the relative error (tolerance only)

  // Keeps the larger key, and among equal keys the first position.
  void offer(const Maximum& other);
  // The value for a float dtype: the f64 |a - b|.
  double as_double() const;
};

struct DifferenceStats {
  // Counted at the compared positions (each position of the broadcast shape),
  // so a broadcast input's element counts as often as it is compared.
  int64_t a_nan = 0;
  int64_t b_nan = 0;
  int64_t a_inf = 0;
  int64_t b_inf = 0;
  // The first position of each, -1 when none.
  int64_t a_first_nan = -1;
  int64_t b_first_nan = -1;
  int64_t a_first_inf = -1;
  int64_t b_first_inf = -1;
  // Pairs that are not equal; two NaNs count as equal, +0 equals -0.
  int64_t differing = 0;
  // The largest |a - b| where it is not NaN (an equal pair gives 0, so inf vs
  // inf of one sign too). Floats: |a - b| computed in f64 (exact for f16,
  // bf16 and f32 unless far apart in magnitude; rounded once).
  Maximum max_abs;
  // Pairs where a and b are both finite, and the largest |a - b| over them.
  int64_t finite_pairs = 0;
  Maximum finite_max_abs;
  // Pairs out of tolerance (Tolerance above), and the one with the largest
  // |a - b| (a NaN difference ranks above every number).
  int64_t out_of_tolerance = 0;
  Maximum worst;

  // Adds `other`, gathered over other positions; the result does not depend
  // on the order of merging.
  void merge(const DifferenceStats& other);
};

// The statistics of one chunk: `shape` (the chunk's shape) walked row-major
// from `a` and `b` with strides in elements (0 on broadcast dims); `first` is
// the row-major position of the chunk's first element in the broadcast shape.
DifferenceStats difference_stats(DType dtype, const void* a, const Shape& a_strides, const void* b,
                                 const Shape& b_strides, const Shape& shape, int64_t first,
                                 const Tolerance& tolerance);

// difference_stats, and the chunk's sum of (a - b)^2 added to `squares` in
// the same pass over the pairs (kernels/fused_compare.hpp) when it can: a
// float32 chunk whose rows are contiguous in both inputs and whose pairs are
// all finite, the common case, where the two passes had read every pair
// twice. Returns whether it did; when not, the statistics are still whole
// but `squares` holds garbage, and the caller sums the chunk apart.
bool difference_stats_and_squares(DType dtype, const void* a, const Shape& a_strides, const void* b,
                                  const Shape& b_strides, const Shape& shape, int64_t first,
                                  const Tolerance& tolerance, DifferenceStats& stats,
                                  SquareSums& squares);

}  // namespace sqdiff::detail
