// A comparison's per-pair statistics and its double-double sum of squares
// of float32 pairs in one pass (compare/difference_stats.cpp): the loads, the
// widening and the difference serve both, where two passes (the statistics
// loop, then SquareRowDouble) had taken 43% and 38% of the command's time.
// Only blocks whose pairs are all finite: the first block holding a NaN or an
// inf stops the pass, and the caller takes it and the rest of its data down
// the separate paths.
#pragma once

#include <cstdint>

#include "kernels/reduce_table.hpp"

namespace sqdiff::detail {

// The statistics of one block of finite pairs, |a - b| the f64 difference of
// the widened inputs (rounded once).
struct FiniteBlockStats {
  int64_t differing = 0;  // pairs with a != b (+0 equals -0)
  int64_t out = 0;        // pairs out of tolerance: |a - b| > atol + rtol * |b|, in two roundings (no FMA)
  double max_abs = 0;     // the largest |a - b|
  double worst = 0;       // the largest |a - b| of the pairs out of tolerance, 0 when there is none
};

// Takes the n pairs a[i], b[i] in blocks of `block` pairs (the last one may
// be shorter; `block` a multiple of 16), writing each block's statistics to
// stats[k] and adding (a[i] - b[i])^2 to `sums` in the structure of
// SquareRowDouble, so that bound_double(sums, kChain) bounds it (terms within
// 2^-102, lanes chaining at most kChain terms between folds). atol and rtol
// are finite and >= 0. Returns how many blocks were taken: all of them, or
// those before the first block with a NaN or an inf in a or b, and then
// `sums` holds garbage. Runs with the IEEE defaults (fp_environment.hpp).
int64_t fused_f32_blocks(const float* a, const float* b, int64_t n, int64_t block, double atol, double rtol,
                         SquareSums* sums, FiniteBlockStats* stats);

}  // namespace sqdiff::detail
